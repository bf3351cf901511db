#!/usr/bin/env bash
# The command line as a user meets it: exit codes (0 ok, 2 bad input), one clear message
# naming the file, place and reason, and no output file left behind on failure.
# usage: cli_test.sh PATH/TO/dtperf TESTS_SOURCE_DIR
set -u
dtperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE PATTERN ARGS...: runs dtperf ARGS, checks the exit code and that stderr
# (for failures) or stdout (for success) matches the extended regex PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  "$dtperf" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local stream="$work/out"
  [ "$code" -ne 0 ] && stream="$work/err"
  if [ "$got" -ne "$code" ]; then
    fail "dtperf $* exited $got, expected $code; stderr: $(head -c 300 "$work/err")"
  elif ! grep -Eq -- "$pattern" "$stream"; then
    fail "dtperf $*: output does not match /$pattern/: $(head -c 300 "$stream")"
  fi
  if [ "$code" -eq 2 ] && [ "$(wc -l <"$work/err")" -ne 1 ]; then
    fail "dtperf $*: a bad input should give one line, got: $(cat "$work/err")"
  fi
}

# --- the main job and the listings
expect 0 'resnet50 .* on 8 x p3dn-24xlarge = 64 GPUs' predict
expect 0 '^#  iteration' predict
expect 0 'gpt2-xl' models
expect 0 'dgx-h100' profiles
expect 0 'Usage' predict --help

# --- JSON output parses and carries the result
"$dtperf" predict --json >"$work/p.json" || fail "predict --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["schema"]=="dtperf.report/1"; assert r["result"]["iteration_ms"]>0' \
  "$work/p.json" || fail "predict --json is not the expected JSON"

# --- -o writes a whole JSON file, and nothing when the input is bad
"$dtperf" predict -o "$work/report.json" >/dev/null || fail "predict -o failed"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/report.json" || fail "-o file is not JSON"
expect 2 'unknown profile' predict --profile nope -o "$work/none.json"
[ -e "$work/none.json" ] && fail "a failed run left $work/none.json"
ls "$work" | grep -q '\.tmp\.' && fail "a temporary file was left behind"

# --- bad command-line values
expect 2 'nodes' predict --nodes 0
expect 2 'nic-gbps' predict --nic-gbps -5
expect 2 'transport-efficiency' predict --transport-efficiency 1.5
expect 2 'algorithm' predict --algorithm butterfly
expect 2 'unknown model .resnet-50. \(did you mean .resnet50.\?\)' predict --model resnet-50
# An option without its value: one line naming it.
expect 2 '^dtperf: error: --nodes: needs a value$' predict --nodes
# Counts are decimal: 010 is ten (not octal eight), 0x10 is refused.
expect 0 'on 10 x p3dn-24xlarge = 80 GPUs' predict --nodes 010
expect 2 "^dtperf: error: --nodes: '0x10' is not a whole number in decimal digits$" predict --nodes 0x10
# So are collective's sizes and step: -b 010K is 10 KiB, -f 010 ten.
expect 0 '^ +10240 +2560 ' collective -b 010K -e 20K
expect 0 '^ +80 +20 ' collective -b 8 -e 80 -f 010
expect 2 "^dtperf: error: --min-bytes: '0x10' is not a whole number in decimal digits \\(with an optional K, M or G\\)$" \
  collective -b 0x10
expect 2 "^dtperf: error: --step-factor: '0x2' is not a whole number in decimal digits$" collective -f 0x2
# An option that takes one value, given twice, is refused (not the last one silently);
# flags and repeatable options may repeat; a scenario's options are overridden by design.
expect 2 '^dtperf: error: --nodes: given twice \(1, then 2\); give it once$' predict --nodes 1 --nodes=2
expect 2 '^dtperf: error: -o: given twice' predict -o "$work/a.json" -o "$work/b.json"
[ -e "$work/a.json" ] || [ -e "$work/b.json" ] && fail "a refused command wrote its -o file"
expect 0 'nodes' predict --json --json
expect 0 '^# 4 points' sweep --vary nodes=1,2 --vary nic-gbps=10,20 --quiet
expect 2 '^dtperf: error: --nodes: given twice \(2, then 3\)' run "$2/../scenarios/a40-ethernet-advise.json" --nodes 2 --nodes 3
expect 2 '^dtperf: error: run: give a scenario file first: dtperf run SCENARIO.json \[OPTIONS...\] \(dtperf run --help\)$' run
# An option where the file goes, or an empty name, is no file (not "--nodes: cannot open the file").
expect 2 '^dtperf: error: run: give a scenario file first: ' run --nodes 2
expect 2 '^dtperf: error: run: give a scenario file first: ' run ""
printf '{"schema": "dtperf.scenario/1", "command": "predict", "options": {"nodes": 18446744073709551615}}' >"$work/huge-nodes-scenario.json"
expect 2 'huge-nodes-scenario.json: at /options/nodes: 18446744073709551615 is out of range: the limit is 1048576$' run "$work/huge-nodes-scenario.json"
expect 0 'on 2 x a40x4-eth25' run "$2/../scenarios/a40-ethernet-advise.json" --nodes 2
# Models by size: the canonical spelling in the header, one clear error for a bad key.
expect 0 'gpt:layers=24,d=2048,heads=32,ffn=8192,seq=2048' predict --model gpt:layers=24,d=2048,seq=2048 --profile dgx-a100
expect 2 "^dtperf: error: --model: llama:layers=2,d=256,kv=2: unknown key 'kv'" predict --model llama:layers=2,d=256,kv=2
expect 2 "unknown profile 'dgx-a10' \(did you mean 'dgx-a100'\?\)" predict --profile dgx-a10
expect 2 "profile 'p3dn-24xlarge' has no bf16 peak" predict --profile p3dn-24xlarge --dtype bf16
expect 2 '' no-such-command

# --- bad profile files
printf '{\n  "schema": "dtperf.profile/1",\n  "name": "x",\n  "nodes": ,\n}\n' >"$work/malformed.json"
expect 2 'malformed.json: line 4, column 12: malformed JSON' predict --profile "$work/malformed.json"
"$dtperf" profiles --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["profiles"][0]
p["inter_node"]["nic_gpbs"] = 100
json.dump(p, open(sys.argv[1], "w"))' "$work/typo.json"
expect 2 "typo.json: at /inter_node/nic_gpbs: unknown key 'nic_gpbs' \(did you mean 'nic_gbps'\?\)" predict --profile "$work/typo.json"
expect 2 'missing.json: cannot open the file' predict --profile "$work/missing.json"
# A collective library whose ring moves in lockstep (gloo), with two collectives in flight
# per group, is named in the header; a misspelt key in its block is refused like any other.
"$dtperf" profiles --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["profiles"][0]
p["transport"] = {"library": "gloo", "lockstep_ring": True, "collectives_in_flight": 2}
json.dump(p, open(sys.argv[1], "w"))
p["transport"] = {"lockstep": True}
json.dump(p, open(sys.argv[2], "w"))' "$work/gloo.json" "$work/gloo-typo.json"
expect 0 'gloo: lockstep ring' predict --profile "$work/gloo.json"
expect 0 '2 collectives in flight per group, sharing the link' predict --profile "$work/gloo.json" --scheme one-peer-exp
expect 2 "gloo-typo.json: at /transport/lockstep: unknown key 'lockstep'" predict --profile "$work/gloo-typo.json"

# --- bad model files
printf 'comment\n1\n3\n10,4000\n20,8\n' >"$work/short.bk.log"
expect 2 'short.bk.log: line 6: truncated' predict --model "$work/short.bk.log"
printf '{"schema": "dtperf.model/1", "name": "m", "layers": [{"params": -3}]}' >"$work/neg.json"
expect 2 'neg.json: at /layers/0/params: expected an integer from 1 to 1000000000000000, got -3' predict --model "$work/neg.json"
# A model of more tensors than the limit (2^18) is refused before its data is read.
printf 'comment\n1\n262145\n10,4000\n' >"$work/deep.bk.log"
expect 2 'deep.bk.log: line 3: 262145 tensors is over the limit of 262144 per model' predict --model "$work/deep.bk.log"
python3 -c 'import json,sys; json.dump({"schema": "dtperf.model/1", "name": "deep", "layers": [{"params": 1}] * 262145}, open(sys.argv[1], "w"))' "$work/deep.json"
expect 2 'deep.json: at /layers: 262145 layers is over the limit of 262144 tensors per model' predict --model "$work/deep.json"
printf 'comment\n1\n2\n10,4000\n20,8\n' >"$work/ok.bk.log"
expect 2 'shorter than the measured backward' predict --model "$work/ok.bk.log" --single-gpu-iteration-ms 0.01
expect 0 'ok ' predict --model "$work/ok.bk.log"
# A collected model measured on the CPU, used with a GPU profile: said in the header, warned
# about on stderr and in the JSON; anchored to a GPU's iteration, no warning.
printf '{"schema": "dtperf.model/1", "name": "cpu-mlp", "batch_per_gpu": 32, "measured": {"single_gpu_iteration_ms": 60, "device": "cpu"}, "layers": [{"params": 1000, "backward_us": 2000}]}' >"$work/cpu.json"
expect 0 'compute: measured-layers \(measured on cpu\)' predict --model "$work/cpu.json" --profile dgx-h100
grep -q "warning: model 'cpu-mlp' was measured on the CPU" "$work/err" || fail "no warning for CPU times on a GPU profile"
expect 0 '"measured_device": "cpu"' predict --model "$work/cpu.json" --profile dgx-h100 --json
grep -q 'these are CPU times' "$work/out" || fail "the JSON report carries no warning for CPU times"
expect 0 'compute: measured-layers' predict --model "$work/cpu.json" --profile dgx-h100 --single-gpu-iteration-ms 20
[ -s "$work/err" ] && fail "a warning although the times were anchored: $(cat "$work/err")"

