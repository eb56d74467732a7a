#!/usr/bin/env bash
# The falsifier of the load model's network resource, on the GPU machine.
# The model (placement/README "Loads") says a load from the server's own
# weight cache does not use its network ingress: it neither slows a load
# crossing the network nor is slowed by one. Through one gleamd, clients
# with the real driver hidden:
#   - A is loaded once, so the server caches it;
#   - A again, from the cache, alone (CACHED rounds);
#   - B, cold, crosses an emulated link (gleam-link) alone;
#   - C, cold, crosses the same link while A loads from the cache in a loop;
#   - D and E, cold, cross the same link at once: two apps of one client
#     host sharing its uplink;
# and prints C against B (cold load with / without cached loads beside it),
# the looped A against A alone (cached load with / without a cold one), and
# D and E against B (the model's client uplink, placement/README "Client
# uplinks": fair sharing, γ 1, predicts 2.0 each).
#   deploy/ingress-check.sh BUNDLE_DIR [OUT_DIR]
# Knobs (env): MB=2048 (size of each weights file), LINK=1gbit,0.5ms,
# CACHED=3, PORT=4792.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:-/tmp/gleam-ingress-check}
mkdir -p "$out"
mb=${MB:-2048}; spec=${LINK:-1gbit,0.5ms}; cached_rounds=${CACHED:-3}; port=${PORT:-4792}
link_port=$((port + 1))
prog="$bundle/bench/model_load"
[ -x "$prog" ] || { echo "no $prog: build gleam_bench_programs (nvcc) and bundle again"; exit 2; }
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat > "$out/node.conf" <<CONF
[node]
id = "ingress-check"
roles = ["all"]
port = $port
[gpu_server]
devices = ["0"]
[cache]
dir = "$out/cache"
host-capacity = 8GiB
CONF
rm -rf "$out/cache"
"$bundle/bin/gleamd" --config-file="$out/node.conf" 2> "$out/gleamd.log" &
gleamd_pid=$!
"$bundle/bin/gleam-link" --listen $link_port --target 127.0.0.1:$port --link "$spec" \
  > "$out/link.log" 2>&1 &
link_pid=$!
loop_pid=
trap 'kill $loop_pid $link_pid $gleamd_pid 2>/dev/null; wait 2>/dev/null' EXIT
# Distinct pseudo-random contents: nothing of B or C is in the cache.
for name in A B C D E; do
  python3 -c "import sys, random; r = random.Random('$name'); \
    [sys.stdout.buffer.write(r.randbytes(1 << 20)) for _ in range($mb)]" > "$out/$name.bin"
done
sleep 1
# The client sees no GPU of its own (deploy/hide-driver.sh).
. "$(dirname "$0")/hide-driver.sh"
# load FILE SERVER_PORT LOG: one model_load through Gleam; prints load_s.
load() {
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_CACHE_REPORT=1 GLEAM_SERVER=127.0.0.1:$2 \
    '$bundle/bin/gleam-run' -- '$prog' --file '$1'" > "$3" 2>&1
  local rc=$?
  awk '/^result load_s/{print $3}' "$3"
  [ $rc -eq 0 ] && grep -q "^result checksum_ok 1" "$3" \
    || { echo "model_load failed (rc=$rc), see $3" >&2; tail -3 "$3" >&2; }
}
echo "warm-up, A crosses once: $(load "$out/A.bin" $port "$out/A0.log") s"
: > "$out/cached_alone.txt"
for r in $(seq 1 "$cached_rounds"); do load "$out/A.bin" $port "$out/A$r.log" >> "$out/cached_alone.txt"; done
cold_alone=$(load "$out/B.bin" $link_port "$out/B.log")
# A from the cache over and over while C crosses the link.
: > "$out/cached_beside.txt"
( i=0; while :; do i=$((i + 1)); load "$out/A.bin" $port "$out/loop$i.log" >> "$out/cached_beside.txt"; done ) &
loop_pid=$!
sleep 0.5
cold_beside=$(load "$out/C.bin" $link_port "$out/C.log")
kill $loop_pid 2>/dev/null; wait $loop_pid 2>/dev/null; loop_pid=
pkill -f "$out/A.bin" 2>/dev/null
# Two apps of one host load at once through its uplink.
load "$out/D.bin" $link_port "$out/D.log" > "$out/D.txt" &
pair_pid=$!
pair_e=$(load "$out/E.bin" $link_port "$out/E.log")
wait $pair_pid
pair_d=$(cat "$out/D.txt")
# The loads of the loop that ran entirely beside C's (the last may be cut).
beside=$(head -n -1 "$out/cached_beside.txt" | awk 'NF{s+=$1; n++} END{if (n) printf "%.3f %d", s/n, n}')
alone=$(awk 'NF{s+=$1; n++} END{if (n) printf "%.3f %d", s/n, n}' "$out/cached_alone.txt")
echo
echo "weights ${mb} MiB per file, cold loads over gleam-link $spec, cached loads direct"
printf "%-34s %10s %10s %8s\n" "" "alone" "beside" "ratio"
awk -v a="$cold_alone" -v b="$cold_beside" 'BEGIN{if (a > 0) printf "%-34s %9.3fs %9.3fs %8.3f\n", "cold load (B alone, C beside A)", a, b, b / a}'
set -- $alone; ca=${1:-0}; cn=${2:-0}
set -- ${beside:-0 0}; cb=$1; bn=$2
awk -v a="$ca" -v b="$cb" -v an="$cn" -v bn="$bn" 'BEGIN{if (a > 0 && b > 0) printf "%-34s %9.3fs %9.3fs %8.3f   (%d alone, %d beside)\n", "cached load (A, mean)", a, b, b / a, an, bn}'
for x in "D $pair_d" "E $pair_e"; do
  set -- $x
  awk -v a="$cold_alone" -v b="${2:-0}" -v n="$1" 'BEGIN{if (a > 0 && b > 0) printf "%-34s %9.3fs %9.3fs %8.3f\n", "cold load (B alone, " n " beside one)", a, b, b / a}'
done
# What crossed the network: a cached load sends keys, a cold one the bytes.
for f in A1 B C D E; do
  echo "$f: $(awk '/^result gleam_(sent|cached)_bytes/{printf "%s %.0f MiB  ", $2, $3 / 1048576}' "$out/$f.log")"
done
echo "logs: $out"
