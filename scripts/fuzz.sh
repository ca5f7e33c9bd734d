#!/bin/sh
# Fuzzing: runs every property-based fuzz target (the `fuzz_*` proptest tests: GTP
# command streams, SGF, Connect Four move strings, Minesweeper position files, training
# configuration TOML, safetensors headers and architecture metadata) for SECONDS each,
# in batches of fresh random cases. A failing input is shrunk by proptest and kept in
# the crate's proptest-regressions/ folder, where every later `cargo test` re-runs it
# first: commit those files with the fix. CI runs each target's default 256 cases.
#   sh scripts/fuzz.sh [SECONDS] [BATCH]        (default 60 s a target, 2000 cases a batch)
set -u
SECONDS_EACH=${1:-60}
BATCH=${2:-2000}
TARGETS="
tabula-core:fuzz_sgf_text
tabula-core:fuzz_sgf_games
tabula-core:fuzz_connect4_move_strings
tabula-mines:fuzz_mines_position_files
tabula-zero:fuzz_config_toml
tabula-nn:fuzz_weight_file_headers
tabula-nn:fuzz_weight_file_architecture
tabula:fuzz_gtp_stream
tabula:fuzz_gtp_line_preprocessing
"
status=0
printf '%-32s %8s %10s  %s\n' target seconds cases result
for t in $TARGETS; do
  pkg=${t%%:*}
  name=${t#*:}
  if [ "$pkg" = tabula ]; then kind="--bin tabula"; else kind="--lib"; fi
  # build first (a package alone may resolve features differently from the workspace),
  # so that the time below is fuzzing time
  # shellcheck disable=SC2086
  cargo test -q --profile ci -p "$pkg" $kind --no-run 2>/dev/null || { echo "$pkg: build failed" >&2; exit 2; }
  start=$(date +%s)
  cases=0
  result=ok
  while [ $(( $(date +%s) - start )) -lt "$SECONDS_EACH" ]; do
    # shellcheck disable=SC2086
    if ! out=$(PROPTEST_CASES=$BATCH cargo test -q --profile ci -p "$pkg" $kind "$name" 2>&1); then
      result=FAILED
      printf '%s\n' "$out" | grep -A25 'minimal failing input' >&2 ||
        printf '%s\n' "$out" | tail -20 >&2
      status=1
      break
    fi
    cases=$((cases + BATCH))
  done
  printf '%-32s %8s %10s  %s\n' "$name" $(( $(date +%s) - start )) "$cases" "$result"
done
exit $status
