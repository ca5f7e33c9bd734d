#!/bin/sh
# Speed figures of the architecture change (BENCHMARKS.md, "Architecture"): network-
# guided MCTS on Go 9x9 and Connect Four, inference, burn's training step, the solver
# and playouts, for one or more binaries, interleaved so that each comparison is made
# in the same minutes. Run on an otherwise idle machine:
#   cargo build --profile dist && sh scripts/arch-benchmarks.sh target/dist/tabula [OTHER…]
set -eu
C4=${TABULA_C4_DATA:-../shared/data/connect4}
[ $# -ge 1 ] || { echo "usage: $0 TABULA [TABULA…]" >&2; exit 2; }
for round in 1 2 3; do
  for B in "$@"; do
    echo "=== $B (round $round)"
    "$B" bench mcts --game go:9 --size 6x64 --sims 800 --games 1,16
    "$B" bench mcts --game connect4 --size 4x48 --sims 800 --games 1,16
    "$B" bench nn --game go:9 --size 6x64 --batches 1,8,64 --threads 1 --seconds 1
    "$B" bench nn --game connect4 --size 4x48 --batches 64 --threads 1 --seconds 1 --burn
    "$B" bench solver --set "$C4/Test_L2_R2" --limit 300
    "$B" bench playouts --game go --size 9 --seconds 3
  done
done
