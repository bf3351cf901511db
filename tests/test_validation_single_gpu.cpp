// The built-in profiles' compute defaults (datasheet peaks and efficiencies, nothing
// fitted) against published single-GPU training throughputs: ResNet-50 v1.5 on one A100
// and one V100, TF32/FP32 and mixed precision (NVIDIA DeepLearningExamples, as runs files
// in validation/data/single-gpu/, SOURCES.md). One GPU, so no network: the residual is the
// compute model's alone. `dtperf fit --runs` prints the same as its prior-error column.
// Bound, fixed before the result: each run within 25 % of the published time (a
// datasheet-only profile is a starting point; fit --runs or calibration narrows it).
// Met since mixed precision moves 16-bit activations where autocast runs in 16 bits
// (builder.hpp): A100 TF32 -24.4 %, AMP +0.7 %; V100 FP32 +17.7 %, AMP +4.6 %. Before,
// with fp32-sized activations whatever the dtype, AMP was 78 % (A100) and 87 % (V100) too
// slow.
//
// Second check, on a GPU none of the model was tuned on: the profile calibrated on one
// NVIDIA H200 (measured GEMM rates and copy bandwidth, profiles/calibrated/) against
// PyTorch training steps measured on the same GPU (validation/measure_single_gpu.py: five
// models, fp32/tf32/fp16/bf16). Same bound, 25 % per run. Known failure: median |error|
// 39 %, every model too fast but ResNet-50 in tf32 and fp16 (-9 %, -15 %); ViT-B/16 and
// GPT-2 small 44-68 % too fast (per-operation costs the model lacks: docs/VALIDATION.md).
// With fp32-sized activations in every dtype (before autocast's traffic was modelled) the
// median was 34 %, ResNet mixed precision too slow (+17..+57 %).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/runs_file.hpp"

using namespace dtperf;

namespace {

const std::string kData = std::string(DTPERF_VALIDATION_DATA) + "/single-gpu/";

struct Row {
  std::string label;
  double measured_s = 0.0;
  double predicted_s = 0.0;
};

// Each run predicted with the profile as given: no parameter fitted.
std::vector<Row> as_given(const std::string& file, const std::string& profile, std::size_t expected_runs = 2) {
  const std::vector<MeasuredRun> runs = io::read_runs_file(kData + file);
  REQUIRE(runs.size() == expected_runs);
  Setup base;
  base.cluster = io::load_profile(profile);
  std::vector<Row> rows;
  for (const MeasuredRun& run : runs) {
    REQUIRE(run.config.model);
    base.model = run.config.model.get();
    base.dtype = *run.config.cluster.dtype;
    const RunsModel model{base.cluster, 1.0, 1.0};
    rows.push_back({run.label, run.measured.iteration_s, predict_run(base, model, run).iteration_s});
  }
  return rows;
}

}  // namespace

// Not a known failure: missing or unreadable data fails here, never passes silently.
TEST_CASE("the published single-GPU runs are in the repository and read", "[validation][single-gpu]") {
  for (const char* file : {"resnet50-a100-dle.json", "resnet50-v100-dle.json", "h200-measured.json"}) {
    const std::vector<MeasuredRun> runs = io::read_runs_file(kData + file);
    CHECK(runs.size() == (std::string(file) == "h200-measured.json" ? 12 : 2));
    for (const MeasuredRun& run : runs) CHECK(run.config.cluster.dtype.has_value());
  }
}

TEST_CASE("datasheet compute on one GPU: ResNet-50 within 25 % of NVIDIA's published throughputs",
          "[validation][single-gpu]") {
  std::vector<Row> rows = as_given("resnet50-a100-dle.json", "dgx-a100");
  for (const Row& r : as_given("resnet50-v100-dle.json", "p3dn-24xlarge")) rows.push_back(r);
  std::string table;
  for (const Row& r : rows) {
    table += fmt::format("  {:<16} published {:7.1f} ms  predicted {:7.1f} ms  ({:+.1f} %)\n", r.label,
                         r.measured_s * 1e3, r.predicted_s * 1e3, 100.0 * (r.predicted_s / r.measured_s - 1.0));
  }
  WARN("ResNet-50 v1.5, one GPU, the built-in profiles as given:\n" + table);
  for (const Row& r : rows) {
    REQUIRE(std::isfinite(r.predicted_s));
    CHECK(std::abs(r.predicted_s / r.measured_s - 1.0) <= 0.25);
  }
}

TEST_CASE("calibrated compute on one H200: five models within 25 % of the same GPU's PyTorch steps",
          "[validation][single-gpu][!mayfail]") {
  const std::string profile = std::string(DTPERF_VALIDATION_DATA) + "/../../profiles/calibrated/h200-1gpu.json";
  const std::vector<Row> rows = as_given("h200-measured.json", profile, 12);
  std::string table;
  std::vector<double> errors;
  for (const Row& r : rows) {
    errors.push_back(std::abs(r.predicted_s / r.measured_s - 1.0));
    table += fmt::format("  {:<16} measured {:7.1f} ms  predicted {:7.1f} ms  ({:+.1f} %)\n", r.label,
                         r.measured_s * 1e3, r.predicted_s * 1e3, 100.0 * (r.predicted_s / r.measured_s - 1.0));
  }
  std::sort(errors.begin(), errors.end());
  WARN(fmt::format("One H200, the calibrated profile as given (median |error| {:.1f} %):\n{}",
                   100.0 * (errors[5] + errors[6]) / 2.0, table));
  for (const Row& r : rows) {
    REQUIRE(std::isfinite(r.predicted_s));
    CHECK(std::abs(r.predicted_s / r.measured_s - 1.0) <= 0.25);
  }
}
