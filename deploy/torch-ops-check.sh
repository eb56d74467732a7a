#!/usr/bin/env bash
# Everyday PyTorch operations (tests/programs/torch_ops.py: matrix-vector
# products, convolutions, FFT, linear algebra, sparse, torch.compile,
# pynvml, ...) locally and through Gleam with the real driver hidden from
# the client, on the GPU machine from an unpacked bundle:
#   deploy/torch-ops-check.sh BUNDLE_DIR [OUT_DIR] [OP ...]
# Prints one line per operation: "same", "DIFFERS" (both ran, outputs not
# identical) or "FAILS" (ran locally, failed through Gleam, with the error),
# then the counts. Exit 0 only when every operation is the same.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:-/tmp/gleam-torch-ops}
shift $(( $# >= 2 ? 2 : $# ))
src="$(cd "$(dirname "$0")/.." && pwd)/tests/programs/torch_ops.py"
mkdir -p "$out"
port=4793
. "$(dirname "$0")/vendor-libs.sh"
. "$(dirname "$0")/start-gleamd.sh"
start_gleamd torch-ops
. "$(dirname "$0")/hide-driver.sh"
export TORCH_CUDNN_SDPA_DEPRIORITIZED=1
timeout 300 python3 "$src" "$@" > "$out/local.out" 2> "$out/local.err"
# Through Gleam: `gleam_ops OUT ERR OP...` runs the operations in one
# process with the driver hidden.
gleam_ops() {
  local to=$1 err=$2; shift 2
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port \
    timeout 300 '$bundle/bin/gleam-run' -- python3 '$src' $*" > "$to" 2> "$err"
}
gleam_ops "$out/gleam.out" "$out/gleam.err" "$@"
echo "gleam-run exit: $?"
# A process that dies (an abort, a signal) takes the operations after the
# one that killed it along: run each of those again in a process of its
# own, so that one crash names one operation.
while read -r name status _; do
  [ "$name" = done ] || [ "$status" != ok ] && continue
  grep -q "^$name " "$out/gleam.out" && continue
  gleam_ops "$out/gleam-$name.out" "$out/gleam-$name.err" "$name"
  rc=$?
  if grep -q "^$name " "$out/gleam-$name.out"; then
    grep "^$name " "$out/gleam-$name.out" >> "$out/gleam.out"
  else
    echo "$name died exit=$rc: $(grep -v '^timing' "$out/gleam-$name.err" | tail -n 1)" >> "$out/gleam.out"
  fi
done < <(grep -v '^pynvml ' "$out/local.out")
same=0; differ=0; fails=0
while read -r name status rest; do
  [ "$name" = done ] && continue
  remote=$(grep -m1 "^$name " "$out/gleam.out")
  if [ "$status" != ok ]; then
    echo "local-fail $name: $status $rest"
  elif [ "$remote" = "$name $status $rest" ]; then
    same=$((same+1)); echo "same     $name"
  elif [ "${remote#"$name ok "}" != "$remote" ]; then
    differ=$((differ+1)); echo "DIFFERS  $name: local $rest, gleam ${remote#"$name ok "}"
  else
    fails=$((fails+1)); echo "FAILS    $name: ${remote#"$name "}"
  fi
done < <(grep -v '^pynvml ' "$out/local.out")
kill -TERM $gleamd_pid; wait $gleamd_pid
echo "torch ops: $same same, $differ differ, $fails fail through Gleam"
[ $differ -eq 0 ] && [ $fails -eq 0 ]
