#!/usr/bin/env bash
# GPU machine: ggml's test-backend-ops locally and through Gleam (driver
# hidden from the client), compared case by case.
#   deploy/ggml-check.sh BUNDLE GGML [OPS] [SECONDS]
# BUNDLE: an unpacked deploy/bundle.sh bundle. GGML: a directory with
# bin/test-backend-ops and lib/ (libggml*.so), from ggml's default CUDA build:
#   cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_BUILD_TESTS=ON
#   ninja -C build test-backend-ops
# (on a machine without a driver, link test-backend-ops with
# -Wl,-rpath-link,<cuda>/lib64/stubs). OPS: test-backend-ops' -o list
# (default: the ops of an LLM's decode). Each side runs for at most SECONDS
# (default 150); the cases both reached are compared.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
ggml=$(cd "${2:?ggml dir with bin/ and lib/}" && pwd)
ops=${3:-MUL_MAT,MUL_MAT_ID,FLASH_ATTN_EXT,ROPE,SOFT_MAX,RMS_NORM,GET_ROWS,CPY,SET_ROWS,GLU,ADD,MUL,SCALE,CONT,ARGSORT}
limit=${4:-150}
out=/tmp/gleam-ggml-check
mkdir -p "$out"
export GLEAM_BUILD_DIR="$bundle" GLEAM_SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "$0")/vendor-libs.sh" > /dev/null
# The statuses of each case, colours stripped: "NAME(args): OK".
cases() {
  sed 's/\x1b\[[0-9;]*m//g; s/ \[[A-Z0-9, ]*\]//; s/[[:space:]]*$//' "$1" \
    | grep -E ": (OK|FAIL|not supported)$"
}
LD_LIBRARY_PATH="$ggml/lib:${LOCAL_LIBS:-}" timeout "$limit" "$ggml/bin/test-backend-ops" \
  test -b CUDA0 -o "$ops" > "$out/local.txt" 2>&1
port=4797
. "$(dirname "$0")/start-gleamd.sh"
start_gleamd ggml-check
. "$(dirname "$0")/hide-driver.sh"
# libnccl and the like come from the toolkit's lib64; gleam-run puts Gleam's
# libraries first.
unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port \
  LD_LIBRARY_PATH='$ggml/lib:/usr/local/cuda/lib64' timeout $limit \
  '$bundle/bin/gleam-run' -- '$ggml/bin/test-backend-ops' test -b CUDA0 -o '$ops'" \
  > "$out/gleam.txt" 2>&1
kill -TERM "$gleamd_pid"; wait "$gleamd_pid"
grep -m1 "VMM" "$out/gleam.txt"
cases "$out/local.txt" > "$out/local.cases"
cases "$out/gleam.txt" > "$out/gleam.cases"
n=$(wc -l < "$out/gleam.cases"); l=$(wc -l < "$out/local.cases")
[ "$l" -lt "$n" ] && n=$l
differ=$(diff <(head -n "$n" "$out/local.cases") <(head -n "$n" "$out/gleam.cases") | grep -c "^>")
ok=$(head -n "$n" "$out/gleam.cases" | grep -c ": OK$")
fail=$(head -n "$n" "$out/gleam.cases" | grep -c ": FAIL$")
echo "ggml: $n cases compared (local reached $l, Gleam $(wc -l < "$out/gleam.cases")): $ok OK, $fail FAIL through Gleam, $differ differ from local"
diff <(head -n "$n" "$out/local.cases") <(head -n "$n" "$out/gleam.cases") | head -20
[ "$differ" -eq 0 ] && [ "$fail" -eq 0 ]
