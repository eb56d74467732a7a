#!/usr/bin/env bash
# Runs on the GPU machine from an unpacked bundle (deploy/bundle.sh): the
# [gpu] tests of every test binary, then each CUDA program of ours locally
# and through Gleam with the real driver hidden from the client (a private
# mount namespace where libcuda.so* and /dev/nvidia* are /dev/null), and
# compares outputs.
#   deploy/gpu-check.sh BUNDLE_DIR [OUT_DIR]
# GLEAM_CHECK_TESTS=executor_test runs only that [gpu] test binary (a glob).
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:-/tmp/gleam-gpu-check}
mkdir -p "$out"
export GLEAM_BUILD_DIR="$bundle" GLEAM_SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "$0")/vendor-libs.sh"
nvidia-smi -L
echo "== [gpu] tests"
fail=0
# GLEAM_CHECK_TESTS names the test binaries to run (default: every one).
for t in "$bundle"/tests/${GLEAM_CHECK_TESTS:-*_test}; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  "$t" "[gpu]" > "$out/$name.log" 2>&1
  rc=$?
  summary=$(grep -E "test cases|All tests passed|SKIPPED|No test cases" "$out/$name.log" | tail -1)
  echo "$name rc=$rc $summary"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && fail=1 && tail -40 "$out/$name.log"
done

echo "== programs: local vs through Gleam, driver hidden from the client"
port=4790
. "$(dirname "$0")/start-gleamd.sh"
start_gleamd gpu-check
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c nodes
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c gpus
. "$(dirname "$0")/hide-driver.sh"
same=0; differ=0
. "$(dirname "$0")/compare-program.sh"
while read -r prog; do
  [ -n "$prog" ] || continue
  compare_program "$bundle/$prog"
done < "$bundle/tests/programs/programs.txt"
# Host nodes across a 3 s cut (issue #9): 300 replays of a graph whose host
# node calls back into the client; the cut comes while the server's stream
# waits on that call or between two replays. The client reattaches and every
# replay's function runs exactly once, without an error at the app.
"$bundle/bin/gleam-link" --listen 4796 --target 127.0.0.1:$port --cut-at 1s --cut-for 3s \
  --cut-mode hold > "$out/link_host.log" 2>&1 &
host_link_pid=$!
sleep 0.3
unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:4796 timeout 120 \
  '$bundle/tests/interpose_async_probe' '$bundle/lib/libcudart.so.13' host_steady 300" \
  > "$out/host_cut.out" 2> "$out/host_cut.err"
if grep -qx "host_steady=cudaSuccess wrong=0" "$out/host_cut.out" \
    && grep -q "reconnected to" "$out/host_cut.err"; then
  same=$((same+1)); echo "same     host_nodes_cut: $(cat "$out/host_cut.out"), reconnected"
else
  differ=$((differ+1)); echo "DIFFERS  host_nodes_cut: $(cat "$out/host_cut.out")"
  tail -5 "$out/host_cut.err"
