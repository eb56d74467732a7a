#!/usr/bin/env bash
# The README's plots from deploy/torch-bench.sh runs, one log per link:
#   deploy/readme-plots.sh OUT_DIR BENCH_LOG...
# Each BENCH_LOG is what torch-bench.sh printed (one line a run: "NAME rc=0
# link=LINK timing ... load_s=X ... tokens_per_s=Y"). Writes
# OUT_DIR/load_time.png (model load: local, Gleam cold cache, Gleam cached,
# per link) and OUT_DIR/tokens_per_s.png (decode speed, same runs), with
# the numbers they show in OUT_DIR/bench.dat. A run that failed (rc != 0) or
# is missing from a log is left out of its link's group ("-").
set -euo pipefail
out=${1:?usage: readme-plots.sh OUT_DIR BENCH_LOG...}
shift
[ $# -ge 1 ] || { echo "readme-plots: give at least one torch-bench log" >&2; exit 2; }
command -v gnuplot > /dev/null || { echo "readme-plots: needs gnuplot (gnuplot-nox)" >&2; exit 2; }
mkdir -p "$out"
dat="$out/bench.dat"
echo "# link local_load_s cold_load_s cached_load_s local_tok_s cold_tok_s cached_tok_s" > "$dat"
for log in "$@"; do
  [ -r "$log" ] || { echo "readme-plots: cannot read '$log'" >&2; exit 2; }
  awk '
    # field NAME of a "NAME=VALUE" word on this line, "-" when absent
    function field(name,   i) {
      for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
      return "-"
    }
    $2 ~ /^rc=/ && $3 ~ /^link=/ {
      link = substr($3, 6)
      if ($2 != "rc=0") next
      load[$1] = field("load_s"); tok[$1] = field("tokens_per_s")
    }
    END {
      if (link == "") { print "readme-plots: no torch-bench run line in " FILENAME > "/dev/stderr"; exit 1 }
      n = split("local full_cold full_cached", runs, " ")
      line = link
      for (i = 1; i <= n; i++) line = line " " ((runs[i] in load) ? load[runs[i]] : "-")
      for (i = 1; i <= n; i++) line = line " " ((runs[i] in tok) ? tok[runs[i]] : "-")
      print line
    }' "$log" >> "$dat"
done
terminal=png
gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo && terminal=pngcairo
plot() { # FILE TITLE YLABEL FIRST_COLUMN
  gnuplot <<GP
set terminal $terminal size 720,420
set output '$out/$1'
set title '$2'
set ylabel '$3'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set datafile missing '-'
set key below horizontal
set yrange [0:*]
set offsets 0,0,graph 0.08,0
set grid ytics
plot '$dat' using $4:xtic(1) title 'local', '' using $(($4 + 1)) title 'Gleam, cache cold', \
     '' using $(($4 + 2)) title 'Gleam, weights cached'
GP
}
plot load_time.png "Model load time per link (lower is better)" "seconds" 2
plot tokens_per_s.png "Decode speed per link (higher is better)" "tokens/s" 5
echo "wrote $out/load_time.png $out/tokens_per_s.png from $dat"
