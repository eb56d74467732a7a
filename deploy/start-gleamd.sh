# Sourced by the GPU-machine check scripts. Defines start_gleamd ID: writes
# $out/node.conf (one node with every role on 127.0.0.1:$port, its weight
# cache in $out/cache), starts $bundle/bin/gleamd with it (log in
# $out/gleamd.log), sets $gleamd_pid and gives it 2 s to listen.
# GLEAM_ISOLATION=process|shared sets [gpu_server] isolation (default: the
# config's default).
start_gleamd() {
  cat > "$out/node.conf" <<CONF
[node]
id = "$1"
roles = ["all"]
port = $port
[cache]
dir = "$out/cache"
CONF
  if [ -n "${GLEAM_ISOLATION:-}" ]; then
    printf '[gpu_server]\nisolation = "%s"\n' "$GLEAM_ISOLATION" >> "$out/node.conf"
  fi
  "$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
  gleamd_pid=$!
  sleep 2
}
