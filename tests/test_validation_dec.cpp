// Validation against [DEC] (Wang et al., "From promise to practice: realizing
// high-performance decentralized training", ICLR 2025). On 4xA100 nodes with InfiniBand
// (the built-in a100x4-ib100 profile), Transformer-base with 25,000 tokens per iteration in
// total (strong scaling), fp32 parameters and gradients, mixed-precision (fp16) compute as
// their runs used, 25 MiB buckets, the paper measured per iteration (ms):
//
//                    8 GPUs  16 GPUs  32 GPUs
//   All-Reduce        73.0     54.8     51.5
//   one-peer-exp      63.4     46.8     44.7
//   AER               61.7     45.8     43.7
//   SGP               69.4     53.0     50.7
//
// Protocol: `dtperf fit --runs` on the three All-Reduce cells only (the datasheet profile
// as priors); the fitted profile then predicts the nine decentralized cells, which the fit
// never saw. Bounds, fixed before the result was known: median |error| <= 3 %, max <= 8 %,
// and advise's verdict right at every scale (AER is 18-20 % faster than All-Reduce in
// every column: "decentralize"). The max bound is its own test case, allowed to fail: since
// 16-bit compute moves 16-bit activations where autocast runs in 16 bits (their training
// loop runs under torch.autocast), AER on 16 GPUs is +7.6 % and one-peer-exp +5.3 %
// (median 2.0 %), where fp32-sized activations in every dtype gave +2.8 % and +0.6 %. It
// was +8.3 % (median 2.7 %) while the fit's local search ran to its 200 iterations: the
// three runs leave most parameters open, and where the search stops moves them, so the
// 8 % is met by a margin the fit does not determine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"
#include "validation_cells.hpp"

using namespace dtperf;

using validation::dec_run;
using validation::DecFit;
using validation::kDecHeldOut;

TEST_CASE("[DEC]: fitted on the All-Reduce runs, the decentralized runs are predicted", "[validation][dec]") {
  const DecFit f;
  const Setup& setup = f.setup;
  const RunsFit& fit = f.fit;
  std::vector<double> errors;
  std::string table = "[DEC] held-out cells (fitted on All-Reduce at 8/16/32 GPUs):\n";
  for (const auto& row : kDecHeldOut) {
    for (int i = 0; i < 3; ++i) {
      const MeasuredRun cell = dec_run(row.scheme, 2 << i, row.measured_ms[i]);
      const double predicted_ms = predict_run(setup, fit.fitted, cell).iteration_s * 1e3;
      const double error = predicted_ms / row.measured_ms[i] - 1.0;
      errors.push_back(std::abs(error));
      table += "  " + cell.label + ": measured " + std::to_string(row.measured_ms[i]) + " ms, predicted " +
               std::to_string(predicted_ms) + " ms, error " + std::to_string(100 * error) + " %\n";
    }
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  const double worst = errors.back();
  INFO(table);
  WARN(table << "median |error| " << 100 * median << " %, max " << 100 * worst << " %");
  CHECK(median <= 0.03);

  // advise with the fitted profile picks decentralization at every scale.
  for (int i = 0; i < 3; ++i) {
    Setup s = setup;
    s.cluster = fit.fitted.profile;
    s.cluster.nodes = 2 << i;
    s.workload.global_batch = 25000;
    Evaluator e(s);
    e.set_compute_scales(fit.fitted.forward_scale, fit.fitted.backward_scale);
    const Advice a = advise(e);
    INFO("advise at " << 4 * s.cluster.nodes << " GPUs: " << name_of(a.verdict) << ", speedup " << a.speedup);
    CHECK(a.verdict == Verdict::decentralize);
  }
}

TEST_CASE("[DEC]: no decentralized cell is more than 8 % off", "[validation][dec][!mayfail]") {
  const DecFit f;
  for (const auto& row : kDecHeldOut) {
    for (int i = 0; i < 3; ++i) {
      const MeasuredRun cell = dec_run(row.scheme, 2 << i, row.measured_ms[i]);
      const double error = predict_run(f.setup, f.fit.fitted, cell).iteration_s * 1e3 / row.measured_ms[i] - 1.0;
      INFO(cell.label << ": error " << 100 * error << " %");
      CHECK(std::abs(error) <= 0.08);
    }
  }
}
