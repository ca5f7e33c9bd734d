#!/bin/sh
# Network inference and network-guided MCTS speed (issue 5), as recorded in BENCHMARKS.md.
# Run on an otherwise idle machine: cargo build --profile dist && sh scripts/nn-benchmarks.sh
set -e
B=${TABULA:-target/dist/tabula}
$B bench nn --game go:9 --size 4x64 --batches 1,8 --threads 1,2 --seconds 3
$B bench nn --game go:9 --size 6x64 --batches 1,8,16,64 --threads 1,2 --seconds 3 --burn
$B bench nn --game go:19 --size 10x128 --batches 1,8,16,64 --threads 1,2 --seconds 8
$B bench mcts --game go:9 --size 6x64 --sims 800 --games 1,16,64 --threads 1
$B bench mcts --game go:9 --size 6x64 --sims 800 --games 64 --threads 2
$B bench mcts --game connect4 --size 4x48 --sims 800 --games 1,16,64 --threads 1
$B bench mcts --game connect4 --size 4x48 --sims 800 --games 64 --threads 2
