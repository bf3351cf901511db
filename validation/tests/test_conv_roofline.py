"""conv_roofline.py's price of one convolution: the bytes a pass moves and the slower of
its arithmetic at the profile's GEMM efficiency and its traffic at the copy bandwidth."""

import unittest

import conv_roofline

PROFILE = {
    "gpu": {"peak_tflops": {"bf16": 1000.0, "fp32": 50.0}, "memory_bandwidth_GB_per_s": 5000.0},
    "compute": {"gemm_efficiency": 0.7, "half_efficiency_gflop": 1.0, "memory_efficiency": 0.8},
    "calibration": {
        "copy_bandwidth_GB_per_s": 4000.0,
        "gemm": [{"dtype": "bf16", "points_gflop_efficiency": [[1.0, 0.2], [100.0, 0.8]]}],
    },
}


def point(dtype: str, side: int, c_in: int, c_out: int, kernel: int, stride: int) -> dict:
    return {"dtype": dtype, "batch": 2, "side": side, "c_in": c_in, "c_out": c_out, "kernel": kernel,
            "stride": stride}


class ConvRooflineTest(unittest.TestCase):
    def test_bytes_per_pass(self):
        # bf16, batch 2, 8 x 8 in, 4 -> 16 channels, 3 x 3, stride 2 (4 x 4 out):
        # 2 bytes x (2*64*4 in + 2*16*16 out + 4*16*9 weights) = 2 x (512 + 512 + 576) = 3200.
        self.assertEqual(conv_roofline.bytes_moved(point("bf16", 8, 4, 16, 3, 2)), 3200)
        # An odd side rounds the output up (7 / 2 -> 4), fp32 elements are 4 bytes:
        # 4 x (2*49*1 + 2*16*1 + 1) = 4 x 131 = 524.
        self.assertEqual(conv_roofline.bytes_moved(point("fp32", 7, 1, 1, 1, 2)), 524)

    def test_efficiency_from_the_measured_curve(self):
        r = conv_roofline.Roofline(PROFILE)
        # Halfway between 1 and 100 GFLOP on a log axis (10): halfway between 0.2 and 0.8.
        self.assertAlmostEqual(r.efficiency_at("bf16", 10.0), 0.5)
        # Held at the curve's ends.
        self.assertAlmostEqual(r.efficiency_at("bf16", 0.1), 0.2)
        self.assertAlmostEqual(r.efficiency_at("bf16", 1000.0), 0.8)
        # No curve for the dtype: the profile's law, 0.7 x 1 / (1 + 1).
        self.assertAlmostEqual(r.efficiency_at("fp32", 1.0), 0.35)

    def test_the_slower_of_arithmetic_and_traffic(self):
        r = conv_roofline.Roofline(PROFILE)
        # 10 GFLOP at 1000 TFLOP/s x 0.5 = 20 us; 40 MB at the copy bandwidth (4000 GB/s,
        # not 5000 x 0.8) = 10 us: arithmetic.
        t, bound = r.time_s("bf16", 10e9, 40e6)
        self.assertAlmostEqual(t, 20e-6)
        self.assertEqual(bound, "arithmetic")
        # 200 MB: 50 us, memory.
        t, bound = r.time_s("bf16", 10e9, 200e6)
        self.assertAlmostEqual(t, 50e-6)
        self.assertEqual(bound, "memory")

    def test_without_a_copy_measurement(self):
        profile = dict(PROFILE, calibration={})
        # 5000 GB/s x 0.8 = 4000 GB/s: 40 MB in 10 us; 1 GFLOP at 50 TFLOP/s x 0.35 = 57.1 us.
        t, bound = conv_roofline.Roofline(profile).time_s("fp32", 1e9, 40e6)
        self.assertAlmostEqual(t, 1e9 / (50e12 * 0.35))
        self.assertEqual(bound, "arithmetic")

    def test_in_training_listed_and_at_most(self):
        # Listed: 3 + 2 ms of convolution and GEMM kernels, 4 ms of others; busy 10 ms, so
        # 1 ms of kernels is unlisted and may be convolutions: 5-6 ms.
        result = {"busy_ms": 10.0, "kernels": [
            {"name": "sm90_xmma_fprop_implicit_gemm_bf16", "ms": 3.0},
            {"name": "cutlass_tensorop_bf16_s16816wgrad", "ms": 2.0},
            {"name": "cudnn::batchnorm_fwtr_nhwc_semiPersist", "ms": 4.0}]}
        self.assertEqual(conv_roofline.in_training_ms(result), (5.0, 6.0))
        self.assertFalse(conv_roofline.is_conv_kernel("at::native::batch_norm_collect_statistics"))


if __name__ == "__main__":
    unittest.main()