# --- decentralized schemes: compare, advise, topologies, predict --scheme
dec=(--profile a100x4-ib100 --model transformer-base --global-batch 25000 --dtype fp16)
expect 0 'alternating-exp-ring' compare "${dec[@]}"
expect 0 'not applicable: torus needs' compare "${dec[@]}" --nodes 2
expect 0 '^verdict: ' advise "${dec[@]}"
expect 0 'compute scaled x[0-9.]+ to reproduce 73 ms measured with all-reduce on 8 GPUs' \
  compare "${dec[@]}" --measured-iteration-ms 73 --measured-gpus 8
expect 0 'spectral gap 0.1667' predict "${dec[@]}" --scheme alternating-exp-ring
expect 0 'one-peer-exp .* 0.2000' topologies --gpus 32 --gpus-per-node 4
# One-peer-exp's steps differ: the slow one (52.05 ms) is the p90, above the mean (43.56 ms).
expect 0 'iteration time over the period: p50 40.39 ms, p90 52.05 ms, mean 43.56 ms' \
  predict "${dec[@]}" --measured-iteration-ms 73 --measured-gpus 8 --scheme one-peer-exp
# Node-level gossip: the topology runs over the 8 nodes; a node sends its model once.
expect 0 '# node-level gossip: the GPUs of a node all-reduce their gradients' compare "${dec[@]}" --node-level
expect 2 'node-level ring needs at least 2 nodes' predict "${dec[@]}" --node-level --scheme ring --nodes 1
"$dtperf" predict "${dec[@]}" --scheme one-peer-exp --node-level --json >"$work/node.json" || fail "predict --node-level failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["scheme"]["node_level"] is True; assert r["period"]==3, r["period"]' \
  "$work/node.json" || fail "node-level one-peer-exp over 8 nodes should have a period of 3 steps"
"$dtperf" predict "${dec[@]}" --scheme one-peer-exp --json >"$work/steps.json" || fail "predict --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=[s["iteration_ms"] for s in r["steps"]]; assert len(t)==r["period"]; assert abs(sum(t)/len(t)-r["result"]["iteration_ms"])<1e-6*r["result"]["iteration_ms"], (t, r["result"]["iteration_ms"]); assert r["step_iteration_p50_ms"]<=r["step_iteration_p90_ms"]' \
  "$work/steps.json" || fail "predict --json: the step times do not average to the iteration time"
"$dtperf" advise "${dec[@]}" --json >"$work/advice.json" || fail "advise --json failed"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["advice"]; assert a["verdict"] in ("decentralize","stay with all-reduce","no clear winner"); assert len(a["factors"])==4' \
  "$work/advice.json" || fail "advise --json is not the expected JSON"
# Local SGD / DiLoCo: the round's table, its JSON, the advice's break-even H, and refusals.
expect 0 'round: 50 inner steps of .* ms in 8 groups of 4 GPUs, then 4 streaming synchronisations by all-reduce \(int4\)' \
  predict "${dec[@]}" --scheme diloco --inner-steps 50 --outer-sync streaming --outer-codec int4
"$dtperf" predict "${dec[@]}" --scheme diloco --inner-steps 50 --json >"$work/diloco.json" || fail "predict --scheme diloco --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); d=r["round"]; assert d["groups"]==8 and d["inner_steps"]==50; assert abs(d["round_ms"]/50-r["result"]["iteration_ms"])<1e-9*d["round_ms"]; assert abs(d["compute_utilization"]-50*d["inner_step_ms"]/d["round_ms"])<1e-12' \
  "$work/diloco.json" || fail "predict --scheme diloco --json: the round does not add up"
"$dtperf" advise "${dec[@]}" --json >"$work/advice-low.json" || fail "advise --json failed"
python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["advice"]["low_communication"]; assert l["break_even_inner_steps"]["outcome"] in ("crosses","always_faster","always_slower"); assert l["diloco"]["scheme"]=="diloco"' \
  "$work/advice-low.json" || fail "advise --json has no low-communication section"
expect 2 'diloco: an overlap of 20 inner steps is more than the 12 steps between fragments \(100 / 8\)' \
  predict "${dec[@]}" --scheme diloco --outer-sync streaming --fragments 8 --overlap-steps 20
# Counts at their limit (10^6 each) whose product overflowed an int.
expect 2 'diloco: an overlap of 1000000 inner steps is more than the 1 steps between fragments \(1000000 / 1000000\)' \
  predict "${dec[@]}" --scheme diloco --outer-sync streaming --inner-steps 1000000 --fragments 1000000 --overlap-steps 1000000
expect 2 'local-sgd: needs at least 2 groups: 8 nodes in groups of 8 make 1' predict "${dec[@]}" --scheme local-sgd --group-nodes 8
expect 2 'diloco: gossip between groups pairs them one-peer exponentially: 3 groups is not a power of 2' \
  predict "${dec[@]}" --scheme diloco --outer gossip --nodes 3
expect 2 'outer-codec' predict --scheme diloco --outer-codec fp8
expect 2 'inner-steps' predict --scheme diloco --inner-steps 0
# Gradient accumulation: the header says how the batch splits, the table has the micro-steps.
expect 0 'batch 4 sequences per GPU per micro-step, 4 micro-steps per optimizer step \(16 per GPU per step\)' \
  predict --model gpt2-medium --profile a100x4-ib100 --global-batch 512 --grad-accum-steps 4
expect 0 'accumulation' predict --model gpt2-medium --profile a100x4-ib100 --global-batch 512 --grad-accum-steps 4
expect 2 'grad-accum-steps' predict --grad-accum-steps 0
expect 2 "alternating-exp-ring needs a power-of-two number of whole nodes >= 2, got 3 nodes" \
  predict "${dec[@]}" --scheme alternating-exp-ring --nodes 3
expect 2 "unknown scheme 'aer'; expected one of: all-reduce, sgp" predict --scheme aer
expect 2 "unknown scheme 'rng' \(did you mean 'ring'\?\)" compare --measured-iteration-ms 50 --measured-scheme rng
expect 2 'cannot be reproduced by scaling compute' compare "${dec[@]}" --measured-iteration-ms 0.001
expect 2 'measured-gpus: 6 GPUs neither fill whole nodes of 4 GPUs nor divide one' compare "${dec[@]}" --measured-iteration-ms 70 --measured-gpus 6
# A single-GPU measurement on a multi-GPU node anchors compute on part of one node.
expect 0 'to reproduce 300 ms measured with all-reduce on 1 GPU' predict --profile dgx-a100 --measured-gpus 1 --measured-iteration-ms 300
expect 2 'excludes' predict --batch-per-gpu 8 --global-batch 64

# A measured iteration scaled to the run's batch past the limit: the options that formed it are named,
# and where a model file gave a factor, the file and its keys.
expect 2 '^dtperf: error: --single-gpu-iteration-ms: a measured iteration of 1e\+07 ms \(--single-gpu-iteration-ms\) at 1e-06 samples per GPU \(--measured-batch-per-gpu\), scaled to 1e\+09 samples \(--batch-per-gpu\), is 1e\+19 s per iteration, beyond the limit of 1e\+18 s ' \
  predict --single-gpu-iteration-ms 1e7 --measured-batch-per-gpu 1e-6 --batch-per-gpu 1e9
printf '%s' '{"schema": "dtperf.model/1", "name": "tiny-batch", "batch_per_gpu": 1e9, "measured": {"single_gpu_iteration_ms": 1e7, "batch_per_gpu": 1e-6}, "layers": [{"name": "w", "params": 1000}]}' > "$work/tiny-batch.json"
expect 2 "^dtperf: error: $work/tiny-batch.json: a measured iteration of 1e\+07 ms \(/measured/single_gpu_iteration_ms\) at 1e-06 samples per GPU \(/measured/batch_per_gpu\), scaled to 1e\+09 samples \(/batch_per_gpu\), is 1e\+19 s " \
  predict --model "$work/tiny-batch.json" -o "$work/tiny-batch-out.json"
[ -e "$work/tiny-batch-out.json" ] && fail "a refused model file's prediction wrote its -o file"
expect 2 "^dtperf: error: $work/tiny-batch.json: a measured iteration of 2e\+06 ms \(--single-gpu-iteration-ms\) at 1e-06 samples per GPU \(/measured/batch_per_gpu\), scaled to 1e\+09 samples \(--batch-per-gpu\), is 2e\+18 s " \
  predict --model "$work/tiny-batch.json" --batch-per-gpu 1e9 --single-gpu-iteration-ms 2e6
# A DiLoCo round of a million inner steps, each within the limit of 10^18 s, adds up past it: refused.
expect 2 '^dtperf: error: prediction: diloco on 8 x 8 GPUs: the round time came out as 1e\+19 s, beyond 1e\+18 s; ' \
  predict --single-gpu-iteration-ms 1e7 --measured-batch-per-gpu 1 --batch-per-gpu 1e9 --scheme diloco --inner-steps 1000000

