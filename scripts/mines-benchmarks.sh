#!/usr/bin/env bash
# The Minesweeper win-rate table: 100,000 games per level and first-click rule, on
# seeds 1..100000 (tuning used seeds from 1,000,000 on). Resumable: each finished cell
# is one JSON line in the results file and is skipped when the script runs again.
#
#   scripts/mines-benchmarks.sh [RESULTS_FILE] [GAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:-runs/mines-benchmarks.jsonl}
games=${2:-100000}
mkdir -p "$(dirname "$results")"
cargo build --profile dist --quiet
# run a private copy, so that rebuilding during the run cannot mix versions
bin=$(mktemp -d)/tabula
cp target/dist/tabula "$bin"
for rule in opening safe; do
  for level in beginner intermediate expert; do
    case $level in beginner) size='"width":9,"height":9';; intermediate) size='"width":16,"height":16';; expert) size='"width":30,"height":16';; esac
    if [ -f "$results" ] && grep -q "{$size,\"mines\":[0-9]*,\"rule\":\"$rule\",\"games\":$games," "$results"; then
      echo "done already: $level $rule"
      continue
    fi
    echo "== $level, first click $rule, $games games"
    "$bin" mines bench --level "$level" --rule "$rule" --games "$games" --seed 1 --json "$results"
  done
done
