#!/usr/bin/env bash
# The Go benchmark: `tabula gtp` (UCT + RAVE, light playouts, 1 s per move) against
# GnuGo 3.8 at levels 1 and 10 on 9x9, 20 games each, colours alternating.
#
#   scripts/go-vs-gnugo.sh [OUT_DIR] [GAMES] [SECONDS_PER_MOVE]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/go-vs-gnugo}
games=${2:-20}
secs=${3:-1}
cargo build --profile dist --quiet
bin=$(mktemp -d)/tabula
cp target/dist/tabula "$bin"
for level in 1 10; do
  dir="$out/level-$level"
  if [ -f "$dir/summary.json" ]; then echo "done already: level $level"; continue; fi
  echo "== GnuGo level $level, $games games, $secs s per move"
  "$bin" match --engine "$bin gtp --move-time $secs" \
    --opponent "/usr/games/gnugo --mode gtp --level $level --chinese-rules" \
    --games "$games" --size 9 --komi 7.5 --out "$dir"
done
