#!/usr/bin/env bash
# The main job, embedded default: one gleamd with every role on this host,
# and a CUDA program run through it with gleam-run. On a machine without a
# GPU the node says so, the program gets "no CUDA device", and this script
# says what to do.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${GLEAM_BUILD:-build}
program=${1:-$build/tests/programs/pipeline}
port=${GLEAM_DEMO_PORT:-4750}
work=$(mktemp -d /tmp/gleam-demo-XXXXXX)
sed -e "s|^port = .*|port = $port|" -e "s|^dir = .*|dir = \"$work/cache\"|" \
  deploy/examples/all-in-one.conf > "$work/node.conf"

"$build/bin/gleamd" --config-file="$work/node.conf" 2> "$work/gleamd.log" &
gleamd_pid=$!
trap 'kill -TERM $gleamd_pid 2>/dev/null; wait $gleamd_pid 2>/dev/null' EXIT
for _ in $(seq 100); do
  grep -q " up on port" "$work/gleamd.log" 2>/dev/null && break
  kill -0 $gleamd_pid 2>/dev/null || break
  sleep 0.1
done
echo "== gleamd (embedded: scheduler + gpu_server + cache_shard on port $port)"
cat "$work/gleamd.log"
echo "== cluster"
"$build/bin/gleam-console" --scheduler "127.0.0.1:$port" -c nodes
echo "== $program through gleam-run"
GLEAM_SCHEDULER="127.0.0.1:$port" "$build/bin/gleam-run" -- "$program"
rc=$?
if grep -q "no GPU to serve" "$work/gleamd.log"; then
  cat <<MSG
== This machine has no GPU, so the embedded node serves none (see above).
   To run CUDA programs from here on a GPU elsewhere on the LAN:
     on the GPU host:  gleamd --config-file=deploy/examples/all-in-one.conf
                       (set advertise = "<its LAN address>")
     here:             GLEAM_SCHEDULER=<gpu-host>:4750 build/bin/gleam-run -- <program>
MSG
  exit 0
fi
exit $rc
