#!/usr/bin/env bash
# A Go run's learning curve against an opponent: the network MCTS of every EVERY-th
# checkpoint (`tabula gtp --player mcts --model CHECKPOINT`, SECONDS a move, one thread)
# plays GAMES refereed games (colours alternating) against GnuGo, and each point is
# written to OUT/curve.csv as the run's wall time at that checkpoint (from its
# metrics.jsonl), the games it had played, and the win rate with its 95% interval.
# Resumable: a checkpoint whose match finished is not played again.
# Draw it with `tabula plot --run RUN --matches OUT/curve.csv`.
#
#   scripts/go-curve.sh RUN OUT [GAMES] [SECONDS] [EVERY]
#
# SIZE (default 9), KOMI (7.5), LEVEL (GnuGo's level, default 10), OPPONENT (a whole
# GTP command line instead of GnuGo), BIN (a tabula binary; default: build the dist
# profile), MIX (`--playout-mix`, default the engine's 0.75; 0 measures the network
# alone), SIMS (a fixed number of visits a move instead of SECONDS: the curve then does
# not depend on the machine's load, so it may run beside a training run).
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: scripts/go-curve.sh RUN OUT [GAMES] [SECONDS] [EVERY]}
out=${2:?usage: scripts/go-curve.sh RUN OUT [GAMES] [SECONDS] [EVERY]}
games=${3:-10}
secs=${4:-1}
every=${5:-4}
size=${SIZE:-9}
komi=${KOMI:-7.5}
level=${LEVEL:-10}
opponent=${OPPONENT:-/usr/games/gnugo --mode gtp --level $level --chinese-rules}
budget="--move-time $secs"
[ -n "${SIMS:-}" ] && budget="--sims $SIMS --move-time 60"
[ -n "${MIX:-}" ] && budget="$budget --playout-mix $MIX"
bin=$(mktemp -d)/tabula
if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$bin"
else
  cargo build --profile dist --quiet
  cp target/dist/tabula "$bin"
fi
mkdir -p "$out"
echo "iteration,seconds,games_trained,match_games,wins,win_rate,ci_low,ci_high" > "$out/curve.csv"
for ckpt in "$run"/checkpoints/iter-*.safetensors; do
  name=$(basename "$ckpt" .safetensors)
  it=$((10#${name#iter-}))
  [ "$it" -gt 0 ] && [ $((it % every)) -eq 0 ] || continue
  dir="$out/$name"
  if [ ! -f "$dir/summary.json" ]; then
    echo "== $name: $games games, $budget"
    "$bin" match --engine "$bin gtp --player mcts --model $ckpt --size $size --komi $komi $budget" \
      --opponent "$opponent" --games "$games" --size "$size" --komi "$komi" --out "$dir" > "$dir.log" 2>&1 ||
      { echo "match of $name failed: see $dir.log" >&2; continue; }
  fi
  python3 - "$run/metrics.jsonl" "$dir/summary.json" "$it" >> "$out/curve.csv" <<'EOF'
import json, sys
metrics, summary, it = sys.argv[1], sys.argv[2], int(sys.argv[3])
row = next((m for m in map(json.loads, open(metrics)) if m["iteration"] == it), None)
s = json.load(open(summary))
secs = f"{row['seconds']:.0f}" if row else ""
trained = row["games"] if row else ""
print(f"{it},{secs},{trained},{s['games']},{s['wins']},{s['win_rate']},{s['ci_low']},{s['ci_high']}")
EOF
done
cat "$out/curve.csv"
