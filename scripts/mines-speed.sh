#!/usr/bin/env bash
# The Minesweeper agent's speed per thread: games per second on one thread for each
# level and first-click rule, the median of three runs, for one or more builds of
# `tabula` measured turn about (so that they share the same minutes of the machine).
# Seeds from 1,000,000 (tuning seeds; the win-rate table uses 1..100000).
#
#   scripts/mines-speed.sh BIN [BIN ...]     e.g. a build of the last release and target/release/tabula
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BIN [BIN ...]" >&2; exit 2; }
for level in beginner intermediate expert; do
  case $level in beginner) games=20000;; intermediate) games=4000;; expert) games=1000;; esac
  for rule in safe opening; do
    declare -A speeds=()
    for run in 1 2 3; do
      for bin in "$@"; do
        s=$("$bin" mines bench --level "$level" --rule "$rule" --games "$games" --seed 1000000 --threads 1 |
          sed -n 's/^speed: *\([0-9.]*\) games.*/\1/p')
        speeds[$bin]="${speeds[$bin]:-} $s"
      done
    done
    for bin in "$@"; do
      median=$(printf '%s\n' ${speeds[$bin]} | sort -g | sed -n 2p)
      echo "$level $rule $bin: median $median games/s (runs:${speeds[$bin]})"
    done
    unset speeds
  done
done
