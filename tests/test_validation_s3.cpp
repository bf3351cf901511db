// Cross-model validation on MosaicML's FSDP benchmarks (validation/data/validation-s3/,
// README section 2): MPT models of 0.76 to 65 billion parameters on H100 and A100 nodes,
// each run a `gpt:` model by size whose parameter count equals the published one.
// Protocol, leave one model out: for each model, `fit --runs` on the cluster's runs of
// every other model, then predict that model's runs, never seen, with the fitted profile.
// The cluster's compute and link parameters must carry from one model to another: a
// model-specific constant would not.
// Bounds, fixed before the result was known, are the product's requirements for held-out
// predictions: median |error| <= 5 %, max <= 10 %, and the measurement inside the P10-P90
// band wherever the point misses by more than 10 %. On the H100 runs all three fail (the
// A100 runs, four of them, meet the max and the band): the test prints the table and is
// a known failure; docs/VALIDATION.md gives the figures and what the model lacks.
// It takes about a minute (ten fits), so `meson test "validation s3"` runs it apart.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/runs_file.hpp"

using namespace dtperf;

namespace {

const std::string kData = std::string(DTPERF_VALIDATION_DATA) + "/validation-s3/";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct HeldOut {
  std::vector<double> abs_errors;
  int far_outside = 0;  // missed by more than 10 % and outside the band
  int inside = 0;
  std::string table;
};

// Leave each model out of the runs in `file`, fitted on `profile`'s datasheet values.
HeldOut leave_one_model_out(const std::string& file, const std::string& profile) {
  const std::vector<MeasuredRun> runs = io::read_runs_file(kData + file);
  std::map<std::string, std::vector<const MeasuredRun*>> by_model;
  for (const MeasuredRun& run : runs) {
    REQUIRE(run.config.model);
    by_model[run.config.model_name].push_back(&run);
  }
  REQUIRE(by_model.size() >= 2);  // one model left out, at least one to fit on
  HeldOut out;
  for (const auto& [model, held] : by_model) {
    std::vector<MeasuredRun> others;
    for (const MeasuredRun& run : runs) {
      if (run.config.model_name != model) others.push_back(run);
    }
    Setup base;
    base.cluster = io::load_profile(profile);
    base.model = others.front().config.model.get();
    base.dtype = DType::bf16;
    RunsFitOptions options;
    options.leave_one_out = false;
    const RunsFit fit = fit_runs(base, others, options);
    for (const MeasuredRun* run : held) {
      const PredictedRun p = predict_run_with_band(base, fit, *run);
      const double measured = run->measured.iteration_s;
      const double error = p.iteration_s / measured - 1.0;
      const bool in = measured >= p.p10_s && measured <= p.p90_s;
      out.abs_errors.push_back(std::abs(error));
      out.inside += in ? 1 : 0;
      out.far_outside += !in && std::abs(error) > 0.10 ? 1 : 0;
      out.table += fmt::format("  {:<14} measured {:9.1f} ms  predicted {:9.1f} ms ({:+6.1f} %)  P10-P90 {:9.1f} - {:9.1f}{}\n",
                               run->label, measured * 1e3, p.iteration_s * 1e3, 100.0 * error, p.p10_s * 1e3,
                               p.p90_s * 1e3, in ? "" : "  outside");
    }
  }
  return out;
}

void report(const std::string& title, const HeldOut& h) {
  std::vector<double> e = h.abs_errors;
  WARN(fmt::format("{} ({} held-out runs; a model's runs predicted from a fit to the other models'):\n{}"
                   "  median |error| {:.1f} %, max {:.1f} %; inside the band {} of {}; outside it and off by more than 10 %: {}",
                   title, e.size(), h.table, 100.0 * median(e), 100.0 * *std::max_element(e.begin(), e.end()),
                   h.inside, e.size(), h.far_outside));
}

const HeldOut& h100() {
  static const HeldOut h = leave_one_model_out("mpt-h100-fsdp.json", "dgx-h100");
  return h;
}

const HeldOut& a100() {
  static const HeldOut h = leave_one_model_out("mpt-a100-fsdp.json", "dgx-a100");
  return h;
}

}  // namespace

TEST_CASE("MPT on H100 and A100, each model held out: within 5 % median, 10 % max, far misses inside the band",
          "[.][validation][s3][!mayfail]") {
  report("MPT, FSDP, H100 (dgx-h100 datasheet as prior)", h100());
  report("MPT, FSDP, A100 with 1600 Gbit/s RoCE (dgx-a100 datasheet as prior)", a100());
  for (const HeldOut* h : {&h100(), &a100()}) {
    CHECK(median(h->abs_errors) <= 0.05);
    CHECK(*std::max_element(h->abs_errors.begin(), h->abs_errors.end()) <= 0.10);
    CHECK(h->far_outside == 0);
  }
}
