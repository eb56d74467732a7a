#!/usr/bin/env bash
# Model load time and tokens/s of tests/programs/torch_generate.py (a
# transformers Llama model, greedy generation) locally and through Gleam over
# an emulated link, on the GPU machine from an unpacked bundle:
#   deploy/torch-bench.sh BUNDLE_DIR [SIZE=tiny|1b|8b|resnet50|whisper] [LINK=1gbit,0.5ms] [OUT_DIR]
# SIZE resnet50 measures ResNet-50 fp16 forwards (images/s,
# tests/programs/torch_vision.py), whisper a Whisper-tiny generate (tokens/s,
# tests/programs/torch_models.py) instead of the Llama model.
# Runs: local; Gleam naive (GLEAM_ASYNC=off GLEAM_CACHE=off); Gleam full with
# a cold weight cache; Gleam full again (weights cached on the server). Each
# remote run goes through gleam-link in front of one gleamd. The driver is
# hidden from the client as in deploy/gpu-check.sh. Prints one line a run and
# checks that every run generated the same tokens.
# GLEAM_TORCH_BENCH_RUNS picks the runs (default: "local naive full_cold
# full_cached"); local always runs first, as the reference.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
size=${2:-1b}
link=${3:-1gbit,0.5ms}
out=${4:-/tmp/gleam-torch-bench}
progs="$(cd "$(dirname "$0")/.." && pwd)/tests/programs"
mkdir -p "$out"
port=4796; lport=4797
. "$(dirname "$0")/vendor-libs.sh"
export TORCH_CUDNN_SDPA_DEPRIORITIZED=1
# The script and its arguments (no quotes inside: they pass through sh -c).
case $size in
  resnet50) src=$progs/torch_vision.py; args="--batch 32 --repeat 20 resnet50_fp16" ;;
  whisper) src=$progs/torch_models.py; args="whisper_generate" ;;
  *) src=$progs/torch_generate.py; args="--size $size --dir $out"
     python3 "$src" $args --save-only || exit 1 ;;
esac
cat > "$out/node.conf" <<CONF
[node]
id = "torch-bench"
roles = ["all"]
port = $port
[cache]
dir = "$out/cache"
host-capacity = 24GiB
CONF
rm -rf "$out/cache"
"$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
gleamd_pid=$!
"$bundle/bin/gleam-link" --listen 127.0.0.1:$lport --target 127.0.0.1:$port --link "$link" \
  2> "$out/link.log" &
link_pid=$!
sleep 2
. "$(dirname "$0")/hide-driver.sh"
run() { # NAME ENV...
  local name=$1; shift
  if [ "$name" = local ]; then
    python3 "$src" $args > "$out/$name.out" 2> "$out/$name.err"
  else
    unshare -m sh -c "$hide; $* GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$lport \
      '$bundle/bin/gleam-run' -- python3 '$src' $args" \
      > "$out/$name.out" 2> "$out/$name.err"
  fi
  local rc=$?
  echo "$name rc=$rc link=$link $(grep -h '^timing' "$out/$name.err")"
  [ $rc -eq 0 ] || tail -5 "$out/$name.err"
}
runs=${GLEAM_TORCH_BENCH_RUNS:-local naive full_cold full_cached}
run local
for r in $runs; do
  case $r in
    local) ;;
    naive) run naive GLEAM_ASYNC=off GLEAM_CACHE=off ;;
    full_cold | full_cached) run "$r" ;;
    *) echo "torch-bench: unknown run '$r' (local, naive, full_cold, full_cached)"; exit 2 ;;
  esac
done
for r in $runs; do
  [ "$r" = local ] && continue
  cmp -s "$out/local.out" "$out/$r.out" && echo "outputs $r: identical to local" \
    || echo "outputs $r: DIFFER from local"
done
kill $link_pid; kill -TERM $gleamd_pid; wait $gleamd_pid 2>/dev/null
