#!/usr/bin/env bash
# The Go benchmark: `tabula gtp` (UCT + RAVE, heavy playouts and priors, 1 s per move
# on one thread) against GnuGo 3.8 at levels 1 and 10 on 9x9, 20 games each, colours
# alternating. Extra arguments go to `tabula gtp` (e.g. --playouts light --no-priors
# for the engine as it was).
#
#   scripts/go-vs-gnugo.sh [OUT_DIR] [GAMES] [SECONDS_PER_MOVE] [GTP_ARGS...]
#
# SIZE (default 9) and KOMI (default 7.5) set the board; BIN=path uses that binary
# instead of building the dist profile. The network player, e.g. on 7x7:
#   SIZE=7 KOMI=9 LEVELS=10 scripts/go-vs-gnugo.sh runs/g7 20 1 --player mcts
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/go-vs-gnugo}
games=${2:-20}
secs=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
levels=${LEVELS:-1 10}
size=${SIZE:-9}
komi=${KOMI:-7.5}
bin=$(mktemp -d)/tabula
if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$bin"
else
  cargo build --profile dist --quiet
  cp target/dist/tabula "$bin"
fi
for level in $levels; do
  dir="$out/level-$level"
  if [ -f "$dir/summary.json" ]; then echo "done already: level $level"; continue; fi
  echo "== GnuGo level $level, $games games, $secs s per move"
  "$bin" match --engine "$bin gtp --size $size --move-time $secs $*" \
    --opponent "/usr/games/gnugo --mode gtp --level $level --chinese-rules" \
    --games "$games" --size "$size" --komi "$komi" --out "$dir"
done
