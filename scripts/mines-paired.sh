#!/usr/bin/env bash
# Compares two Minesweeper agents game by game on the same seeds: the files are
# `tabula mines bench --games-out FILE` outputs (lines `SEED WON GUESSES`) of two runs
# with the same --seed and --games. Most games are played alike by both, so the
# difference in wins rests on the games where they differ; its 95% interval is
# the normal approximation of McNemar's test (±1.96·sqrt(a+b) games, where a and b are
# the games only A or only B won).
#
#   scripts/mines-paired.sh A.txt B.txt
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 A.txt B.txt" >&2; exit 2; }
join <(sort -k1,1 "$1") <(sort -k1,1 "$2") | awk -v A="$1" -v B="$2" '
  { n++; wa += $2; wb += $4; if ($2 == 1 && $4 == 0) a++; if ($2 == 0 && $4 == 1) b++ }
  END {
    if (n == 0) { print "no common seeds" > "/dev/stderr"; exit 1 }
    d = (wb - wa) / n * 100; h = 1.96 * sqrt(a + b) / n * 100
    printf "games %d: %s wins %.3f%%, %s wins %.3f%%\n", n, A, wa / n * 100, B, wb / n * 100
    printf "only %s won %d, only %s won %d: B - A = %+.3f points (95%% CI %+.3f .. %+.3f)\n", A, a, B, b, d, d - h, d + h
  }'
