#!/usr/bin/env bash
# The learned mine model's win rates: the agent with --solver net alone on every level
# and first-click rule (seeds 1..GAMES, the same boards as scripts/mines-benchmarks.sh;
# no data game uses these seeds). Resumable: each finished cell is one JSON line in the
# results file and is skipped when the script runs again.
#
#   scripts/mines-model-benchmarks.sh [RESULTS_FILE] [GAMES] [MODEL] [LEVELS]
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:-runs/mines-model-benchmarks.jsonl}
games=${2:-10000}
model=${3:-models/mines.safetensors}
levels=${4:-beginner intermediate expert}
mkdir -p "$(dirname "$results")"
cargo build --profile dist --quiet
# run a private copy, so that rebuilding during the run cannot mix versions
bin=$(mktemp -d)/tabula
cp target/dist/tabula "$bin"
for rule in opening safe; do
  for level in $levels; do
    case $level in beginner) size='"width":9,"height":9';; intermediate) size='"width":16,"height":16';; expert) size='"width":30,"height":16';; esac
    if [ -f "$results" ] && grep -q "{$size,\"mines\":[0-9]*,\"rule\":\"$rule\",\"games\":$games," "$results"; then
      echo "done already: $level $rule"
      continue
    fi
    echo "== $level, first click $rule, $games games, the net alone"
    "$bin" mines bench --level "$level" --rule "$rule" --games "$games" --seed 1 --solver net --model "$model" --json "$results"
  done
done
