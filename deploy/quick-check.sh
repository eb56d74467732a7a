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
. "$(dirname "$0")/vendor-libs.sh"
. "$(dirname "$0")/start-gleamd.sh"
start_gleamd quick-check
. "$(dirname "$0")/hide-driver.sh"
same=0; differ=0
. "$(dirname "$0")/compare-program.sh"
for name in $programs; do
  compare_program "$bundle/tests/programs/$name"
done
kill -TERM $gleamd_pid; wait $gleamd_pid
echo "programs: $same identical, $differ differ"
[ -n "$ops" ] && "$(dirname "$0")/torch-ops-check.sh" "$bundle" "$out/ops" $ops