fi
kill $host_link_pid 2>/dev/null; wait $host_link_pid 2>/dev/null
# torch_check NAME ARGS...: a Python script of tests/programs locally and
# through Gleam; stdout must be identical, stderr is kept apart (timings).
# Both runs use PyTorch's own attention kernels (gleam-run sets
# TORCH_CUDNN_SDPA_DEPRIORITIZED=1: cuDNN's attention graphs pass a host
# scalar by value, which Gleam does not carry), so that they run the same
# kernels and compare bit for bit.
# TORCH_CHECK_SERVER overrides where the client connects (a gleam-link);
# TORCH_CHECK_BEFORE runs just before the Gleam run (starts that link).
torch_check() {
  local name=$1; shift
  export TORCH_CUDNN_SDPA_DEPRIORITIZED=1
  timeout 600 python3 "$@" > "$out/$name.local" 2> "$out/$name.local.err"; local lrc=$?
  [ -n "${TORCH_CHECK_BEFORE:-}" ] && eval "$TORCH_CHECK_BEFORE"
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=${TORCH_CHECK_SERVER:-127.0.0.1:$port} \
    timeout 600 '$bundle/bin/gleam-run' -- python3 $*" > "$out/$name.gleam" 2> "$out/$name.gleam.err"
  local grc=$?
  if [ $lrc -eq 0 ] && [ $grc -eq 0 ] && cmp -s "$out/$name.local" "$out/$name.gleam"; then
    same=$((same+1)); echo "same     $name: $(grep -m1 -E 'generated|done' "$out/$name.local")"
  else
    differ=$((differ+1)); echo "DIFFERS  $name (local rc=$lrc, gleam rc=$grc)"
    diff "$out/$name.local" "$out/$name.gleam" | head -20; tail -25 "$out/$name.gleam.err"
  fi
  grep -h timing "$out/$name.local.err" "$out/$name.gleam.err" 2>/dev/null
}
# NVML (pynvml, else ctypes): the GPU count, name and total memory through
# Gleam equal the local ones (stdout; used memory, utilization and
# temperature go to stderr: they change between runs).
echo "== NVML: local vs through Gleam, driver hidden"
torch_check nvml_query "$GLEAM_SOURCE_DIR/tests/programs/nvml_query.py"
if [ -n "${GLEAM_CHECK_TORCH:-}" ]; then
  echo "== PyTorch: local vs through Gleam, driver hidden"
  progs="$GLEAM_SOURCE_DIR/tests/programs"
  torch_check torch_smoke "$progs/torch_smoke.py" --linear --blas
  # cuDNN: ResNet-50 forward in fp32 and fp16, a small CNN's training step
  # (deterministic cuDNN: bit-identical to the local run).
  torch_check torch_vision "$progs/torch_vision.py"
  # Whisper generate, ViT and CLIP vision encoders, torchaudio's
  # MelSpectrogram (cuFFT): identical token ids and outputs.
  torch_check torch_models "$progs/torch_models.py"
  python3 "$progs/torch_generate.py" --size tiny --dir "$out" --save-only
  torch_check torch_generate "$progs/torch_generate.py" --size tiny --dir "$out"
  # The same run with the link cut for 3 s in the middle: the client gets
  # its session back and the tokens are the same (issue #9).
  start_link() {
    "$bundle/bin/gleam-link" --listen 4799 --target 127.0.0.1:$port --cut-at 4s --cut-for 3s \
      --cut-mode hold > "$out/link.log" 2>&1 &
    link_pid=$!
    sleep 0.3
  }
  TORCH_CHECK_BEFORE=start_link TORCH_CHECK_SERVER=127.0.0.1:4799 \
    torch_check torch_generate_cut "$progs/torch_generate.py" --size tiny --dir "$out"
  kill $link_pid 2>/dev/null; wait $link_pid 2>/dev/null
  grep -h "reconnect" "$out/torch_generate_cut.gleam.err"
  if [ -n "${GLEAM_CHECK_LONG_CUT:-}" ]; then
    # A cut longer than [client] reconnect-for (20 s) in the middle of a
    # session (a probe that runs 2000 memsets and 1 B read-backs, 10 ms
    # apart): the app gets a CUDA error, not a hang, and the server frees
    # the session's GPU memory when [gpu_server] session-grace (30 s) has
    # passed (issue #9).
    echo "== a 60 s cut: a clean error, the session freed"
    "$bundle/bin/gleam-link" --listen 4798 --target 127.0.0.1:$port --cut-at 5s --cut-for 60s \
      --cut-mode hold > "$out/link60.log" 2>&1 &
    link60_pid=$!
    sleep 0.3
    t0=$(date +%s)
    unshare -m sh -c "$hide; GLEAM_SERVER=127.0.0.1:4798 timeout 120 \
      '$bundle/tests/interpose_async_probe' '$bundle/lib/libcudart.so.13' steady 2000" \
      > "$out/cut60.out" 2> "$out/cut60.err"
    crc=$?
    echo "long cut: probe exit $crc after $(( $(date +%s) - t0 )) s (124 = hung): $(cat "$out/cut60.out")"
    grep -h -m2 -E "lost the connection|getting the session back" "$out/cut60.err"
    for _ in $(seq 1 60); do
      grep -q "expired after its client was gone" "$out/gleamd.log" && break
      sleep 1
    done
    echo "long cut: server after $(( $(date +%s) - t0 )) s: $(grep -h -m1 "expired after" "$out/gleamd.log")"
    if [ $crc -lt 124 ] && grep -q "^steady=cudaError" "$out/cut60.out" \
        && grep -q "expired after" "$out/gleamd.log"; then
      same=$((same+1)); echo "same     long_cut: a CUDA error at the app, the session freed"
    else
      differ=$((differ+1)); echo "DIFFERS  long_cut (probe exit $crc)"
    fi
    kill $link60_pid 2>/dev/null; wait $link60_pid 2>/dev/null
  fi
fi
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c sessions
"$bundle/bin/gleam-console" --scheduler 127.0.0.1:$port -c "cache stats"
kill -TERM $gleamd_pid; wait $gleamd_pid
echo "gleamd exit: $?"
tail -5 "$out/gleamd.log"
echo "programs: $same identical, $differ differ"
[ $fail -eq 0 ] && [ $differ -eq 0 ]
