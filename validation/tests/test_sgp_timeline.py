"""sgp_timeline.py on the CPU: its model is dtperf's transformer-base tensor for tensor, and
the reference's per-tensor bookkeeping and the flat form compute the same push-sum
update, so timing one against the other compares launches, not arithmetic. Skipped
without PyTorch; the zoo check also needs the dtperf binary ($DTPERF)."""

import importlib.util
import json
import os
import subprocess
import unittest

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch

    import sgp_timeline

DTPERF = os.environ.get("DTPERF", "")


@unittest.skipUnless(HAVE_TORCH, "needs PyTorch")
class SgpTimelineTest(unittest.TestCase):
    @unittest.skipUnless(os.access(DTPERF, os.X_OK), "set DTPERF to the dtperf binary")
    def test_the_model_is_the_zoo_transformer_base(self):
        zoo = json.loads(subprocess.run([DTPERF, "models", "--json"], check=True, capture_output=True,
                                        text=True).stdout)
        expected = next(m for m in zoo["models"] if m["name"] == "transformer-base")
        params = list(sgp_timeline.TransformerBase().parameters())
        self.assertEqual(len(params), expected["tensors"])                 # 253
        self.assertEqual(sum(p.numel() for p in params), expected["params"])  # 60,915,712

    def test_per_tensor_and_flat_bookkeeping_give_the_same_parameters(self):
        dev = sgp_timeline.Device("cpu")
        results = []
        for fused in (False, True):
            torch.manual_seed(0)
            model = sgp_timeline.TransformerBase()
            gossip = sgp_timeline.Gossip(model, dev, fused, transfer_s=0.0)
            try:
                for _ in range(3):  # the second and third add what the gossip thread received
                    gossip.before_forward()
                    with torch.no_grad():
                        for p in model.parameters():
                            p.add_(0.001)  # stands for the optimizer step
                    gossip.after_backward()
                results.append(([p.detach().clone() for p in model.parameters()], gossip.ps_weight.item()))
            finally:
                gossip.close()
        (per_tensor, weight_a), (flat, weight_b) = results
        self.assertAlmostEqual(weight_a, weight_b, places=12)
        for a, b in zip(per_tensor, flat):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
        # and the bookkeeping did something: the parameters moved from their initial values
        torch.manual_seed(0)
        initial = next(sgp_timeline.TransformerBase().parameters())
        self.assertFalse(torch.allclose(initial, per_tensor[0]))


if __name__ == "__main__":
    unittest.main()
