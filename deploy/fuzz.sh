#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with clang, libFuzzer, ASan and UBSan
# into build-fuzz/ and runs each for a number of inputs (default 2 million
# each, 10^7 in all), starting from the committed corpus. New interesting
# inputs go to build-fuzz/corpus/<target> (not committed); a crash leaves
# its input in build-fuzz/crashes/ and makes the script fail.
#   deploy/fuzz.sh [RUNS_PER_TARGET] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2000000}
jobs=${2:-$(nproc)}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found; deploy/setup.sh installs it" >&2; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGLEAM_FUZZ=ON -DGLEAM_CUDA_ROOT="${GLEAM_CUDA_ROOT:-/usr/local/cuda}" >/dev/null
targets=(fuzz_fatbin fuzz_messages fuzz_node_config fuzz_allocation_table fuzz_session)
ninja -C build-fuzz "${targets[@]}"
mkdir -p build-fuzz/crashes
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/$t.log"
  per_job=$(( (runs + jobs - 1) / jobs ))
  # -fork would restart on crashes; plain jobs keep every run accounted for.
  pids=()
  for j in $(seq 1 "$jobs"); do
    "build-fuzz/tests/fuzz/$t" -runs="$per_job" -max_len=65536 -seed="$j" \
      -artifact_prefix="build-fuzz/crashes/$t-" -print_final_stats=1 \
      "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" > "$log.$j" 2>&1 &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  done_runs=$(grep -h "stat::number_of_executed_units" "$log".* | awk '{s+=$2} END {print s+0}')
  echo "fuzz: $t: $done_runs inputs, $( [ $rc -eq 0 ] && echo "0 crashes" || echo "FAILED, see $log.* and build-fuzz/crashes")"
  [ $rc -eq 0 ] || status=1
done
exit $status