# --- variable compute and stragglers
expect 0 'variable compute: normal law, CV 10 %' predict --compute-cv 0.1 --sim-iterations 50
expect 0 'straggler' predict --slow-rank 3=1.5 --sim-iterations 50
expect 0 'p99' compare --profile a100x4-ib100 --nodes 2 --compute-cv 0.2 --cv-law lognormal --sim-iterations 50
printf '# measured\n120.5\n118.0\n131.2\n' >"$work/times.txt"
expect 0 'factors resampled from 3 measured iteration times' predict --iteration-times "$work/times.txt" --sim-iterations 50
# A UTF-8 byte order mark at the start of a file is skipped, not read as part of its first value.
printf '\xef\xbb\xbf120.5\n118.0\n131.2\n' >"$work/bom_times.txt"
expect 0 'factors resampled from 3 measured iteration times' predict --iteration-times "$work/bom_times.txt" --sim-iterations 50
printf '120.5\nabc\n' >"$work/bad_times.txt"
expect 2 "bad_times.txt: line 2: iteration time 'abc' is not a number" predict --iteration-times "$work/bad_times.txt"
printf '120.5\n' >"$work/one_time.txt"
expect 2 'one_time.txt: expected at least two measured iteration times, found 1' predict --iteration-times "$work/one_time.txt"
expect 2 '--slow-rank: rank 64 does not exist: the cluster has 64 ranks \(0 to 63\)' predict --slow-rank 64=2
expect 2 "--slow-node: expected node=FACTOR \(e.g. 3=1.5\), got '2:1.5'" predict --slow-node 2:1.5
expect 2 '--slow-rank: the factor of rank 1 must be from 0.001 to 1000, got .0.' predict --slow-rank 1=0
expect 2 "^dtperf: error: --slow-node: the factor of node 1 must be from 0.001 to 1000, got '1e-300'$" predict --slow-node 1=1e-300
# Factors for the same rank multiply; the product keeps the range of one factor (repeating
# --slow-node 1=1000 used to reach 1e300 and hang the simulation).
expect 2 "^dtperf: error: --slow-node: the factors given for rank 8 \(node 1\) multiply to 1e\+06, outside \[0.001, 1000\]: give each rank and node one factor$" \
  predict --scheme ring --slow-node 1=1000 --slow-node 1=1000
expect 2 "^dtperf: error: --slow-rank: the factors given for rank 9 \(node 1\) multiply to 1200, outside" \
  predict --slow-node 1=30 --slow-rank 9=40
expect 0 'rank 8 x3, node 1 x0.5' predict --slow-node 1=0.5 --slow-rank 8=3 --sim-iterations 50
expect 2 'excludes' predict --compute-cv 0.1 --iteration-times "$work/times.txt"
# Variable compute simulates every rank: refused before it runs beyond 131,072 GPUs or 2^31
# rank-steps (512 ranks x 5 buckets x 1 step x 1,000,000 iterations; 838,860 fit).
expect 2 '^dtperf: error: --nodes: variable compute simulates every rank, at most 131072 .* 16385 x 8 GPUs are 131080' \
  predict --profile dgx-h100 --nodes 16385 --compute-cv 0.1
expect 2 '^dtperf: error: --sim-iterations: variable compute with all-reduce on 64 x 8 GPUs would simulate 2.56e\+09 rank-steps \(512 ranks x 5 buckets x 1 step per bucket x 1000000 iterations\), beyond the limit of 2.15e\+09 .*simulate at most 838860 iterations here' \
  predict --profile dgx-h100 --nodes 64 --compute-cv 0.1 --sim-iterations 1000000
expect 2 '^dtperf: error: --sim-iterations: variable compute with exponential on 16 x 8 GPUs would simulate' \
  predict --profile dgx-h100 --nodes 16 --scheme exponential --compute-cv 0.1 --sim-iterations 1000000
expect 2 'compute-cv' predict --compute-cv -0.1

# --- dtperf fit: nccl-tests logs and raw calibration files to a profile
cat >"$work/ar.txt" <<'LOG'
#  nThread 1 nGpus 1 minBytes 8 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   1001 on     node-a device  0 [0x18] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid   1002 on     node-b device  0 [0x18] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    20.00    0.05    0.05      0    20.00    0.05    0.05      0
        4096          1024     float     sum      -1    20.16    0.20    0.20      0    20.16    0.20    0.20      0
       65536         16384     float     sum      -1    22.62    2.90    2.90      0    22.62    2.90    2.90      0
      262144         65536     float     sum      -1    30.49   8.60    8.60      0    30.49    8.60    8.60      0
     1048576        262144     float     sum      -1    61.94   16.93   16.93      0    61.94   16.93   16.93      0
     4194304       1048576     float     sum      -1   187.77   22.34   22.34      0   187.77   22.34   22.34      0
     8388608       2097152     float     sum      -1   355.54   23.59   23.59      0   355.54   23.59   23.59      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 10.6
LOG
expect 2 'cannot tell which collective \(all_reduce, all_gather, reduce_scatter, alltoall or sendrecv\) the log measures: it names no nccl-tests program \(e.g. all_reduce_perf\); give --collective$' fit "$work/ar.txt" --base dgx-a100 --nodes 2 -o "$work/never.json"
expect 0 'all_reduce' fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 -o "$work/fitted.json"
expect 2 "^dtperf: error: --created: expected a date YYYY-MM-DD, got '2026-13-45'$" fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --created 2026-13-45 -o "$work/never.json"
expect 2 "^dtperf: error: --created: expected a date YYYY-MM-DD, got '2026-02-30'$" fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --created 2026-02-30 -o "$work/never.json"
expect 0 'all_reduce' fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --created 2024-02-29 -o "$work/leap.json"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["provenance"]["source"]=="calibrated"; assert p["provenance"]["residuals"]' \
  "$work/fitted.json" || fail "the fitted profile lacks its provenance"
