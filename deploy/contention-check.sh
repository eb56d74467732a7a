#!/usr/bin/env bash
# The falsifier of the contention model, on the GPU machine: 1, 2 and 3
# identical concurrent copies of a kernel-heavy program on ONE GPU through
# Gleam; measured latency against the scheduler's model with gamma fitted.
#   - rounds of 1 copy teach the scheduler the task's solo profile,
#   - rounds of 2 concurrent copies are the data gamma is fitted on,
#   - rounds of 3 concurrent copies are held out: predicted before they run.
# The copies connect straight to the GPU server (GLEAM_SERVER), so the
# scheduler's queue cannot serialize them; the gpu_server still reports every
# session end to the scheduler, which learns from it as in production.
#   deploy/contention-check.sh BUNDLE_DIR [OUT_DIR]
# Knobs (env): ITERS=1000 INNER=200000 MB=256 (program size), SOLO=3 PAIRS=4
# TRIPLES=2 (rounds), PORT=4791.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:-/tmp/gleam-contention-check}
mkdir -p "$out"
iters=${ITERS:-1000}; inner=${INNER:-200000}; mb=${MB:-256}
solo=${SOLO:-3}; pairs=${PAIRS:-4}; triples=${TRIPLES:-2}
port=${PORT:-4791}
prog="$bundle/bench/contention"
[ -x "$prog" ] || { echo "no $prog: build gleam_bench_programs (nvcc) and bundle again"; exit 2; }
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat > "$out/node.conf" <<CONF
[node]
id = "contention-check"
roles = ["all"]
port = $port
heartbeat-interval = 200ms
[gpu_server]
devices = ["0"]
[cache]
dir = "$out/cache"
CONF
"$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
gleamd_pid=$!
trap 'kill $gleamd_pid 2>/dev/null; wait $gleamd_pid 2>/dev/null' EXIT
sleep 2
console() { "$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c "$1"; }
console gpus

# round N TAG: N concurrent copies; appends "N compute_s total_s" per copy.
round() {
  local n=$1 tag=$2 pids=()
  for i in $(seq 1 "$n"); do
    GLEAM_TASK=contention GLEAM_SERVER=127.0.0.1:$port \
      "$bundle/bin/gleam-run" -- "$prog" --mb "$mb" --iters "$iters" --inner "$inner" \
      > "$out/$tag.$i.log" 2>&1 &
    pids+=($!)
  done
  local ok=1
  for p in "${pids[@]}"; do wait "$p" || ok=0; done
  for i in $(seq 1 "$n"); do
    awk -v n="$n" '/^result compute_s/{c=$3} /^result total_s/{t=$3} END{if (c!="") print n, c, t}' \
      "$out/$tag.$i.log" >> "$out/measured.txt"
  done
  [ $ok -eq 1 ] || { echo "a copy failed in round $tag:"; tail -5 "$out/$tag".*.log; }
  sleep 1 # one heartbeat carries the session ends to the scheduler
}

: > "$out/measured.txt"
for r in $(seq 1 "$solo"); do round 1 "solo$r"; done
for r in $(seq 1 "$pairs"); do round 2 "pair$r"; done
console gamma | tee "$out/gamma.txt"
console "placement explain contention" | tee "$out/explain.txt"
# gamma of the GPU (the type name has spaces: count fields from the end).
gamma=$(awk '$(NF-5)=="gpu"{print $(NF-4); exit}' "$out/gamma.txt")
state=$(awk '$(NF-5)=="gpu"{print $(NF-3); exit}' "$out/gamma.txt")
solo_s=$(awk '/solo compute on/{print $(NF-1); exit}' "$out/explain.txt")
u=$(sed -n 's/.*occupancy gpu \([0-9.]*\).*/\1/p' "$out/explain.txt" | head -1)
for r in $(seq 1 "$triples"); do round 3 "triple$r"; done
console gamma > "$out/gamma-after.txt"

echo
echo "one GPU, identical copies; gamma $gamma ($state after the 1- and 2-copy rounds),"
echo "solo compute ${solo_s} s and GPU occupancy $u as the scheduler learned them;"
echo "model: compute x max(1, gamma * N * u) (summed occupancy of the N copies, each one's own included);"
echo "time-sharing reference: compute x max(1, N * u) (the model at gamma 1)"
awk -v g="$gamma" -v s="$solo_s" -v u="$u" '
  { n=$1; c[n]+=$2; t[n]+=$3; k[n]++ }
  END {
    printf "%-3s %-9s %5s %14s %14s %8s %14s %8s %12s\n", "N", "role", "runs", "measured comp",
           "model comp", "err", "time-share", "err", "mean total"
    for (n = 1; n <= 3; n++) {
      if (!k[n]) continue
      m = c[n] / k[n]
      a = g * n * u; if (a < 1) a = 1
      ts = n * u; if (ts < 1) ts = 1
      p = s * a; q = s * ts
      role = n == 1 ? "profile" : n == 2 ? "fit" : "held out"
      printf "%-3d %-9s %5d %13.3fs %13.3fs %7.1f%% %13.3fs %7.1f%% %11.3fs\n", n, role, k[n], m,
             p, 100 * (p - m) / m, q, 100 * (q - m) / m, t[n] / k[n]
    }
  }' "$out/measured.txt" | tee "$out/table.txt"
echo "logs: $out"
