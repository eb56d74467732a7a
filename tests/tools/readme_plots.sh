#!/usr/bin/env bash
# deploy/readme-plots.sh turns torch-bench logs (one per link) into the
# README's two PNGs and a data file holding exactly the logged numbers; a
# failed run is a gap, not a zero; a log without run lines is refused.
set -u
src=${1:?usage: readme_plots.sh <source dir>}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/wire.log" <<'LOG'
local rc=0 link=1gbit,0.5ms timing size=1b load_s=2.125 generate_s=0.83 tokens_per_s=38.51
full_cold rc=0 link=1gbit,0.5ms timing size=1b load_s=24.750 generate_s=1.06 tokens_per_s=30.12
full_cached rc=0 link=1gbit,0.5ms timing size=1b load_s=1.875 generate_s=1.03 tokens_per_s=31.07
outputs full_cold: identical to local
LOG
cat > "$tmp/wifi.log" <<'LOG'
local rc=0 link=wifi timing size=1b load_s=2.010 generate_s=0.84 tokens_per_s=38.11
full_cold rc=1 link=wifi
full_cached rc=0 link=wifi timing size=1b load_s=3.125 generate_s=2.39 tokens_per_s=13.39
LOG
fail() { echo "FAIL: $*"; exit 1; }
"$src/deploy/readme-plots.sh" "$tmp/out" "$tmp/wire.log" "$tmp/wifi.log" || fail "script failed"
for png in load_time tokens_per_s; do
  [ "$(head -c 8 "$tmp/out/$png.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    || fail "$png.png is not a PNG"
done
expected='1gbit,0.5ms 2.125 24.750 1.875 38.51 30.12 31.07
wifi 2.010 - 3.125 38.11 - 13.39'
[ "$(grep -v '^#' "$tmp/out/bench.dat")" = "$expected" ] || fail "bench.dat: $(cat "$tmp/out/bench.dat")"
echo "no runs here" > "$tmp/empty.log"
if "$src/deploy/readme-plots.sh" "$tmp/out2" "$tmp/empty.log" 2> "$tmp/err"; then
  fail "a log without runs was accepted"
fi
grep -q "no torch-bench run line" "$tmp/err" || fail "unclear refusal: $(cat "$tmp/err")"
echo "readme plots ok"
