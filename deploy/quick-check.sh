#!/usr/bin/env bash
# A short GPU-machine check for a tight budget: the named CUDA programs of
# tests/programs locally and through Gleam (driver hidden from the client),
# compared byte for byte, then the named PyTorch operations of
# tests/programs/torch_ops.py the same way (deploy/torch-ops-check.sh).
#   deploy/quick-check.sh BUNDLE_DIR "PROGRAM ..." "TORCH_OP ..." [OUT_DIR]
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
programs=${2:-}
ops=${3:-}
out=${4:-/tmp/gleam-quick-check}
mkdir -p "$out"
port=4794
printf '[node]\nid = "quick-check"\nroles = ["all"]\nport = %s\n[cache]\ndir = "%s/cache"\n' \
  $port "$out" > "$out/node.conf"
"$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
gleamd_pid=$!
sleep 2
. "$(dirname "$0")/hide-driver.sh"
same=0; differ=0
for name in $programs; do
  p="$bundle/tests/programs/$name"
  "$p" > "$out/$name.local" 2>&1; lrc=$?
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port \
    '$bundle/bin/gleam-run' -- '$p'" > "$out/$name.gleam" 2>&1; grc=$?
  if [ $lrc -eq 0 ] && [ $grc -eq 0 ] && cmp -s "$out/$name.local" "$out/$name.gleam"; then
    same=$((same+1)); echo "same     $name: $(grep -m1 checksum "$out/$name.local")"
  else
    differ=$((differ+1)); echo "DIFFERS  $name (local rc=$lrc, gleam rc=$grc)"
    diff "$out/$name.local" "$out/$name.gleam" | head -8
  fi
done
kill -TERM $gleamd_pid; wait $gleamd_pid
echo "programs: $same identical, $differ differ"
[ -n "$ops" ] && "$(dirname "$0")/torch-ops-check.sh" "$bundle" "$out/ops" $ops