expect 0 'iteration' predict --profile "$work/fitted.json"
# A PCIe-only node: one node's all_reduce at busbw 5.6 GB/s and two nodes' at 5.4 GB/s (times
# alpha + 2(n-1)/n x size / busbw). The ring across nodes is as fast as inside one: bound by
# PCIe, so the NICs keep the base profile's efficiency (0.9) instead of 5.4 / 12.5 = 0.43.
python3 - "$work/pcie-node.txt" "$work/pcie-world.txt" <<'PY'
import sys
for path, ranks, hosts, busbw, alpha_us in ((sys.argv[1], 8, 1, 5.6, 20.0), (sys.argv[2], 16, 2, 5.4, 60.0)):
    f = 2 * (ranks - 1) / ranks
    lines = ["# all_reduce_perf", "#  nThread 1 nGpus 1 minBytes 1024 maxBytes 268435456 step: 4(factor)"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on node-{r * hosts // ranks} device {r % (ranks // hosts):2d} [0x18] Tesla T4"
              for r in range(ranks)]
    lines += ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"]
    size = 1024
    while size <= 268435456:
        t = alpha_us + size * f / (busbw * 1e3)
        alg = size / (t * 1e3)
        lines.append(f"{size:12d} {size // 4:13d} float sum -1 {t:10.2f} {alg:7.2f} {alg * f:7.2f} 0 {t:10.2f} {alg:7.2f} {alg * f:7.2f} 0")
        size *= 4
    open(path, "w").write("\n".join(lines) + "\n")
PY
expect 0 'NICs not derived: all_reduce on 16 ranks over 2 nodes reached busbw 5.4 GB/s, 96 % of the 5.6 GB/s' \
  fit "$work/pcie-node.txt" "$work/pcie-world.txt" --base t4x8-pcie-ib100 -o "$work/pcie.json"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["inter_node"]["transport_efficiency"]==0.9, p["inter_node"]' \
  "$work/pcie.json" || fail "a PCIe-bound all_reduce changed the NICs' efficiency"
expect 0 'or the ring was bound inside the node \(PCIe\)' fit "$work/pcie-world.txt" --base t4x8-pcie-ib100 -o "$work/pcie-world.json"
# A fitted segment's bus bandwidth within what the fit can write (1e-14 to 2e6 GB/s); a
# latency-only segment is written near its top, and every fitted profile reads back.
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["calibration"]["fits"][0]["segments"][0]["busbw_GB_per_s"] = 1e-300; json.dump(p, open(sys.argv[2], "w"))' \
  "$work/fitted.json" "$work/fitted-slow-segment.json"
expect 2 "^dtperf: error: [^ ]*fitted-slow-segment.json: at /calibration/fits/0/segments/0/busbw_GB_per_s: expected a number from 1e-14 to 2e\+06, got 1e-300$" predict --profile "$work/fitted-slow-segment.json"
# --holdout: every series fitted on every other size and predicted at the rest; -o optional.
expect 0 '^# held-out error: each series fitted on every other size' fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --holdout
expect 0 'ar.txt +all_reduce +pair_inter +2 +2 +4 +3 ' fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --holdout
# An unknown GPU without GEMM or copy measurements (a host-backend run) gets a generic base, stated.
expect 0 'a generic base stands in' fit "$2/../fuzz/seeds/calibration/host-2-ranks.json" -o "$work/host.json"
# Measurements each in range that fit no machine a profile can hold: refused by name, no profile.
python3 - "$2/../fuzz/seeds/calibration/gemm-copy.json" "$work/slow_gemm.json" <<'PY' || fail "cannot write slow_gemm.json"
import json, sys
raw = json.load(open(sys.argv[1]))
raw["gemm"][0].update(m=1, n=1, k=1, flops=2, time_us=1e10, tflops=2e-16)
json.dump(raw, open(sys.argv[2], "w"))
PY
expect 2 'slow_gemm.json: these measurements fit a profile outside the physical ranges, at /gpu/peak_tflops/bf16: expected a number from 1e-06 to 1e\+06, got 2.0000000000000002e-16; they are not physically consistent \(check their units and sizes\)$' \
  fit "$work/slow_gemm.json" -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a refused fit wrote its profile"
printf '{"schema":"dtperf.runs/1","runs":[{"label":"r0","scheme":"all-reduce","nodes":2,"global_batch":25000,"iteration_ms":1e-06}]}\n' \
  >"$work/nanosecond_run.json"
expect 2 'nanosecond_run.json: these measurements fit a profile outside the physical ranges, at /runs_fit/uncertainty/model_sigma: ' \
  fit --runs "$work/nanosecond_run.json" --profile a100x4-ib100 --model transformer-base --dtype fp16 -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a refused fit --runs wrote its profile"
{ printf '\xef\xbb\xbf'; cat "$2/../fuzz/seeds/calibration/host-2-ranks.json"; } >"$work/bom_calibration.json"
expect 0 'a generic base stands in' fit "$work/bom_calibration.json" -o "$work/host_bom.json"
grep -q '(generic base)' "$work/host.json" || fail "the host run's profile does not name its generic base"
# Without -o, --json prints the profile inside the report; without either, nowhere to put it.
"$dtperf" fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2 --json >"$work/fit-report.json" ||
  fail "fit --json without -o failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["profile"]["schema"]=="dtperf.profile/1", r' \
  "$work/fit-report.json" || fail "fit --json without -o does not carry the profile"
expect 2 "^dtperf: error: --output: fitting calibration inputs needs -o PROFILE.json, or --json to print the profile$" fit "$work/ar.txt" --collective all_reduce --base dgx-a100 --nodes 2
# A profile fitted on 8 nodes predicts the same model at 4, 8 and 16 nodes without a step
# at the measured shape (its table and the formula meet there): the time per iteration
# never falls as nodes are added.
log8="$2/../validation/data/nccl-tests/all_reduce_8x8_h100-ib400_1.txt"
[ -f "$log8" ] || fail "$log8 is missing (validation/data is part of the repository)"
if [ -f "$log8" ]; then
  expect 0 'Wrote the profile' fit "$log8" --base dgx-h100 -o "$work/h100x8.json"
  for n in 4 8 16; do
    "$dtperf" predict --profile "$work/h100x8.json" --model gpt2-xl --nodes $n --json >"$work/n$n.json" ||
      fail "predict at $n nodes on the fitted profile failed"
  done
  python3 - "$work/n4.json" "$work/n8.json" "$work/n16.json" <<'PY' || fail "the fitted profile is not continuous in the node count"
import json, sys
t = [json.load(open(f))["result"]["iteration_ms"] for f in sys.argv[1:]]
assert t[0] <= t[1] * (1 + 1e-9) and t[1] <= t[2] * (1 + 1e-9), t
PY
fi
# Guardrails: a two-node all-reduce whose busbw (tree / NVLS) exceeds what 8 x 400 Gbit/s
# NICs carry is warned about, in the report and under "warnings" in JSON.
log2n="$2/../validation/data/nccl-tests/all_reduce_8x2_dgxh100-ib_1.txt"
[ -f "$log2n" ] || fail "$log2n is missing (validation/data is part of the repository)"
if [ -f "$log2n" ]; then
  expect 0 "^# warning: The NIC rate 489.3 GB/s comes from all_reduce on 16 ranks over 2 nodes" fit "$log2n" --base dgx-h100 -o "$work/h100x2.json"
  "$dtperf" fit "$log2n" --base dgx-h100 --json >"$work/h100x2-report.json" || fail "fit --json on the 2-node log failed"
  python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; assert len(w)==1 and "overstates the NICs" in w[0], w' \
    "$work/h100x2-report.json" || fail "fit --json lacks the two-node warning"
fi
head -n 12 "$work/ar.txt" >"$work/truncated.txt"
printf '     4194304       1048576     float     sum      -1   187.77   22.34\n' >>"$work/truncated.txt"
expect 2 'truncated.txt: line 13: ' fit "$work/truncated.txt" --collective all_reduce --base dgx-a100 --nodes 2 -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a failed fit left $work/never.json"
# Cut after a whole row: the parameter line asks for sizes up to 8 MiB, the table stops at 1 MiB.
head -n 12 "$work/ar.txt" >"$work/cut-at-row.txt"
expect 2 "cut-at-row.txt: line 13: truncated: the table ends at 1048576 B \(line 12\), short of the 8388608 B that the run's parameters \(line 1: minBytes 8, maxBytes 8388608, step x2\) ask for, and the log has no closing '# Avg bus bandwidth' line" \
  fit "$work/cut-at-row.txt" --collective all_reduce --base dgx-a100 --nodes 2 -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a fit of a cut log left $work/never.json"
expect 2 "unknown profile 'dgx-a10' \(did you mean 'dgx-a100'\?\)" fit "$work/ar.txt" --collective all_reduce --base dgx-a10 --nodes 2 -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a failed fit left $work/never.json"

# The set-up script takes --with-mpi (Open MPI for multi-node GPU calibration) and nothing else.
bash "$2/../scripts/setup.sh" --with-mip >"$work/out" 2>"$work/err"
[ $? -eq 2 ] && grep -q "^setup: unknown argument '--with-mip' (known: --with-mpi)$" "$work/err" ||
  fail "setup.sh does not refuse an unknown argument: $(cat "$work/err")"

# --- bad input on the command line: one line, exit 2, the option and the limit named
expect 2 "^dtperf: error: --interference-factor: 'nan' is not a finite number$" compare --interference-factor nan
expect 2 "^dtperf: error: --nic-gbps: 'nan' is not a finite number$" predict --nic-gbps nan
expect 2 "^dtperf: error: --nic-gbps: 'inf' is not a finite number$" predict --nic-gbps inf
expect 2 "^dtperf: error: --nodes: '99999999999999999999...' is not a finite number$" predict --nodes "$(printf '9%.0s' $(seq 309))"
expect 2 "^dtperf: error: --nodes: 4294967296 is out of range: the limit is 1048576$" predict --nodes 4294967296
expect 2 "^dtperf: error: --nodes: 1000000000 is out of range: the limit is 1048576$" predict --nodes 1000000000 --slow-node 1=4
expect 2 "^dtperf: error: --nodes: 100000 nodes x 1024 GPUs is over the limit of 1048576 GPUs$" predict --nodes 100000 --gpus-per-node 1024
expect 2 "^dtperf: error: --nodes: '2.5' is not a whole number$" predict --nodes 2.5
expect 2 "^dtperf: error: --gpus: 100000000 is out of range: the limit is 1048576$" topologies --gpus 100000000
# A schedule lists every group of every step: refused up front past 65,536 GPUs, no file written.
expect 2 "^dtperf: error: --schedule: lists every group of every step up to 65536 GPUs, got --gpus 131072 " topologies --gpus 131072 --gpus-per-node 8 --schedule -o "$work/schedule.json"
[ -e "$work/schedule.json" ] && fail "a refused topologies --schedule wrote its -o file"
expect 0 '^   one-peer-exp  *17 ' topologies --gpus 131072 --gpus-per-node 8
expect 2 "^dtperf: error: --single-gpu-iteration-ms: 1e308 is out of range: the limit is 10000000$" predict --single-gpu-iteration-ms 1e308
expect 2 "^dtperf: error: --slow-rank: the factor of rank 63 must be from 0.001 to 1000, got '1e308'$" compare --slow-rank 63=1e308
expect 2 "^dtperf: error: --slow-node: the factor of node 1 must be from 0.001 to 1000, got '1e200'$" compare --slow-node 1=1e200 --slow-node 1=1e200
expect 2 "^dtperf: error: --interference-factor: 0.5 is out of range: it must be at least 1$" predict --interference-factor 0.5
# Physical ranges (limits.hpp), the same for a flag, a sweep axis and a file: a NIC of
# 1e-300 Gbit/s gave null times and, on a torus, a hang.
expect 2 "^dtperf: error: --nic-gbps: 1e-300 is out of range: it must be at least 0.001$" predict --nic-gbps 1e-300 --transport-efficiency 1e-6 --scheme torus
expect 2 "^dtperf: error: --host-gbps: 1e-9 is out of range: it must be at least 0.001 \(or 0\)$" predict --host-gbps 1e-9
expect 2 "^dtperf: error: --batch-per-gpu: 1e-300 is out of range: it must be at least 1e-06$" predict --batch-per-gpu 1e-300
expect 2 "^dtperf: error: --vary: nic-gbps=1e-300 is outside \[0.001, 100000\]$" sweep --vary nic-gbps=1e-300,1
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["inter_node"]["nic_gbps"] = 1e-300; json.dump(p, open(sys.argv[2], "w"))' \
  "$2/../profiles/dgx-a100.json" "$work/slow-nic.json"
expect 2 "^dtperf: error: [^ ]*slow-nic.json: at /inter_node/nic_gbps: expected a number from 0.001 to 100000, got 1e-300$" predict --profile "$work/slow-nic.json"
python3 -c 'import json, sys; json.dump({"schema": "dtperf.model/1", "name": "big", "layers": [{"params": 10**15}] * 101}, open(sys.argv[1], "w"))' "$work/big-model.json"
expect 2 "^dtperf: error: [^ ]*big-model.json: at /layers/100/params: the model's parameters add up to more than 1e\+17, the limit for a model$" predict --model "$work/big-model.json"
# At the ends of every range the answer is finite: no null in the JSON, exit 0.
"$dtperf" predict --nic-gbps 0.001 --transport-efficiency 1e-6 --scheme torus --compute-cv 0.1 --json >"$work/slowest.json" 2>"$work/err" &&
  ! grep -q null "$work/slowest.json" || fail "the slowest NIC gave no finite answer: $(cat "$work/err")"
expect 2 "^dtperf: error: unknown command 'predic' \(did you mean 'predict'\?\); commands: run, predict, compare, advise, whatif, collective, sweep, merge, fit, models, profiles, topologies$" predic
expect 2 "^dtperf: error: predict: unknown option '--nodez' \(did you mean '--nodes'\?\) \(dtperf predict --help lists them\)$" predict --nodez 3
expect 2 "^dtperf: error: predict: unknown option '--bucket_cap_mb' \(did you mean '--bucket-cap-mib'\?\)" predict --bucket_cap_mb 25
expect 2 "^dtperf: error: A subcommand is required$"
# A key with a newline and a bell in it is echoed escaped: the message stays one line.
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["bad\nkey\u0007"] = 1; json.dump(p, open(sys.argv[2], "w"))' \
  "$2/../profiles/dgx-a100.json" "$work/control-key.json"
expect 2 "^dtperf: error: [^ ]*control-key.json: at /bad\\\\nkey\\\\x07: unknown key 'bad\\\\nkey\\\\x07'; expected one of" predict --profile "$work/control-key.json"
# Files: a size cap (not read until memory runs out), sizes and times in range.
printf '{"schema": "dtperf.profile/1",\n "nodes": 1e999}' >"$work/huge-number.json"
expect 2 "^dtperf: error: [^ ]*huge-number.json: line 2, column 11: the number 1e999 is beyond the range of a double$" predict --profile "$work/huge-number.json"
expect 2 "^dtperf: error: /dev/zero: larger than the limit of 256 MiB for an input file$" predict --profile /dev/zero
python3 - "$work/ar.txt" "$work/huge-size.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"^( +)4194304 ", r"\g<1>" + "9" * 401 + " ", text, count=1, flags=re.M))
PY
expect 2 "huge-size.txt: line [0-9]+: size '99999999999999999999...' is over the limit of 1125899906842624 \(1 PiB\)$" fit "$work/huge-size.txt" --collective all_reduce --base dgx-a100 --nodes 2 -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a failed fit left $work/never.json"

# Errors about named inputs name them as options (the engine and io name inputs, not flags).
expect 2 "^dtperf: error: --scheme: ring needs an even number of ranks, got 7; use 6 or 8 ranks$" predict --scheme ring --nodes 7 --gpus-per-node 1
expect 2 "^dtperf: error: --measured-iteration-ms: 0.001 ms cannot be reproduced by scaling compute" compare --profile a40x4-eth25 --model resnet50 --measured-iteration-ms 0.001
grep -v 'Rank' "$work/ar.txt" >"$work/no-hosts.txt"
expect 2 "^dtperf: error: [^ ]*no-hosts.txt: the log does not say how many nodes its 2 ranks span; give --nodes$" fit "$work/no-hosts.txt" --collective all_reduce --ranks 2 --base dgx-a100 -o "$work/never.json"
expect 2 "^dtperf: error: [^ ]*no-hosts.txt: cannot tell the number of ranks: .* for any number; give --ranks$" fit "$work/no-hosts.txt" --collective sendrecv --base dgx-a100 -o "$work/never.json"
expect 2 "^dtperf: error: --base: unknown profile 'dgx-a10' \(did you mean 'dgx-a100'\?\)" fit "$work/ar.txt" --collective all_reduce --base dgx-a10 --nodes 2 -o "$work/never.json"
# Linear time in the log's length: 200,000 '# collective:' lines (6 MB) took minutes when
# each was compared with all before it; well under a second now (the limit is generous).
python3 - "$work/ar.txt" "$work/long.txt" <<'PY'
import sys
open(sys.argv[2], "w").write("# collective: all_reduce_perf\n" * 200000 + open(sys.argv[1]).read())
PY
timeout 30 "$dtperf" fit "$work/long.txt" --base dgx-a100 --nodes 2 -o "$work/long.json" >/dev/null 2>&1 ||
  fail "a 6 MB log of '# collective:' lines did not fit within 30 s"

# --- dtperf whatif: rates, solvers, nodes to win
expect 0 'NIC-rate  scaling  NIC-util' whatif
expect 0 '^# -: not reached; the scaling factor is at most 99.5 % at any rate' whatif --target 0.95,0.999
expect 0 'alternating-exp-ring beats all-reduce from 2 nodes on' whatif --profile a100x4-ib100 --model transformer-base --dtype fp16 --global-batch 25000 --scheme alternating-exp-ring --rates 25,100
"$dtperf" whatif --json --rates 10,100 --target 0.95 >"$work/whatif.json" || fail "whatif --json failed"
python3 - "$work/whatif.json" <<'PY' || fail "whatif --json lacks its rates or targets"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["command"] == "whatif" and [p["nic_gbps"] for p in r["rates"]] == [10, 100], r["rates"]
t = r["targets"][0]
assert t["scaling_factor"] == 0.95 and 10 < t["least_nic_gbps"] < 100, t
assert t["least_nic_gbps_line_rate"] <= t["least_nic_gbps"], t
PY
expect 2 "^dtperf: error: --rates: 'nan' is not a finite number$" whatif --rates 10,nan
expect 2 "^dtperf: error: --target: 1.5 is out of range" whatif --target 1.5
expect 2 "^dtperf: error: --scheme: unknown scheme 'rng'" whatif --scheme rng

# --- --plot: an SVG chart that renders (rsvg-convert, Debian librsvg2-bin)
expect 0 'NIC-rate' whatif --plot "$work/whatif.svg"
expect 0 'spectral-gap' compare --profile a100x4-ib100 --model transformer-base --plot "$work/compare.svg"
for chart in whatif compare; do
  grep -q 'scaling factor (%)\|iteration (ms)' "$work/$chart.svg" || fail "$chart.svg lacks its axis label"
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert "$work/$chart.svg" -o "$work/$chart.png" || fail "rsvg-convert cannot render $chart.svg"
    [ -s "$work/$chart.png" ] || fail "$chart.png is empty"
  else
    fail "rsvg-convert is missing (scripts/setup.sh installs librsvg2-bin)"
  fi
done
expect 2 "^dtperf: error: --plot: expected a file name ending in .svg" whatif --plot "$work/chart.png"
# A name or file name that is not UTF-8 is written into JSON with U+FFFD, not an internal error.
cp "$work/ar.txt" "$work/latin1-$(printf '\xfe').txt"
expect 0 "Wrote the profile 'bad" fit "$work/latin1-$(printf '\xfe').txt" --collective all_reduce --base dgx-a100 --nodes 2 --name "bad$(printf '\xff')" -o "$work/latin1.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["name"]=="bad\ufffd"' "$work/latin1.json" || fail "a non-UTF-8 name did not become U+FFFD in the profile"
# An echoed key of a megabyte is cut to its first 80 characters (with the / or the quote) and its length.
python3 -c 'import json,sys; open(sys.argv[1],"w").write(json.dumps({"schema":"dtperf.model/1","name":"x","layers":[{"params":1}],"k"*1000000:1}))' "$work/bigkey.json"
expect 2 "at /k{79}\.\.\.\(1000001 characters\): unknown key 'k{79}\.\.\.\(1000001 characters\)'; expected one of" predict --model "$work/bigkey.json"
[ "$(wc -c <"$work/err")" -lt 1000 ] || fail "an error echoed a megabyte key whole"
# -o never overwrites an input of the same command, and writes through a symbolic link.
cp "$work/ar.txt" "$work/input.txt"
expect 2 "^dtperf: error: -o: [^ ]*input.txt is also an input of this command; write the output elsewhere$" fit "$work/input.txt" --collective all_reduce --base dgx-a100 --nodes 2 -o "$work/input.txt"
# -o - is stdout: the report's JSON alone (fit: the profile, its report on stderr), no file named '-'.
(cd "$work" && "$dtperf" predict -o - >"$work/stdout.json") || fail "predict -o - failed"
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['invocation']['arguments'] == ['predict', '-o', '-']" \
  "$work/stdout.json" || fail "predict -o - did not write its JSON report alone on stdout: $(head -c 200 "$work/stdout.json")"
(cd "$work" && "$dtperf" fit "$2/../fuzz/seeds/calibration/host-2-ranks.json" -o - >"$work/profile_stdout.json" 2>"$work/fit_report.txt") \
  || fail "fit -o - failed"
python3 -c "import json, sys; assert 'intra_node' in json.load(open(sys.argv[1]))" "$work/profile_stdout.json" \
  || fail "fit -o - did not write the profile alone on stdout"
grep -q 'all_reduce  world' "$work/fit_report.txt" || fail "fit -o - did not put its report on stderr"
[ -e "$work/-" ] && fail "-o - wrote a file named '-'"
# Two outputs onto one file: refused before anything is written; the file there is kept.
echo kept >"$work/both.svg"
expect 2 "^dtperf: error: --plot: [^ ]*both.svg is also the -o output; give each output its own file$" \
  compare -o "$work/both.svg" --plot "$work/./both.svg"
[ "$(cat "$work/both.svg")" = kept ] || fail "a refused compare replaced the file its -o and --plot both named"
cmp -s "$work/ar.txt" "$work/input.txt" || fail "fit -o overwrote its own input log"
ln -s target.json "$work/link.json"
expect 0 'iteration' predict -o "$work/link.json"
[ -L "$work/link.json" ] && [ -s "$work/target.json" ] || fail "-o replaced a symbolic link instead of writing through it"
# A command's files are all written or none: a plot that cannot be written leaves no -o file.
for cmd in compare whatif; do
  expect 2 "^dtperf: error: [^ ]*missing/p.svg: cannot create the output file$" $cmd -o "$work/both-$cmd.json" --plot "$work/missing/p.svg"
  [ -e "$work/both-$cmd.json" ] && fail "$cmd left its -o file when its plot failed"
done
expect 2 "^dtperf: error: [^ ]*missing/p.svg: cannot create the output file$" sweep --vary nodes=1,2 -o "$work/both-sweep.csv" --plot "$work/missing/p.svg"
[ -e "$work/both-sweep.csv" ] && fail "sweep left its -o file when its plot failed"
ls "$work" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
# What bounds the scaling factor at any NIC rate: PCIe on a PCIe-only node, overheads elsewhere.
"$dtperf" whatif --profile t4x8-pcie-ib100 --model bert-large --json >"$work/pcie.json" || fail "whatif on PCIe failed"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["bound"]; assert b["limit"]=="intra-node-link", b; assert b["unbounded_scaling_factor"]>=b["best_scaling_factor"]+0.01, b' \
  "$work/pcie.json" || fail "whatif does not name PCIe as the bound of a PCIe-only node"
expect 0 'compute and fixed overheads bound it' whatif --scheme alternating-exp-ring --profile a100x4-ib100 --model transformer-base

# --- dtperf collective: nccl-tests' table, predicted; a log beside its prediction
expect 0 '^# Avg bus bandwidth' collective --profile dgx-h100 --nodes 2 -b 1K -e 64M
expect 0 'redop    root     time   algbw   busbw #wrong' collective --collective alltoall --profile dgx-a100
# The predicted table reads back as a log: dtperf fit takes it like nccl-tests' own.
"$dtperf" collective --profile dgx-h100 --nodes 2 -b 1M -e 1G >"$work/predicted.txt" || fail "collective failed"
expect 0 'all_reduce +world +16 +2' fit "$work/predicted.txt" --base dgx-h100 -o "$work/from-prediction.json"
"$dtperf" collective --profile dgx-h100 --nodes 2 -b 1M -e 1G --json >"$work/collective.json" || fail "collective --json failed"
python3 - "$work/collective.json" <<'PY' || fail "collective --json is not the table's numbers"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["collective"] == "all_reduce" and r["ranks"] == 16 and len(r["rows"]) == 11, r
# busbw = size / time x 2(n-1)/n
row = r["rows"][-1]
assert abs(row["predicted_busbw_GB_per_s"] - row["bytes"] / (row["predicted_time_us"] * 1e3) * 30 / 16) < 1e-9, row
PY
expect 0 'sizes >= 1 MiB: error as a factor, .*: geometric mean' collective --profile dgx-a100 --log "$work/ar.txt" --collective all_reduce --nodes 2
expect 2 "^dtperf: error: --collective: all_scatter not in" collective --collective all_scatter
expect 2 "^dtperf: error: --max-bytes: 8 is below --min-bytes 1024$" collective -b 1K -e 8

# --- -o FILE.csv: the report's records (schemes, rates, sizes...) as CSV, not JSON
"$dtperf" compare -o "$work/compare.csv" >/dev/null || fail "compare -o FILE.csv failed"
"$dtperf" compare --json >"$work/compare.json" || fail "compare --json failed"
python3 - "$work/compare.csv" "$work/compare.json" <<'PY' || fail "compare -o FILE.csv is not the schemes as CSV"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
schemes = json.load(open(sys.argv[2]))["schemes"]
assert [r["scheme"] for r in rows] == [s["scheme"] for s in schemes], rows[:1]
for r, s in zip(rows, schemes):
    if s["available"]:
        assert float(r["result.iteration_ms"]) == s["result"]["iteration_ms"]
PY
"$dtperf" whatif -o "$work/whatif.csv" >/dev/null && head -1 "$work/whatif.csv" | grep -q 'at_line_rate.iteration_ms' \
  || fail "whatif -o FILE.csv lacks the flattened rate columns"
expect 2 "^dtperf: error: --output: a profile is JSON; give a .json file" fit x.txt -o "$work/profile.csv"

# --- dtperf sweep: a grid streamed as a table, CSV or JSON lines
expect 0 '^# 12 points' sweep --vary nodes=1:4:x2 --vary nic-gbps=10,100 --vary scheme=all-reduce,ring
"$dtperf" sweep --vary nodes=1:64:x2 --vary scheme=all-reduce,one-peer-exp,torus --vary nic-gbps=10:100:10 \
  -o "$work/sweep.csv" >"$work/sweep.out" || fail "sweep -o FILE.csv failed"
grep -q '^# 210 points written to ' "$work/sweep.out" || fail "sweep -o does not say what it wrote: $(cat "$work/sweep.out")"
"$dtperf" sweep --vary nodes=1:64:x2 --vary scheme=all-reduce,one-peer-exp,torus --vary nic-gbps=10:100:10 \
  --json --threads 1 >"$work/sweep1.jsonl" || fail "sweep --json --threads 1 failed"
"$dtperf" sweep --vary nodes=1:64:x2 --vary scheme=all-reduce,one-peer-exp,torus --vary nic-gbps=10:100:10 \
  --json --threads 3 >"$work/sweep3.jsonl" || fail "sweep --json --threads 3 failed"
# Nothing depends on the threads: not the rows, nor the header (whose record of the command
# leaves out --threads, -o, --shard and --quiet, which change no row).
cmp -s "$work/sweep1.jsonl" "$work/sweep3.jsonl" || fail "sweep output depends on the thread count"
python3 - "$work/sweep.csv" "$work/sweep1.jsonl" <<'PY' || fail "sweep CSV and JSON lines disagree"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lines = [json.loads(l) for l in open(sys.argv[2])]
head, points = lines[0], lines[1:]
# 7 node counts x 3 schemes x 10 rates, the rate fastest
assert head["schema"] == "dtperf.sweep/1" and head["points"] == 210 == len(rows) == len(points), head
assert head["invocation"]["tool"].startswith("dtperf ") and "--json" in head["invocation"]["arguments"], head
assert "--threads" not in head["invocation"]["arguments"], head
assert list(rows[0].keys()) == head["columns"] == list(points[0].keys())
assert [float(r["nic_gbps"]) for r in rows[:10]] == [10 * k for k in range(1, 11)]
for r, p in zip(rows, points):
    assert int(r["index"]) == p["index"]
    if p["iteration_ms"] is None:
        assert r["iteration_ms"] == "" and r["unavailable_reason"] == p["unavailable_reason"] != ""
    else:
        assert abs(float(r["iteration_ms"]) - p["iteration_ms"]) <= 1e-6 * p["iteration_ms"]
# torus on 1 node of 8 GPUs does not fit (8 = 2 x 4, and 2 is below 4): the row says why
torus_1 = [p for p in points if p["scheme"] == "torus" and p["nodes"] == 1]
assert torus_1 and all(p["iteration_ms"] is None and "torus needs" in p["unavailable_reason"] for p in torus_1), torus_1[:1]
# All-Reduce at 10 Gbit/s gets slower per iteration from 2 to 64 nodes
ar = [p["iteration_ms"] for p in points if p["scheme"] == "all-reduce" and p["nic_gbps"] == 10 and p["nodes"] >= 2]
assert ar == sorted(ar), ar
PY
expect 0 ' CV ' sweep --vary compute-cv=0,0.1 --vary nodes=2 --sim-iterations 100 --format table
expect 0 'p99' sweep --vary compute-cv=0,0.1 --vary nodes=2 --sim-iterations 100
expect 0 'gpt2-xl' sweep --vary model=resnet50,gpt2-xl --profile dgx-a100 --dtype fp16
expect 0 'NIC-rate' sweep --vary nic-gbps=1,10,100 --vary scheme=all-reduce,ring --plot "$work/sweep.svg"
grep -q 'iteration (ms)' "$work/sweep.svg" || fail "sweep.svg lacks its axis label"
if command -v rsvg-convert >/dev/null; then
  rsvg-convert "$work/sweep.svg" -o "$work/sweep.png" && [ -s "$work/sweep.png" ] || fail "sweep.svg does not render"
fi
expect 2 "^dtperf: error: --vary: unknown axis 'node' \(did you mean 'nodes'\?\)" sweep --vary node=1,2
expect 2 "^dtperf: error: --vary: nodes: '8:1': the range ends before it starts$" sweep --vary nodes=8:1
# A value listed twice would write its rows twice: a typo, or ranges that overlap.
expect 2 "^dtperf: error: --vary: nodes: 4 is listed twice$" sweep --vary nodes=1:4,4:8 -o "$work/never.csv"
expect 2 "^dtperf: error: --vary: scheme: 'ring' is listed twice$" sweep --vary scheme=all,ring -o "$work/never.csv"
expect 2 "^dtperf: error: --vary: model: 'resnet50' is listed twice$" sweep --vary model=resnet50,resnet50 -o "$work/never.csv"
expect 2 "^dtperf: error: --vary: nic-gbps: 10 is listed twice$" sweep --vary nic-gbps=10,10.0 -o "$work/never.csv"
expect 2 "^dtperf: error: --vary: nic-gbps=0 is outside \[0.001, 100000\]$" sweep --vary nic-gbps=0,10 -o "$work/never.csv"
[ -e "$work/never.csv" ] && fail "a refused sweep left $work/never.csv"
expect 2 "the grid has more than 1000000000 points" sweep --vary nodes=1:10000 --vary nic-gbps=1:10000 --vary batch-per-gpu=1:100
expect 2 "^dtperf: error: --output: '.*sweep.xlsx': the format follows the extension" sweep --vary nodes=1,2 -o "$work/sweep.xlsx"
expect 2 "^dtperf: error: --plot: the chart needs a numeric axis" sweep --vary scheme=all --plot "$work/never.svg"
# --- sweep --shard K/N and merge: four shards joined are the unsharded run's file, byte for
# byte, in CSV and JSON lines, whatever order the shards are given in and however many
# threads made them; a shard missing, twice, cut short or of another grid is refused.
grid=(--vary scheme=all-reduce,ring,torus --vary nodes=1:16:x2 --vary nic-gbps=10,100 --compute-cv 0.05
  --sim-iterations 100 --quiet)
"$dtperf" sweep "${grid[@]}" -o "$work/whole.jsonl" >/dev/null || fail "sweep -o whole.jsonl failed"
"$dtperf" sweep "${grid[@]}" -o "$work/whole.csv" --threads 1 >/dev/null || fail "sweep -o whole.csv failed"
for k in 0 1 2 3; do
  "$dtperf" sweep "${grid[@]}" --shard $k/4 --threads 3 -o "$work/part$k.jsonl" >"$work/part.out" || fail "shard $k/4 failed"
  "$dtperf" sweep "${grid[@]}" --shard $k/4 -o "$work/part$k.csv" >/dev/null || fail "shard $k/4 as CSV failed"
done
grep -q '^# shard 3/4: 7 of 30 points written to ' "$work/part.out" || fail "a shard does not say what it wrote: $(cat "$work/part.out")"
expect 0 '^# 4 shards merged: 30 points written to ' merge "$work/part2.jsonl" "$work/part0.jsonl" "$work/part3.jsonl" \
  "$work/part1.jsonl" -o "$work/merged.jsonl"
cmp -s "$work/whole.jsonl" "$work/merged.jsonl" || fail "merged JSON-lines shards differ from the unsharded run"
"$dtperf" merge "$work"/part*.csv >"$work/merged.csv" || fail "merge of CSV shards to stdout failed"
cmp -s "$work/whole.csv" "$work/merged.csv" || fail "merged CSV shards differ from the unsharded run"
{ printf '\xef\xbb\xbf'; cat "$work/part0.csv"; } >"$work/bom_part0.csv"
"$dtperf" merge "$work/bom_part0.csv" "$work"/part[123].csv >"$work/merged_bom.csv" || fail "merge of a CSV shard with a byte order mark failed"
cmp -s "$work/whole.csv" "$work/merged_bom.csv" || fail "merged CSV shards, one with a byte order mark, differ from the unsharded run"
python3 - "$work/part1.jsonl" <<'PY' || fail "a shard's rows are not every fourth point from 1"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
head = json.loads(lines[0])
assert head["shard"] == {"index": 1, "count": 4} and head["points"] == 30, head
assert [json.loads(l)["index"] for l in lines[1:]] == list(range(1, 30, 4))
assert "--shard" not in head["invocation"]["arguments"] and "-o" not in head["invocation"]["arguments"]
PY
expect 2 "part0.jsonl: line 1: shard 0/4, but 3 files were given: give all 4 shards$" merge "$work"/part[012].jsonl -o "$work/never.jsonl"
[ -e "$work/never.jsonl" ] && fail "a refused merge left its output file"
expect 2 "part3.csv: line 2: shard 2 of 3 is missing \(this file is shard 3\)" merge "$work"/part[013].csv
expect 2 "part1.csv: line 2: shard 1 again" merge "$work"/part[0-1].csv "$work/part1.csv" "$work/part3.csv"
head -n -1 "$work/part3.jsonl" >"$work/cut3.jsonl"
expect 2 "cut3.jsonl: ends after 6 rows, while .*part0.jsonl has more" merge "$work"/part[012].jsonl "$work/cut3.jsonl"
head -c -9 "$work/part2.csv" >"$work/cut2.csv"
expect 2 "cut2.csv: line 8: cut short: the last line has no newline" merge "$work"/part[013].csv "$work/cut2.csv"
"$dtperf" sweep --vary nodes=1:16:x2 --shard 0/2 -o "$work/other0.jsonl" >/dev/null
expect 2 "other0.jsonl: line 1: not a shard of the same sweep as " merge "$work/part1.jsonl" "$work/other0.jsonl" \
  "$work/part2.jsonl" "$work/part3.jsonl"
expect 2 "part1.csv: line 1: CSV and JSON-lines shards cannot be merged together" merge "$work/part0.jsonl" "$work/part1.csv"
expect 2 "whole.jsonl: line 1: the header has no shard" merge "$work/whole.jsonl"
expect 2 "^dtperf: error: --shard: '4/4': K must be less than N" sweep --vary nodes=1,2 --shard 4/4 -o "$work/never.csv"
expect 2 "^dtperf: error: --shard: '1': no '/'" sweep --vary nodes=1,2 --shard 1 -o "$work/never.csv"
expect 2 "^dtperf: error: --shard: a shard is written as CSV or JSON lines" sweep --vary nodes=1,2 --shard 0/2
[ -e "$work/never.csv" ] && fail "a refused shard left its output file"
cat >"$work/sweep-scenario.json" <<'JSON'
{"schema": "dtperf.scenario/1", "command": "sweep",
 "options": {"profile": "a100x4-ib100", "model": "transformer-base", "vary": ["nodes=2:16:x2", "scheme=all-reduce,alternating-exp-ring"], "format": "csv"}}
JSON
expect 0 '^index,model,scheme,nodes' run "$work/sweep-scenario.json"
sed 's/nodes=2:16:x2/nodes=2:16:y2/' "$work/sweep-scenario.json" >"$work/bad-sweep-scenario.json"
expect 2 "bad-sweep-scenario.json: at /options/vary: nodes: '16:y2' is not a number|bad-sweep-scenario.json: at /options/vary.*'y2' is not a number" run "$work/bad-sweep-scenario.json"

# --- dtperf fit --runs: measured training runs to a fitted profile
cat >"$work/runs.json" <<'RUNS'
{"schema": "dtperf.runs/1", "runs": [
  {"label": "ar-8",  "scheme": "all-reduce", "nodes": 2, "global_batch": 25000, "iteration_ms": 73.0},
  {"label": "ar-16", "scheme": "all-reduce", "nodes": 4, "global_batch": 25000, "iteration_ms": {"median": 54.8, "p10": 54.0, "p90": 56.1}},
  {"label": "ar-32", "scheme": "all-reduce", "nodes": 8, "global_batch": 25000, "iteration_ms": 51.5}]}
RUNS
expect 0 'compute_scale .* pinned' fit --runs "$work/runs.json" --profile a100x4-ib100 --model transformer-base --dtype fp16 -o "$work/runs-fitted.json"
expect 0 'leave-one-out median' fit --runs "$work/runs.json" --profile a100x4-ib100 --model transformer-base --dtype fp16
# A run's host ceiling: 0 lifts it, anything else is a per-node rate in the NIC range.
sed 's/"nodes": 8,/"nodes": 8, "host_gbps": 1e6,/' "$work/runs.json" >"$work/runs-host.json"
expect 2 'runs-host.json: at /runs/2/host_gbps: expected 0 \(no ceiling\) or a number from 0.001 to 100000, got 1e\+06' fit --runs "$work/runs-host.json" --profile a100x4-ib100 --model transformer-base --dtype fp16
sed 's/"nodes": 8,/"nodes": 8, "host_gbps": 0,/' "$work/runs.json" >"$work/runs-host.json"
expect 0 'leave-one-out median' fit --runs "$work/runs-host.json" --profile a100x4-ib100 --model transformer-base --dtype fp16
# Runs of several models (each run names its own): no --model needed.
expect 0 '3 models on dgx-a100 \(4 runs\)' fit --runs "$2/../validation/data/validation-s3/mpt-a100-fsdp.json" --profile dgx-a100 --no-leave-one-out
expect 2 'needs --model: the model the runs trained \(or a "model" in every run\)' fit --runs "$work/runs.json" --profile a100x4-ib100
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["runs_fit"]["models"]==["transformer-base"]; assert p["runs_fit"]["forward_scale"]>1' \
  "$work/runs-fitted.json" || fail "the runs-fitted profile lacks its runs_fit block"
expect 0 'fitted to 3 measured runs' predict --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000
expect 0 'alternating-exp-ring' compare --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000
# Every predicting command carries the fitted profile's band: P10 <= the prediction <= P90.
expect 0 '^# iteration [0-9.]+ ms, P10-P90 [0-9.]+-[0-9.]+ ms' predict --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000 --scheme alternating-exp-ring
expect 0 'P10-P90' compare --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000
expect 0 '^speedup P10-P90 from the fitted profile' advise --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000
for cmd in "predict --scheme alternating-exp-ring" compare advise whatif "sweep --vary nodes=2,4 --quiet"; do
  # shellcheck disable=SC2086
  "$dtperf" $cmd --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000 --json \
    >"$work/band.json" || fail "$cmd --json with the fitted profile failed"
  python3 - "$work/band.json" "$cmd" <<'PY' || fail "$cmd --json lacks a band from the fitted profile"
import json, sys
text = open(sys.argv[1]).read()
lines = [json.loads(l) for l in text.splitlines()] if sys.argv[2].startswith("sweep") else [json.loads(text)]
bands = []
def walk(x):
    if isinstance(x, dict):
        if "iteration_p10_ms" in x: bands.append((x["iteration_p10_ms"], x["iteration_p90_ms"]))
        if x.get("band_p10_ms") is not None: bands.append((x["band_p10_ms"], x["band_p90_ms"]))
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
for l in lines: walk(l)
assert bands and all(0 < lo < hi for lo, hi in bands), bands
PY
done
"$dtperf" fit --runs "$work/runs.json" --profile a100x4-ib100 --model transformer-base --dtype fp16 --json >"$work/fit.json" \
  || fail "fit --runs --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r["fit"]["runs"])==3; assert "leave_one_out_error" in r["fit"]["runs"][0]' \
  "$work/fit.json" || fail "fit --runs --json lacks the runs"
# Two runs of one configuration 46 % apart: no model explains both, and the notes say which.
sed 's/"iteration_ms": 51.5}]}/"iteration_ms": 51.5},\n  {"label": "ar-16-again", "scheme": "all-reduce", "nodes": 4, "global_batch": 25000, "iteration_ms": 80.0}]}/' \
  "$work/runs.json" >"$work/twice.json"
"$dtperf" fit --runs "$work/twice.json" --profile a100x4-ib100 --model transformer-base --dtype fp16 --json >"$work/twice-fit.json" \
  || fail "fit --runs --json of inconsistent runs failed"
python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["fit"]["notes"]; bad=[x for x in n if x["kind"]=="run_not_explained"]; assert {x["run"] for x in bad} >= {"ar-16-again"}, n; assert all("not explained within 10 %" in x["text"] for x in bad)' \
  "$work/twice-fit.json" || fail "fit --runs --json does not name the runs it cannot explain"
# A fit is held to 10 s of its priced predictions: 300 random matchings on 32 nodes of 8,
# every rank simulated, would take minutes. Its first scan alone is priced at about 94 s
# of one core (521 evaluations of 180 ms): refused before the search on up to 9 cores, on
# more once the search has spent the 10 s; either way exit 2 and no profile left behind.
python3 -c 'import json
runs = [{"label": f"r{i}", "scheme": "random-matching", "nodes": 32, "nic_gbps": 5 + i / 4, "iteration_ms": 250}
        for i in range(300)]
print(json.dumps({"schema": "dtperf.runs/1", "runs": runs}))' >"$work/rm-300.json"
# Its first evaluation can run past a second (instrumented builds, slow machines), so
# progress lines may come before the refusal: the refusal is the last line, alone.
"$dtperf" fit --runs "$work/rm-300.json" --profile p3dn-24xlarge --model resnet50 -o "$work/rm-300-fitted.json" \
  >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "fit --runs of 300 random matchings exited $status, expected 2"
tail -n 1 "$work/err" | grep -Eq 'rm-300.json: (fitting these runs would take about [0-9.]+ s or more on [0-9]+ threads? \(their 300 distinct configurations|the fit would take more than the 10 s it may take: after [0-9]+ evaluations of its 300 distinct)' \
  || fail "fit --runs of 300 random matchings: not the refusal: $(tail -n 1 "$work/err")"
[ "$(grep -cv '^dtperf: fit: ' "$work/err")" -eq 1 ] || fail "fit --runs of 300 random matchings: more than the refusal and progress: $(cat "$work/err")"
[ ! -e "$work/rm-300-fitted.json" ] || fail "a refused fit left its profile behind"
# A prediction no fit narrows carries the datasheet's band. On one GPU the iteration T is
# the compute C (x the compute scale s) and the optimizer step, and no link between nodes,
# so g = d ln T / d ln s = C / T. The next cluster's ln s: mean 0.19, predictive sd
# 0.33 sqrt(1 + 1/8) t90(7) / 1.2816 = 0.33 x 1.0607 x 1.4149 / 1.2816 (eight clusters), so
# sigma = sqrt((0.3864 g)^2 + 0.02^2) and P10, P90 = T exp(0.19 g -/+ 1.2816 sigma).
"$dtperf" predict --profile dgx-a100 --nodes 1 --gpus-per-node 1 --json >"$work/datasheet-band.json" \
  || fail "predict on one GPU failed"
python3 - "$work/datasheet-band.json" <<'PY' || fail "the datasheet band on one GPU is not the arithmetic above"
import json, math, sys
j = json.load(open(sys.argv[1]))
assert j["band_source"] == "datasheet", j.get("band_source")
t = j["result"]["iteration_ms"]
g = (j["result"]["forward_ms"] + j["result"]["backward_ms"]) / t
sigma = math.hypot(0.33 * math.sqrt(1 + 1 / 8) * 1.4149 / 1.2816 * g, 0.02)
assert abs(j["band"]["iteration_p90_ms"] / (t * math.exp(0.19 * g + 1.2816 * sigma)) - 1) < 1e-3, (j["band"], t, g)
assert abs(j["band"]["iteration_p10_ms"] / (t * math.exp(0.19 * g - 1.2816 * sigma)) - 1) < 1e-3, (j["band"], t, g)
PY
# Measured compute (a single-GPU iteration, a per-layer log): the links' term alone. On one
# GPU that leaves the model's 2 % residual: P90 = T exp(1.2816 x 0.02).
for args in "--single-gpu-iteration-ms 100" "--model $2/../validation/data/training-bottleneck/resnet50.bk.log"; do
  # shellcheck disable=SC2086
  "$dtperf" predict $args --nodes 1 --gpus-per-node 1 --json >"$work/links-band.json" || fail "predict $args failed"
  python3 -c 'import json,math,sys; j=json.load(open(sys.argv[1])); t=j["result"]["iteration_ms"]; assert abs(j["band"]["iteration_p90_ms"]/(t*math.exp(1.2816*0.02))-1)<1e-6, j["band"]' \
    "$work/links-band.json" || fail "predict $args: measured compute on one GPU has more than the residual in its band"
done
expect 0 'P10-P90 [0-9.]+-[0-9.]+ ms: the datasheet.s uncertainty \(inter-node efficiency x0.87 \+/- x1.56' predict --single-gpu-iteration-ms 100
expect 0 'P10-P90 [0-9.]+-[0-9.]+ ms: the fitted profile' predict --profile "$work/runs-fitted.json" --model transformer-base --dtype fp16 --global-batch 25000
expect 0 'P10-P90 [0-9.]+-[0-9.]+ ms: the datasheet.s uncertainty \(compute time from FLOPs x1.21 \+/- x1.47' predict --profile "$work/runs-fitted.json" --model resnet50
# An anchor scales compute to a measured iteration: no datasheet band on top.
"$dtperf" predict --measured-iteration-ms 150 --json >"$work/anchored.json" || fail "predict with an anchor failed"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "band" not in j and "band_source" not in j' \
  "$work/anchored.json" || fail "an anchored prediction has a datasheet band"
# A decisive verdict whose speedup band lies on both sides of 1 turns uncertain (one slow
# node among A100s: random-matching 1.089x, band about 0.9x to 1.3x); a tie within 5 %
# stays "no clear winner", with the band and what would settle it.
expect 0 '^verdict: uncertain' run "$2/../scenarios/slow-node-among-a100s.json"
expect 0 '^verdict: no clear winner' advise
expect 0 '^speedup P10-P90 from the datasheet.s uncertainty: [0-9.]+x to [0-9.]+x; on both sides of 1: measure' advise
python3 - "$work/runs-fitted.json" "$work/bad-band.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["runs_fit"]["uncertainty"]["covariance"].pop()
json.dump(p, open(sys.argv[2], "w"))
PY
expect 2 'bad-band.json: at /runs_fit/uncertainty/covariance: has [0-9]+ rows for [0-9]+ parameters' predict --profile "$work/bad-band.json"
"$dtperf" predict --profile "$work/runs-fitted.json" --model resnet50 2>"$work/warn" >/dev/null || fail "predict with another model failed"
grep -q "fitted to runs of 'transformer-base'" "$work/warn" || fail "no warning for a profile fitted to another model"
sed 's/"nodes": 4,/"nodez": 4,/' "$work/runs.json" >"$work/bad-runs.json"
expect 2 "bad-runs.json: at /runs/1/nodes: missing required field 'nodes' \\(is 'nodez' a typo\\?\\)" fit --runs "$work/bad-runs.json" --profile a100x4-ib100 --model transformer-base -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a failed runs fit left $work/never.json"
sed 's/"scheme": "all-reduce", "nodes": 8/"scheme": "one-peer-exp", "nodes": 3/' "$work/runs.json" >"$work/odd-runs.json"
expect 2 'odd-runs.json: at /runs/2: one-peer-exp needs a power-of-two' fit --runs "$work/odd-runs.json" --profile a100x4-ib100 --model transformer-base -o "$work/never.json"
[ -e "$work/never.json" ] && fail "a failed runs fit left $work/never.json"
expect 2 'needs --model' fit --runs "$work/runs.json" --profile a100x4-ib100
expect 2 'is for calibration inputs' fit --runs "$work/runs.json" --profile a100x4-ib100 --model transformer-base --nodes 2
expect 2 'nothing to fit' fit

# The compute-CV search simulates every rank: GPT-2 XL on 8,192 GPUs is 8,192 x (All-Reduce's
# 145 buckets + the topology's 145) = 2,375,680 rank-buckets per iteration, over the 2^21 it runs.
expect 0 'compute:   not searched at this size: the search simulates every rank, 2375680 rank-buckets per iteration here .*, over its limit of 2097152' advise --profile dgx-h100 --model gpt2-xl --nodes 1024
expect 0 'compute:   alternating-exp-ring is faster than all-reduce above a compute CV of' advise --profile dgx-h100 --model gpt2-xl --nodes 128
# With variable compute the NIC-rate scan simulates every rank at each rate: GPT-2 XL on 2,048
# GPUs is 2,048 x (145 + 145) = 593,920 rank-buckets per iteration, over the 2^19 it runs.
expect 0 'bandwidth: not searched at this size: with variable compute the scan simulates every rank, 593920 rank-buckets per iteration here .*, over its limit of 524288' advise --profile dgx-h100 --model gpt2-xl --nodes 256 --compute-cv 0.1 --sim-iterations 5
# A command's simulations together are held to 10 s on the reference core, refused before
# any runs: compare at 131,072 GPUs with 1,000 iterations is estimated at about 52 s.
expect 2 '--sim-iterations: variable compute on 16384 x 8 GPUs would simulate every rank of each scheme for about [0-9]+ s in all .*beyond the limit of 10 s for one command .*: simulate at most [0-9]+ iterations here' compare --profile dgx-h100 --nodes 16384 --gpus-per-node 8 --compute-cv 0.1
expect 2 '--sim-iterations: variable compute on 16384 x 8 GPUs would simulate every rank of each scheme' advise --profile dgx-h100 --nodes 16384 --gpus-per-node 8 --compute-cv 0.1

# Memory: a breakdown in predict, a verdict when nothing fits, recomputation trades memory for time.
expect 0 '# memory per GPU: .* of 32 GiB \(weights' predict
expect 0 'verdict: does not fit: no replicated scheme fits in GPU memory.* Sharded, fsdp fits' advise --model llama-7b --profile dgx-h100 --dtype bf16
expect 0 '# scheme: fsdp' predict --model llama-7b --profile dgx-h100 --dtype bf16 --scheme fsdp --grad-dtype bf16
expect 0 'hsdp' compare --model gpt2-medium --profile dgx-a100
expect 2 "unknown scheme 'zero-4' \(did you mean 'zero-1'\?\)" predict --scheme zero-4
expect 2 'grad-dtype' predict --grad-dtype int8
expect 0 'does not fit in GPU memory \(80 GiB\): all-reduce, ' compare --model llama-7b --profile dgx-h100 --dtype bf16
# GPT-2 small with eager attention: its score matrices are most of what recomputation saves.
gpt2_eager=gpt:layers=12,d=768,heads=12,ffn=3072,seq=1024,vocab=50257,batch=8,attention=eager,dropout=yes
"$dtperf" predict --model "$gpt2_eager" --json >"$work/plain.json" || fail "predict gpt2-small (eager) failed"
"$dtperf" predict --model "$gpt2_eager" --recompute-activations --json >"$work/recompute.json" || fail "predict --recompute-activations failed"
python3 -c 'import json,sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b["memory"]["activations_GiB"] < 0.3 * a["memory"]["activations_GiB"], "recomputation keeps less"
assert abs(b["result"]["backward_ms"] - a["result"]["backward_ms"] - a["result"]["forward_ms"]) < 1e-6 * b["result"]["backward_ms"], "one more forward"' \
  "$work/plain.json" "$work/recompute.json" || fail "--recompute-activations: memory or time not as expected"

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "all CLI checks passed"
