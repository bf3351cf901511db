#!/usr/bin/env bash
# A short fuzzing pass: run.sh TARGET SECONDS SEED_DIR...
# The corpus starts from the seed folders that exist (a missing one is skipped) and grows
# in a temporary folder. Mutations splice in the numeric extremes of numbers.dict.
# FUZZ_RUNS=N runs N inputs instead of SECONDS (the long pass docs/TESTING.md records).
# Fails on any finding: libFuzzer exits non-zero and leaves the input as crash-*/timeout-*
# in the temporary folder, whose path it prints.
set -euo pipefail
dict=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/numbers.dict
target=$(realpath "$1")  # absolute: the pass runs in a temporary folder
seconds=$2
shift 2
work=$(mktemp -d)
seeds=()
for dir in "$@"; do
  [ -d "$dir" ] && seeds+=("$(realpath "$dir")")
done
cd "$work"
mkdir corpus
status=0
limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
"$target" "${limit[@]}" -dict="$dict" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$work/" corpus "${seeds[@]}" >fuzz.log 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  # The report: the sanitizer's or the uncaught exception's message and its first frames.
  grep -E -A 12 "ERROR:|runtime error|terminate called|Timeout|out-of-memory" fuzz.log | head -n 40
  echo "fuzz: $(basename "$target") found a problem; the input and fuzz.log are in $work" >&2
  exit 1
fi
grep -E "^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)" fuzz.log
rm -rf "$work"
