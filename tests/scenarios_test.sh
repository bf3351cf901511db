#!/usr/bin/env bash
# Every file in scenarios/ runs, prints JSON with --json, and bad scenario files stop with
# their file and JSON pointer.
# usage: scenarios_test.sh PATH/TO/dtperf SCENARIOS_DIR
set -u
dtperf=$1
dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

count=0
for file in "$dir"/*.json; do
  count=$((count + 1))
  if ! "$dtperf" run "$file" --json >"$work/out.json" 2>"$work/err"; then
    fail "$(basename "$file"): $(cat "$work/err")"
  elif ! python3 -c '
import json, sys
text = open(sys.argv[1]).read()
first = text.splitlines()[0]
report = json.loads(first) if first.startswith("{\"") else json.loads(text)  # JSON lines (sweep) or one report
assert report["schema"] in ("dtperf.report/1", "dtperf.sweep/1")' "$work/out.json"; then
    fail "$(basename "$file"): --json did not print a report"
  fi
done
[ "$count" -ge 5 ] || fail "expected the scenario files in $dir, found $count"

# The measured runs fit: each explains its own runs, and the built-in profiles carry none of
# what such a fit finds (they are datasheet values and physics only).
"$dtperf" fit --runs "$dir/runs/dec-allreduce.json" --profile a100x4-ib100 --model transformer-base --dtype fp16 \
  >"$work/fit.txt" 2>&1 || fail "runs/dec-allreduce.json: $(cat "$work/fit.txt")"
"$dtperf" fit --runs "$dir/runs/net-resnet50.json" --profile p3dn-24xlarge --model resnet50 --json \
  >"$work/fit.json" 2>"$work/fit.err" || fail "runs/net-resnet50.json: $(cat "$work/fit.err")"
python3 - "$work/fit.json" <<'PY' || fail "runs/net-resnet50.json is not explained by its fit (stdout, $(wc -c <"$work/fit.json") bytes, begins: $(head -c 200 "$work/fit.json"); stderr: $(head -c 400 "$work/fit.err"))"
import json, sys
fit = json.load(open(sys.argv[1]))["fit"]
assert fit["summary"]["max_abs_error"] < 0.03, fit["summary"]
PY
"$dtperf" profiles --json >"$work/profiles.json" || fail "dtperf profiles --json failed"
python3 - "$work/profiles.json" <<'PY' || fail "a built-in profile carries fitted values"
import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    assert p["provenance"]["source"] == "datasheet", p["name"]
    assert "runs_fit" not in p, p["name"]
    c, t = p["compute"], p.get("transport", {})
    assert c.get("iteration_overhead_us", 0) == 0 and c.get("cross_node_overhead_us", 0) == 0, p["name"]
    assert not any(k in t for k in ("launch_us", "tensor_us", "host_ns_per_byte", "inter_host_ns_per_byte")), p["name"]
PY

check() {  # check PATTERN JSON [ARGS]: the scenario must fail with exit 2 and a message matching PATTERN
  printf '%s' "$2" >"$work/bad.json"
  "$dtperf" run "$work/bad.json" "${@:3}" >/dev/null 2>"$work/err"
  local code=$?
  if [ "$code" -ne 2 ] || ! grep -Eq -- "$1" "$work/err"; then fail "bad scenario ($2) gave $code: $(cat "$work/err")"; fi
}
check "bad.json: at /options/node: 'node' is not an option of dtperf predict \(did you mean 'nodes'\?\)" \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"node": 4}}'
check "bad.json: at /command: unknown value 'predicts' \(did you mean 'predict'\?\)" \
  '{"schema": "dtperf.scenario/1", "command": "predicts"}'
# A bad value is named by its JSON pointer, whether an option's check or the command finds it.
check '^dtperf: error: [^ ]*bad.json: at /options/nodes: -1 is out of range: it must be at least 1$' \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"nodes": -1}}'
check "^dtperf: error: [^ ]*bad.json: at /options/profile: unknown profile 'dgx-a10' \(did you mean 'dgx-a100'\?\)" \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"profile": "dgx-a10"}}'
check "^dtperf: error: [^ ]*bad.json: at /options/model: unknown model 'resnet5' \(did you mean 'resnet50'\?\)" \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"model": "resnet5"}}'
check '^dtperf: error: [^ ]*bad.json: at /options/scheme: ring needs an even number of ranks, got 7' \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"scheme": "ring", "nodes": 7, "gpus-per-node": 1}}'
# ... and a value given after the file is named as the option it is.
check '^dtperf: error: --nodes: -3 is out of range: it must be at least 1$' \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"nodes": 2}}' --nodes -3
# An option given after the file replaces the file's, bad or not.
printf '%s' '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"nodes": -1}}' >"$work/override.json"
"$dtperf" run "$work/override.json" --nodes 2 >/dev/null 2>"$work/err" ||
  fail "an option after the file did not replace the file's bad value: $(cat "$work/err")"
check 'bad.json: at /options/nodes: expected a number or a string, got null' \
  '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"nodes": null}}'
check 'bad.json: line 1, column' '{"schema": '
check "bad.json: at /extra: unknown key 'extra'" '{"schema": "dtperf.scenario/1", "command": "models", "extra": 1}'

if [ "$failures" -ne 0 ]; then
  echo "$failures scenario check(s) failed"
  exit 1
fi
echo "all $count scenarios ran; bad scenario files rejected"
