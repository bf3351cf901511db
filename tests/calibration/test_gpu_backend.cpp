// The GPU backend's host-side helpers (run everywhere the backend is built), and a quick
// single-GPU calibration (hidden tag [.gpu]: run by name on a GPU machine).
#include <catch2/catch.hpp>

#include <fstream>
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
}

TEST_CASE("A quick calibration of one GPU writes GEMM, copy and spread entries", "[.gpu]") {
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
  CHECK(raw["collectives"].empty());  // one rank: no group to measure
  REQUIRE(!raw["gemm"].empty());
  for (const auto& gemm : raw["gemm"]) CHECK(gemm["tflops"].get<double>() > 0.1);
  REQUIRE(!raw["copy"].empty());
  CHECK(raw["copy"].back()["GB_per_s"].get<double>() > 100);
  CHECK(raw["iteration_spread"].size() == 1);
}
