// The GPU backend's host-side helpers (run everywhere the backend is built), and a quick
// single-GPU calibration (hidden tag [.gpu]: run by name on a GPU machine).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>
#include <nlohmann/json.hpp>

#include "gpu/device_memory.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_launch.hpp"
#include "loopback_world.hpp"

using namespace dtperf::calibrate;

TEST_CASE("GEMM operands convert exactly to half and bfloat16 bits", "[calibrate][gpu-helpers]") {
  CHECK(half_bits(0.0f) == 0x0000);
  CHECK(half_bits(0.5f) == 0x3800);
  CHECK(half_bits(-0.0625f) == 0xac00);  // -2^-4: sign, exponent 11, mantissa 0
  CHECK(half_bits(0.4375f) == 0x3700);   // 7/16 = 1.75 * 2^-2
  CHECK(bfloat16_bits(1.0f) == 0x3f80);
  CHECK(bfloat16_bits(-0.5f) == 0xbf00);
  CHECK(gemm_element_bytes("bf16") == 2);
  CHECK(gemm_element_bytes("tf32") == 4);
}

TEST_CASE("Library versions are written as the raw format shows them", "[calibrate][gpu-helpers]") {
  CHECK(cuda_version_text(13000) == "13.0");
  CHECK(cuda_version_text(12080) == "12.8");
  CHECK(nccl_version_text(22809) == "2.28.9");
  // The open module names its architecture before the version ("x86_64" is not one).
  CHECK(driver_version_in("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
                          "(dvs-builder@U22-I3-AM02-24-3)  Thu Oct 30 2025") == "580.159.04");
  CHECK(driver_version_in("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023") ==
        "535.104.05");
  CHECK(driver_version_in("no driver here").empty());
}

TEST_CASE("FP8 E4M3 bits of the GEMM operands' values", "[calibrate][gpu-helpers]") {
  CHECK(e4m3_bits(0.0f) == 0x00);
  CHECK(e4m3_bits(0.5f) == 0x30);      // 2^-1: exponent 6 (bias 7), mantissa 0
  CHECK(e4m3_bits(-0.5f) == 0xb0);
  CHECK(e4m3_bits(0.4375f) == 0x2e);   // 7/16 = 1.75 * 2^-2: exponent 5, mantissa 110
  CHECK(e4m3_bits(0.0625f) == 0x18);   // 2^-4: exponent 3
  CHECK(e4m3_bits(-0.1875f) == 0xa4);  // -3/16 = -1.5 * 2^-3: exponent 4, mantissa 100
  CHECK(gemm_element_bytes("fp8") == 1);
  CHECK(gemm_output_bytes("fp8") == 2);  // bfloat16 output
  CHECK(gemm_output_bytes("fp16") == 2);
}

TEST_CASE("A quick calibration of one GPU writes GEMM, copy, one-rank NCCL, contention and spread entries", "[.gpu]") {
  dtperf::calibrate::testing::TemporaryFolder folder;
  Options options;
  options.backend = "nccl";
  options.gpus = 1;
  options.quick = true;
  options.budget_s = 90;
  options.output = folder.str() + "/raw.json";
  options.arguments = {"dtperf-calibrate", "--quick", "--gpus", "1"};
  REQUIRE(run_gpu_calibration(options) == 0);
  std::ifstream in(options.output);
  const nlohmann::json raw = nlohmann::json::parse(in);
  CHECK(raw["backend"] == "nccl");
  CHECK(raw["world"]["ranks"] == 1);
  CHECK(raw["versions"]["nccl"].get<std::string>().rfind("2.", 0) == 0);
  // One rank: only NCCL's own floor and local copy (group self), checked like any other.
  REQUIRE(raw["collectives"].size() == 1);
  CHECK(raw["collectives"][0]["group"] == "self");
  CHECK(raw["collectives"][0]["ranks"] == 1);
  for (const auto& point : raw["collectives"][0]["points"]) {
    CHECK(point["correct"] == true);
    CHECK(point["busbw_GB_per_s"] == 0.0);  // 2(n-1)/n = 0 on one rank, as nccl-tests prints
  }
  REQUIRE(!raw["gemm"].empty());
  std::set<std::string> dtypes;
  for (const auto& gemm : raw["gemm"]) {
    CHECK(gemm["tflops"].get<double>() > 0.1);
    dtypes.insert(gemm["dtype"].get<std::string>());
  }
  cudaDeviceProp properties{};
  REQUIRE(cudaGetDeviceProperties(&properties, 0) == cudaSuccess);
  CHECK(dtypes.count("bf16") == 1);
  CHECK(dtypes.count("fp8") == (properties.major * 10 + properties.minor >= 89 ? 1 : 0));
  REQUIRE(raw["contention"].size() == 1);
  const auto& contention = raw["contention"][0];
  CHECK(contention["group"] == "self");
  CHECK(contention["gemm_time_us_alone"].get<double>() > 0.0);
  CHECK(contention["gemm_time_us_beside"].get<double>() >= 0.5 * contention["gemm_time_us_alone"].get<double>());
  CHECK(contention["covered"] == true);
  REQUIRE(!raw["copy"].empty());
  CHECK(raw["copy"].back()["GB_per_s"].get<double>() > 100);
  CHECK(raw["iteration_spread"].size() == 1);
}
