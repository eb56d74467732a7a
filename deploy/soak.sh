#!/usr/bin/env bash
# Bounded soak of one GPU server (issue #10): a gleamd with every role and
# CLIENTS concurrent clients, each looping the CUDA programs of
# tests/programs through gleam-run for MINUTES, each run compared with the
# program's local output. Afterwards, with every session closed, gleamd's
# RSS (/proc/PID/status VmRSS) and the GPU's memory.used must be back within
# a margin of their values before the first client.
#   deploy/soak.sh BUNDLE_DIR [MINUTES=5] [CLIENTS=16] [OUT_DIR]
# Margins (env): GLEAM_SOAK_RSS_MARGIN_MIB (default 64), GLEAM_SOAK_GPU_MARGIN_MIB
# (default 64). Exit 0 only when no run failed and nothing leaked.
set -uo pipefail
bundle=$(cd "${1:?usage: deploy/soak.sh BUNDLE_DIR [MINUTES] [CLIENTS] [OUT_DIR]}" && pwd)
minutes=${2:-5}
clients=${3:-16}
out=${4:-/tmp/gleam-soak}
rss_margin=${GLEAM_SOAK_RSS_MARGIN_MIB:-64}
gpu_margin=${GLEAM_SOAK_GPU_MARGIN_MIB:-64}
mkdir -p "$out"
cuda_lib=/usr/local/cuda/lib64
port=${GLEAM_SOAK_PORT:-4791}
gpu_index=${GLEAM_SOAK_GPU:-0}

gpu_used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "$gpu_index" | tr -d ' '; }
rss_mib() { awk '/VmRSS/{printf "%d", $2/1024}' "/proc/$1/status"; }

# Programs whose output is deterministic; the local output is the reference.
mapfile -t programs < <(grep -v -e '^$' -e fork_child "$bundle/tests/programs/programs.txt")
[ ${#programs[@]} -gt 0 ] || { echo "soak: no programs in $bundle/tests/programs/programs.txt"; exit 2; }
for prog in "${programs[@]}"; do
  name=$(basename "$prog")
  LD_LIBRARY_PATH=$cuda_lib "$bundle/$prog" > "$out/$name.ref" 2>&1 \
    || { echo "soak: $name fails locally; fix that first"; exit 2; }
done

cat > "$out/node.conf" <<CONF
[node]
id = "soak"
roles = ["all"]
port = $port
[gpu_server]
devices = ["$gpu_index"]
session-grace = 2s
[cache]
dir = "$out/cache"
CONF
rm -rf "$out/cache"
gpu_before_server=$(gpu_used_mib)
"$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
gleamd_pid=$!
trap 'kill $gleamd_pid 2>/dev/null' EXIT
sleep 3
kill -0 $gleamd_pid 2>/dev/null || { echo "soak: gleamd did not start"; tail "$out/gleamd.log"; exit 2; }
# Warm-up: one pass of every program by CLIENTS concurrent clients, so that
# the baseline includes the context, loaded kernels, the weight cache's
# entries and the allocator's steady state at the soak's concurrency (a
# sequential pass sizes per-thread heap arenas for one session at a time).
warm_pass() {
  for prog in "${programs[@]}"; do
    GLEAM_SERVER=127.0.0.1:$port "$bundle/bin/gleam-run" -- "$bundle/$prog" > /dev/null 2>&1
  done
}
warm_pids=()
for i in $(seq 1 "$clients"); do warm_pass & warm_pids+=($!); done
wait "${warm_pids[@]}"
sleep 5
rss_base=$(rss_mib $gleamd_pid)
gpu_base=$(gpu_used_mib)
echo "soak: $clients clients x $minutes min, ${#programs[@]} programs; baseline gleamd RSS ${rss_base} MiB, GPU used ${gpu_base} MiB (${gpu_before_server} MiB before gleamd)"
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c "cache stats" 2>&1 | sed 's/^/soak: baseline /'

deadline=$(( $(date +%s) + minutes * 60 ))
client_loop() {
  local id=$1 runs=0 fails=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    for prog in "${programs[@]}"; do
      name=$(basename "$prog")
      # GLEAM_CHECK_NO_DRIVER: a client that loaded the real driver exits 97.
      GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port timeout 300 \
        "$bundle/bin/gleam-run" -- "$bundle/$prog" > "$out/c$id.$name.out" 2>&1
      rc=$?
      runs=$((runs+1))
      if [ $rc -ne 0 ] || ! cmp -s "$out/c$id.$name.out" "$out/$name.ref"; then
        fails=$((fails+1))
        cp "$out/c$id.$name.out" "$out/FAILED.c$id.$runs.$name"
        echo "client $id: $name failed (rc=$rc)" >&2
      fi
      [ "$(date +%s)" -lt "$deadline" ] || break
    done
  done
  echo "$runs $fails" > "$out/c$id.result"
}
peak_rss=0
client_pids=()
for i in $(seq 1 "$clients"); do client_loop "$i" & client_pids+=($!); done
running() { local p; for p in "${client_pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while running && [ "$(date +%s)" -lt $((deadline + 330)) ]; do
  r=$(rss_mib $gleamd_pid 2>/dev/null || echo 0)
  [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
  sleep 2
done
wait "${client_pids[@]}"
runs=0; fails=0
for i in $(seq 1 "$clients"); do
  read -r r f < "$out/c$i.result" || { r=0; f=1; }
  runs=$((runs+r)); fails=$((fails+f))
done
# Every client has exited; its session closes at once (or after the grace).
sleep 5
alive=1; kill -0 $gleamd_pid 2>/dev/null || alive=0
rss_after=$(rss_mib $gleamd_pid 2>/dev/null || echo -1)
gpu_after=$(gpu_used_mib)
sessions=$("$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c sessions 2>&1 | tail -1)
echo "soak: runs $runs, failed $fails, clients held $clients"
echo "soak: gleamd RSS ${rss_base} -> peak ${peak_rss} -> after ${rss_after} MiB (margin ${rss_margin})"
echo "soak: GPU used ${gpu_base} -> after ${gpu_after} MiB (margin ${gpu_margin})"
echo "soak: sessions after: $sessions"
# Where the RSS lies, and what the weight cache holds (its host tier is
# memory the server keeps on purpose).
[ $alive -eq 1 ] && grep -E "^(Rss|Anonymous|Shared|Private)" "/proc/$gleamd_pid/smaps_rollup" 2>/dev/null \
  | awk '{printf "soak: after: %s %d MiB\n", $1, $2/1024}'
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c "cache stats" 2>&1 | sed 's/^/soak: /'
ok=1
[ $alive -eq 1 ] || { echo "soak: FAIL gleamd died"; ok=0; }
[ $fails -eq 0 ] || { echo "soak: FAIL $fails failed runs (see $out/FAILED.*)"; ok=0; }
[ $runs -ge "$clients" ] || { echo "soak: FAIL only $runs runs"; ok=0; }
[ $alive -eq 1 ] && [ $((rss_after - rss_base)) -gt "$rss_margin" ] && { echo "soak: FAIL gleamd RSS grew by $((rss_after - rss_base)) MiB"; ok=0; }
[ $((gpu_after - gpu_base)) -gt "$gpu_margin" ] && { echo "soak: FAIL GPU memory grew by $((gpu_after - gpu_base)) MiB"; ok=0; }
kill -TERM $gleamd_pid 2>/dev/null; wait $gleamd_pid 2>/dev/null
[ $ok -eq 1 ] && echo "soak: PASS" && exit 0
exit 1
