#!/usr/bin/env bash
# dtperf-calibrate's command line without a network: --plan output, --quick, exit code 2
# and one clear message for bad usage.  usage: cli_test.sh DTPERF_CALIBRATE
set -uo pipefail
exe=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect_exit() {  # expect_exit CODE PATTERN ARGS...: exit code and a line of stderr+stdout
  local code=$1 pattern=$2; shift 2
  local output status
  output=$("$exe" "$@" 2>&1); status=$?
  [ "$status" -eq "$code" ] || fail "'$*' exited $status, expected $code: $output"
  grep -q -- "$pattern" <<<"$output" || fail "'$*' did not print '$pattern': $output"
}

expect_exit 0 "all_reduce world: 16 ranks on 2 nodes" --backend nccl --plan --nodes 2 --ranks-per-node 8
expect_exit 0 "gemm bf16" --backend nccl --plan
expect_exit 0 "sendrecv pair_inter: 2 ranks on 2 nodes, 8 at once per node" --backend nccl --plan
expect_exit 0 "8 B .. 1 GiB" --backend nccl --plan --budget-s 86400
expect_exit 0 "8 B .. 4 MiB" --backend host --plan --quick
expect_exit 0 "truncated" --backend host --plan --budget-s 5
expect_exit 0 "not truncated" --backend host --plan --budget-s 1000
expect_exit 0 "skipped: needs 2 nodes" --backend host --plan --nodes 1
expect_exit 2 "--rank is required" --backend host
expect_exit 2 "--rendezvous DIR is required" --backend host --rank 0 --world-size 2
expect_exit 2 "is not below --world-size" --backend host --rank 2 --world-size 2 --rendezvous /tmp/x
expect_exit 2 "unknown unit" --backend host --plan --max-bytes 12Q
expect_exit 2 "--rendezvous-timeout-s: 'nan' is not a finite number" --backend host --rank 0 --world-size 2 --rendezvous /tmp/x --rendezvous-timeout-s nan
expect_exit 2 "cannot write -o /nonexistent-dir/out.json: No such file or directory" --backend host --rank 0 --world-size 2 --rendezvous /tmp/x -o /nonexistent-dir/out.json
# A second process with a rank already claimed in the rendezvous folder stops at once.
claimed=$(mktemp -d)
echo "host node7, process 4242" >"$claimed/rank-0.claim"
expect_exit 2 "rank 0 was started twice ($claimed/rank-0.claim is held by host node7, process 4242)" \
  --backend host --rank 0 --world-size 2 --rendezvous "$claimed" --rendezvous-timeout-s 1 -o "$claimed/out.json"
[ -e "$claimed/out.json" ] && fail "a refused rank wrote $claimed/out.json"
rm -rf "$claimed"
expect_exit 2 "smaller than --min-bytes" --backend host --plan --min-bytes 1M --max-bytes 1K
expect_exit 2 "backend" --backend tpu
expect_exit 0 "dtperf-calibrate 0.1.0" --version
if [ "$failures" -ne 0 ]; then echo "$failures failed"; exit 1; fi
echo "calibrate cli: all checks passed"
