#!/usr/bin/env bash
# Bar chart of a bench's epoch times beside its peer's, from its ROW lines
# (ROW,<x>,<troupe seconds>,<peer seconds>,...): one pair of bars per row.
#
#   bench/plot_epoch_times.sh ROWS.csv OUT.png TITLE X_LABEL TROUPE_LABEL PEER_LABEL
#
# Needs gnuplot (Debian's gnuplot-nox); without it, says so and exits 0.
set -euo pipefail
(($# == 6)) || { echo "usage: $0 ROWS.csv OUT.png TITLE X_LABEL TROUPE_LABEL PEER_LABEL" >&2; exit 2; }
csv="$1" png="$2" title="$3" xlabel="$4" troupe="$5" peer="$6"
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "# no plot: gnuplot is not installed (apt-get install gnuplot-nox)"
  exit 0
fi
gnuplot <<GNUPLOT
set terminal pngcairo size 640,480 noenhanced
set output '${png}'
set datafile separator ','
set title '${title}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key below
set grid ytics
set xlabel '${xlabel}'
set ylabel 'seconds per epoch (median)'
set yrange [0:*]
plot '< grep "^ROW,[0-9]" ${csv}' using 3:xtic(2) title '${troupe}', '' using 4 title '${peer}'
GNUPLOT
echo "# wrote ${png}"
