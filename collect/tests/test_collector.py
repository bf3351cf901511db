"""The collector on real PyTorch training (CPU): the layer file against the module's real
parameter list, its timings against each other and against dtperf's reading of them, DDP's
bucket assignment against dtperf's, bad input, and recording runs for `dtperf fit --runs`.

Run with the dtperf binary in $DTPERF and the collector importable (installed, or in the
tree: PYTHONPATH=collect): python3 -m unittest discover -s collect/tests
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

import dtperf_collect
import toy_models
from dtperf_collect import RunRecorder, profile, write_model

HERE = os.path.dirname(os.path.abspath(__file__))
# Where the collector under test was found, so that the command line runs the same one.
COLLECTOR_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(dtperf_collect.__file__)))
DTPERF = os.environ.get("DTPERF", "build/src/dtperf")


def dtperf_json(*args):
    out = subprocess.run([DTPERF, *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"dtperf {' '.join(args)} failed: {out.stderr}")
    return json.loads(out.stdout)


class CollectorTest(unittest.TestCase):
    work: str

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()

    def collect_cli(self, spec, *extra):
        path = os.path.join(self.work, spec.replace(":", "_") + ".json")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTOR_ROOT, HERE]))
        out = subprocess.run([sys.executable, "-m", "dtperf_collect", "--model", spec, "--batch", "16", "--iters", "8",
                              "--warmup", "2", "-o", path, *extra], capture_output=True, text=True, env=env, cwd=HERE)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(path) as f:
            return path, json.load(f)

    def test_the_layer_file_lists_the_modules_real_parameters(self):
        path, doc = self.collect_cli("toy_models:cnn")
        model, _ = toy_models.cnn()
        real = {n: p.numel() for n, p in model.named_parameters() if p.requires_grad}
        self.assertEqual({l["name"]: l["params"] for l in doc["layers"]}, real)
        self.assertEqual(len(doc["layers"]), len(real))  # each once
        self.assertEqual(doc["schema"], "dtperf.model/1")
        self.assertEqual(doc["param_bytes"], 4)
        self.assertTrue(all(l["dtype"] == "float32" for l in doc["layers"]))
        # Gradients become ready from the output backwards: the head first, the first conv last.
        names = [l["name"] for l in doc["layers"]]
        self.assertLess(names.index("head.weight"), names.index("features.0.weight"))
        m = doc["measured"]
        for key in ("single_gpu_iteration_ms", "forward_ms", "backward_ms", "optimizer_ms"):
            self.assertGreater(m[key], 0.0, key)
        self.assertLessEqual(m["iteration_p10_ms"], m["single_gpu_iteration_ms"])
        self.assertLessEqual(m["single_gpu_iteration_ms"], m["iteration_p90_ms"])
        # The last gradient is ready before backward returns (medians: 10 % slack).
        waits_ms = sum(l["backward_us"] for l in doc["layers"]) / 1e3
        self.assertTrue(all(l["backward_us"] >= 0.0 for l in doc["layers"]))
        self.assertLessEqual(waits_ms, 1.1 * m["backward_ms"])

    def test_dtperf_reads_the_measured_times_back(self):
        path, doc = self.collect_cli("toy_models:cnn")
        m = doc["measured"]
        r = dtperf_json("predict", "--model", path, "--profile", "gbe10-box", "--nodes", "1", "--gpus-per-node", "1")
        result = r["result"]
        self.assertEqual(r["model"]["compute_source"], "measured-layers")
        # One device: forward, the measured waits and the measured optimizer step, nothing else.
        self.assertAlmostEqual(result["forward_ms"], m["forward_ms"], delta=1e-6 + 1e-6 * m["forward_ms"])
        self.assertAlmostEqual(result["optimizer_ms"], m["optimizer_ms"], delta=1e-6)
        waits_ms = sum(l["backward_us"] for l in doc["layers"]) / 1e3
        self.assertAlmostEqual(result["backward_ms"], waits_ms, delta=1e-6 + 1e-6 * waits_ms)

    def test_forward_flops_per_layer_as_the_profiler_counts_them(self):
        path, doc = self.collect_cli("toy_models:cnn")
        layers = {l["name"]: l for l in doc["layers"]}
        # 2 FLOPs per multiply-add, per sample. Conv 3 -> 16, 3x3, on 32 x 32 (padded):
        # 2 x 16 x 32 x 32 x 3 x 9; conv 16 -> 32, 3x3, on 16 x 16 (after the pooling):
        # 2 x 32 x 16 x 16 x 16 x 9; the head 2 x 32 x 10. Biases and batch norms count
        # none (the profiler counts no FLOPs for them), and carry no FLOPs field.
        expected = {"features.0.weight": 2 * 16 * 32 * 32 * 3 * 9, "features.4.weight": 2 * 32 * 16 * 16 * 16 * 9,
                    "head.weight": 2 * 32 * 10}
        for name, flops in expected.items():
            self.assertAlmostEqual(layers[name]["forward_gflop_per_sample"] * 1e9, flops, delta=1e-6 * flops, msg=name)
            self.assertEqual(layers[name]["kind"], "gemm")
        self.assertEqual({n for n, l in layers.items() if "forward_gflop_per_sample" in l}, set(expected))
        # dtperf computes from them: forward from FLOPs on a GPU, and without them a warning.
        r = dtperf_json("predict", "--model", path, "--profile", "dgx-a100", "--nodes", "1", "--compute-source", "flops")
        self.assertEqual(r["model"]["compute_source"], "flops")
        self.assertFalse(any("gives no FLOPs" in w for w in r.get("warnings", [])))
        for layer in doc["layers"]:
            layer.pop("forward_gflop_per_sample", None)
            layer.pop("kind", None)
        bare = os.path.join(self.work, "cnn-without-flops.json")
        write_model(doc, bare)
        r = dtperf_json("predict", "--model", bare, "--profile", "dgx-a100", "--nodes", "1", "--compute-source", "flops")
        self.assertTrue(any("gives no FLOPs" in w for w in r["warnings"]), r.get("warnings"))

    def test_ddp_buckets_agree_with_dtperfs(self):
        model, batch_fn = toy_models.mlp()
        doc = profile(model, batch_fn, batch=8, iters=4, warmup=1, optimizer="adam")
        path = os.path.join(self.work, "mlp.json")
        write_model(doc, path)
        self.assertEqual(doc["optimizer"], "adam")
        buckets = {l["ddp_bucket"] for l in doc["layers"]}
        # 1.59 MB of fp32 gradients: DDP closes a 1 MiB first bucket, the rest fits in a second.
        self.assertEqual(buckets, {0, 1})
        r = dtperf_json("predict", "--model", path, "--profile", "gbe10-box", "--nodes", "2")
        self.assertEqual(r["result"]["buckets"], len(buckets))
        # Buckets are contiguous runs of the gradient-ready order, as dtperf makes them.
        order = [l["ddp_bucket"] for l in doc["layers"]]
        self.assertEqual(order, sorted(order))

    def test_activation_memory_is_measured_and_read_back(self):
        model, batch_fn = toy_models.mlp()
        doc = profile(model, batch_fn, batch=8, iters=3, warmup=0)
        # Kept for backward per sample, in fp32: the input of the first linear (256), each
        # ReLU's output, which the next linear reads (512 + 512), and MSE's output and target
        # (8 + 8): 1,296 floats.
        self.assertEqual(doc["measured"]["saved_bytes_per_sample"], (256 + 512 + 512 + 8 + 8) * 4)
        path = os.path.join(self.work, "mlp-memory.json")
        write_model(doc, path)
        r = dtperf_json("predict", "--model", path, "--profile", "gbe10-box", "-b", "64")
        self.assertAlmostEqual(r["memory"]["activations_GiB"] * 2**30, 64 * 5184, delta=1e-3)
        self.assertTrue(r["memory"]["activations_known"])

    def test_bad_input_stops_with_a_message(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTOR_ROOT, HERE]))
        for args, message in ((["--model", "no_such_module:build"], "cannot import"),
                              (["--model", "toy_models:nothing"], "has no 'nothing'"),
                              (["--model", "no_such_file.py:build"], "cannot import"),
                              (["--model", "toy_models"], "MODULE:FUNCTION"),
                              (["--model", "toy_models:cnn", "--iters", "1"], "--iters must be from 3"),
                              (["--model", "toy_models:cnn", "--iters", "99999999999999"], "to 1000000, got"),
                              (["--model", "toy_models:mlp", "--batch", "99999999999999999999"], "from 1 to 1000000000"),
                              (["--model", "toy_models:mlp", "--batch", "abc"], "invalid int value: 'abc'"),
                              (["--model", "toy_models:mlp", "--optimizer", "lamb"], "invalid choice: 'lamb'"),
                              (["--batch", "4"], "the following arguments are required: --model"),
                              (["--model", "toy_models:mlp", "--lr", "nan"], "--lr must be a positive finite"),
                              (["--model", "toy_models:mlp", "--bucket-cap-mb", "-5"], "--bucket-cap-mb must be"),
                              (["--model", "toy_models:mlp", "--device", "bogus"], "'bogus' is not a device"),
                              (["--model", "toy_models:mlp", "--device", "cuda:999"], "--device cuda:999")):
            out = subprocess.run([sys.executable, "-m", "dtperf_collect", *args, "-o", os.path.join(self.work, "x.json")],
                                 capture_output=True, text=True, env=env, cwd=HERE)
            self.assertEqual(out.returncode, 2, args)
            self.assertIn(message, out.stderr, args)
            self.assertEqual(len(out.stderr.strip().splitlines()), 1, out.stderr)  # one line, no traceback
            self.assertFalse(os.path.exists(os.path.join(self.work, "x.json")))
        out = subprocess.run([sys.executable, "-m", "dtperf_collect", "--model", "toy_models:mlp", "-o",
                              os.path.join(self.work, "missing", "x.json")], capture_output=True, text=True, env=env,
                             cwd=HERE)
        self.assertEqual(out.returncode, 2)
        self.assertIn("does not exist", out.stderr)
        out = subprocess.run([sys.executable, "-m", "dtperf_collect", "--model", "toy_models:mlp", "-o", self.work],
                             capture_output=True, text=True, env=env, cwd=HERE)
        self.assertEqual(out.returncode, 2)
        self.assertEqual(out.stderr.strip(), f"dtperf_collect: error: -o: {self.work} is a folder; give the file to write")

    def test_a_model_file_is_loaded_from_its_path(self):
        # FILE.py:FUNCTION from another folder, the file's own not on the module search path.
        path = os.path.join(self.work, "from-file.json")
        env = dict(os.environ, PYTHONPATH=COLLECTOR_ROOT)
        out = subprocess.run([sys.executable, "-m", "dtperf_collect", "--model", os.path.join(HERE, "toy_models.py:mlp"),
                              "--batch", "8", "--iters", "3", "--warmup", "0", "-o", path],
                             capture_output=True, text=True, env=env, cwd=self.work)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(path) as f:
            doc = json.load(f)
        model, _ = toy_models.mlp()
        self.assertEqual({l["name"]: l["params"] for l in doc["layers"]},
                         {n: p.numel() for n, p in model.named_parameters()})

    def test_recorded_runs_fit(self):
        path, _ = self.collect_cli("toy_models:cnn")
        runs = os.path.join(self.work, "runs.jsonl")
        ticks = iter(i * 0.010 + (0.001 if i % 2 else 0.0) for i in range(100))
        # 10.5 ms per iteration on average with 1 ms of jitter, after 2 of warm-up.
        for nodes in (1, 2):
            with RunRecorder(runs, label=f"ddp-{nodes}", scheme="all-reduce", nodes=nodes, gpus_per_node=1,
                             batch_per_gpu=16, warmup=2, clock=lambda: next(ticks)) as rec:
                for _ in range(12):
                    rec.step()
            self.assertGreater(rec.summary()["p90"], rec.summary()["p10"])
        with open(runs) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(lines[0]["schema"], "dtperf.runs/1")
        self.assertEqual([l["label"] for l in lines[1:]], ["ddp-1", "ddp-2"])
        self.assertAlmostEqual(lines[1]["iteration_ms"]["median"], 10.0, delta=1.01)
        out = subprocess.run([DTPERF, "fit", "--runs", runs, "--profile", "gbe10-box", "--model", path,
                              "--no-leave-one-out"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("ddp-2", out.stdout)


if __name__ == "__main__":
    unittest.main()
