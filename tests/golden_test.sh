#!/usr/bin/env bash
# Golden reports: every scenario in scenarios/ run as a user runs it (the table, or the
# scenario's own format, and --json), compared with tests/golden/: tables byte for byte,
# JSON with its numbers rounded to 5 significant digits (golden_json.py), and one report's
# JSON also byte for byte (tests/golden/exact/), which keeps the engine exact. A change
# to the model shows here as a diff to review; when it is meant, regenerate with
#   tests/golden_test.sh build/src/dtperf --update
# and commit the new files with the change. Rows must not depend on the thread count: the
# sweep scenarios also run with 3 threads and must print the same rows.
# usage: golden_test.sh PATH/TO/dtperf [--update]   (run from anywhere; paths are the repo's)
set -u
dtperf=$(realpath "$1")
update=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The report checked at full precision as well: the engine's exactness.
exact=resnet50-p3dn
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for file in scenarios/*.json; do
  name=$(basename "$file" .json)
  command=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["command"])' "$file")
  for kind in text json; do
    args=(run "$file")
    [ "$kind" = json ] && args+=(--json)
    [ "$command" = sweep ] && args+=(--threads 1 --quiet)
    "$dtperf" "${args[@]}" >"$work/$name.$kind" 2>"$work/err" || { fail "$file: $(cat "$work/err")"; continue; }
    # Tables as printed; JSON with its numbers rounded to the digits a user reads
    # (golden_json.py), and one report also exact, the engine's full-precision regression.
    compared=("$work/$name.$kind:tests/golden/$name.$kind")
    if [ "$kind" = json ]; then
      python3 tests/golden_json.py "$work/$name.json" >"$work/$name.rounded" || fail "$file: golden_json.py"
      compared=("$work/$name.rounded:tests/golden/$name.json")
      [ "$name" = "$exact" ] && compared+=("$work/$name.json:tests/golden/exact/$name.json")
    fi
    for pair in "${compared[@]}"; do
      output=${pair%%:*}
      golden=${pair#*:}
      if [ "$update" = --update ]; then
        mkdir -p "$(dirname "$golden")"
        cp "$output" "$golden"
      elif [ ! -e "$golden" ]; then
        fail "$golden is missing (tests/golden_test.sh PATH/TO/dtperf --update writes it)"
      elif ! cmp -s "$output" "$golden"; then
        fail "dtperf ${args[*]} differs from $golden:"
        diff "$golden" "$output" | head -20
      fi
    done
    if [ "$command" = sweep ]; then
      args[${#args[@]}-2]=3  # --threads 3
      "$dtperf" "${args[@]}" >"$work/$name.$kind.3" 2>"$work/err" || fail "$file with 3 threads: $(cat "$work/err")"
      # Rows only: a JSON-lines header records the arguments, the thread count among them.
      skip=1
      [ "$kind" = json ] && skip=2
      cmp -s <(tail -n +$skip "$work/$name.$kind") <(tail -n +$skip "$work/$name.$kind.3") \
        || fail "$file: the rows differ between 1 and 3 threads"
    fi
  done
done

if [ "$failures" -ne 0 ]; then
  echo "$failures golden check(s) failed"
  exit 1
fi
[ "$update" = --update ] && echo "golden reports written to tests/golden/" || echo "all golden reports match"
