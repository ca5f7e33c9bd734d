#!/usr/bin/env bash
# The Go benchmark: `tabula gtp` (UCT + RAVE, heavy playouts and priors, 1 s per move
# on one thread) against GnuGo 3.8 at levels 1 and 10 on 9x9, 20 games each, colours
# alternating. Extra arguments go to `tabula gtp` (e.g. --playouts light --no-priors
# for the engine as it was).
#
#   scripts/go-vs-gnugo.sh [OUT_DIR] [GAMES] [SECONDS_PER_MOVE] [GTP_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/go-vs-gnugo}
games=${2:-20}
secs=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
levels=${LEVELS:-1 10}
cargo build --profile dist --quiet
bin=$(mktemp -d)/tabula
cp target/dist/tabula "$bin"
for level in $levels; do
  dir="$out/level-$level"
  if [ -f "$dir/summary.json" ]; then echo "done already: level $level"; continue; fi
  echo "== GnuGo level $level, $games games, $secs s per move"
  "$bin" match --engine "$bin gtp --move-time $secs $*" \
    --opponent "/usr/games/gnugo --mode gtp --level $level --chinese-rules" \
    --games "$games" --size 9 --komi 7.5 --out "$dir"
done
