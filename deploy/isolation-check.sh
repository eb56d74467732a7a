#!/usr/bin/env bash
# Sessions that share a GPU, on the GPU machine from an unpacked bundle,
# clients with the driver hidden, under [gpu_server] isolation = process
# and = shared:
#   deploy/isolation-check.sh BUNDLE_DIR [OUT_DIR]
# - memory: session B's kernel reads and overwrites session A's buffer by
#   its raw address (tests/programs/isolation_peek);
# - faults: B's kernel faults (tests/programs/sticky_fault) while A runs a
#   program; then a new session runs one; gleamd's pid stays the same.
# Prints one line per check and mode; exit 0 when process isolation holds.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:-/tmp/gleam-isolation}
mkdir -p "$out"
. "$(dirname "$0")/vendor-libs.sh"
. "$(dirname "$0")/hide-driver.sh"
. "$(dirname "$0")/start-gleamd.sh"
progs=$bundle/tests/programs
fail=0
# run_client NAME ARGS...: the program through Gleam, driver hidden, stdout in $out/NAME.out.
run_client() {
  local name=$1; shift
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port timeout 120 \
    '$bundle/bin/gleam-run' -- $*" > "$out/$name.out" 2> "$out/$name.err"
}
for mode in process shared; do
  port=$((4810 + ${#mode}))
  GLEAM_ISOLATION=$mode start_gleamd "isolation-$mode"
  pid_before=$gleamd_pid
  # Memory: A holds a secret for 6 s; B peeks at its address meanwhile.
  run_client "hold-$mode" "$progs/isolation_peek" hold 6 &
  holder=$!
  for _ in $(seq 1 100); do grep -q address "$out/hold-$mode.out" 2>/dev/null && break; sleep 0.1; done
  addr=$(awk '/address/ {print $2}' "$out/hold-$mode.out")
  run_client "peek-$mode" "$progs/isolation_peek" peek "$addr"
  wait $holder
  echo "$mode memory: A at $addr: $(grep held "$out/hold-$mode.out"); B: $(cat "$out/peek-$mode.out")"
  if [ "$mode" = process ] && { ! grep -q "held intact=1" "$out/hold-$mode.out" \
      || grep -q "saw_secret=1" "$out/peek-$mode.out"; }; then fail=1; fi
  # Faults: A runs a program while B's kernel faults; then a new session.
  run_client "a-$mode" "$progs/pipeline" &
  a=$!
  run_client "fault-$mode" "$progs/sticky_fault"
  wait $a; arc=$?
  LD_LIBRARY_PATH=${LOCAL_LIBS:-} "$progs/pipeline" > "$out/a-local.out" 2>&1
  run_client "after-$mode" "$progs/device_props"
  arc2=$?
  same_a=$(cmp -s "$out/a-local.out" "$out/a-$mode.out" && echo identical || echo DIFFERS)
  echo "$mode fault: B $(tr '\n' ' ' < "$out/fault-$mode.out"); A rc=$arc output $same_a to local;" \
       "new session rc=$arc2; gleamd $(kill -0 $pid_before 2>/dev/null && echo alive || echo GONE)"
  if [ "$mode" = process ] && { [ "$same_a" != identical ] || [ $arc2 -ne 0 ] \
      || ! kill -0 $pid_before 2>/dev/null; }; then fail=1; fi
  grep -h "worker process" "$out/gleamd.log" | head -3
  kill -TERM $gleamd_pid; wait $gleamd_pid 2>/dev/null
  cp "$out/gleamd.log" "$out/gleamd-$mode.log"
done
exit $fail
