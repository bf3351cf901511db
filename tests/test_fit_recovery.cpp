// Parameter recovery: runs generated from hidden, known parameters (the truth), with 1-3 %
// noise, fitted back from the datasheet profile's priors, across regimes (compute-,
// network- and latency-bound; strong and weak scaling; 2 to 6 runs). A fit passes a
// regime when it explains its own runs (rms of ln(predicted / measured) within 3 %, the
// noise being at most 3 %), every parameter it says it identified comes back within its
// reported uncertainty (2 standard errors, in the fitting scale), and every held-out
// prediction (other schemes, other sizes) is within 3 % of the truth or, where the runs
// do not pin what it depends on, within 2 standard deviations of its own band (the
// P10-P90 band spans 2 x 1.2816 of them): the band says how far to trust it. Some regimes
// put host work and contention into the truth as well; one adds to the runs the gossip
// run that `advise` asks for when the band straddles break-even.
//
// The truth's noise is a fixed sequence (+2, -1.5, +1, -2.5, +3, -1 %), so the test is
// deterministic. Each regime's table is printed when it fails (INFO).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;

namespace {

constexpr double kNoise[] = {0.02, -0.015, 0.01, -0.025, 0.03, -0.01};

struct Config {
  Scheme scheme;
  int nodes;
  double nic_gbps;  // 0: the profile's
};

struct Regime {
  const char* name;
  const char* profile;
  const char* model;
  DType dtype;
  std::optional<double> global_batch;  // strong scaling; else the batch per GPU below
  std::optional<double> batch_per_gpu;
  // The truth, against the profile: compute x, transport efficiency, latency per hop.
  double compute_scale;
  double transport_efficiency;
  double inter_latency_s;
  std::vector<Config> measured;
  std::vector<Config> held_out;
  // More of the truth, in natural units (set_run_parameter): host work, contention.
  std::vector<std::pair<RunParameter, double>> more = {};
};

MeasuredRun make_run(const Regime& r, const Config& c) {
  MeasuredRun run;
  run.label = fmt::format("{}-{}n{}", c.scheme.name(), c.nodes, c.nic_gbps > 0 ? fmt::format("-{:g}g", c.nic_gbps) : "");
  run.file = run.label;
  run.config.scheme = c.scheme;
  run.config.cluster.nodes = c.nodes;
  if (c.nic_gbps > 0) run.config.cluster.nic_gbps = c.nic_gbps;
  run.config.workload.global_batch = r.global_batch;
  run.config.workload.batch_per_gpu = r.batch_per_gpu;
  return run;
}

const Scheme kAllReduce = Scheme::allreduce();
const Scheme kAer = Scheme::gossip("alternating-exp-ring");
const Scheme kOpe = Scheme::gossip("one-peer-exp");

std::vector<Regime> regimes() {
  return {
      {"strong scaling, compute-bound (fast links)", "a100x4-ib100", "transformer-base", DType::fp16, 25000.0, {}, 3.0,
       0.6, 8e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 4, 0}, {kAllReduce, 8, 0}},
       {{kAer, 2, 0}, {kAer, 8, 0}, {kOpe, 4, 0}, {kAllReduce, 16, 0}}},
      {"strong scaling, network-bound (slow links)", "a100x4-ib100", "transformer-base", DType::fp16, 25000.0, {}, 2.0,
       0.08, 8e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 4, 0}, {kAllReduce, 8, 0}},
       {{kAer, 2, 0}, {kAer, 8, 0}, {kOpe, 4, 0}, {kAllReduce, 16, 0}}},
      {"weak scaling, latency-bound (small batch, long hops)", "a100x4-ib100", "resnet50", DType::fp16, {}, 8.0, 1.5, 0.7,
       400e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 8, 0}},
       {{kAer, 4, 0}, {kOpe, 8, 0}, {kAllReduce, 16, 0}}},
      {"two runs: one node and two", "p3dn-24xlarge", "resnet50", DType::fp32, {}, 32.0, 1.3, 0.3, 20e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}},
       {{kAllReduce, 8, 0}, {kAer, 4, 0}}},
      {"six runs across NIC rates", "a100x4-ib100", "transformer-base", DType::fp16, 25000.0, {}, 2.5, 0.4, 8e-6,
       {{kAllReduce, 1, 100}, {kAllReduce, 2, 25}, {kAllReduce, 2, 100}, {kAllReduce, 4, 25}, {kAllReduce, 8, 25},
        {kAllReduce, 8, 100}},
       {{kAer, 8, 25}, {kOpe, 4, 100}, {kAllReduce, 16, 50}}},
      // Host work and contention in the truth, each at about what a measured cluster's fit
      // finds (docs/VALIDATION.md, leave one cluster out): TCP's CPU per byte across
      // nodes and compute slowed 15 % beside communication ([NET]: 0.2 ns/B); per-tensor
      // host work of 200 us (MPT on H100: 221 us).
      {"TCP transport: CPU per byte across nodes, compute slowed beside it", "p3dn-24xlarge", "resnet50",
       DType::fp32, {}, 32.0, 1.2, 0.8, 20e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 4, 0}, {kAllReduce, 8, 0}},
       {{kAer, 4, 0}, {kOpe, 8, 0}, {kAllReduce, 16, 0}},
       {{RunParameter::inter_host_per_byte, 0.2e-9}, {RunParameter::kappa_compute, 0.15}}},
      {"per-tensor host work, strong scaling", "a100x4-ib100", "transformer-base", DType::fp16, 25000.0, {}, 2.0,
       0.7, 8e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 4, 0}, {kAllReduce, 8, 0}},
       {{kAer, 2, 0}, {kAer, 8, 0}, {kOpe, 4, 0}, {kAllReduce, 16, 0}},
       {{RunParameter::tensor_overhead, 200e-6}}},
      // The same with the one gossip run `advise` asks for where the band straddles
      // break-even: it separates host work from the network.
      {"per-tensor host work, strong scaling, one gossip run", "a100x4-ib100", "transformer-base", DType::fp16,
       25000.0, {}, 2.0, 0.7, 8e-6,
       {{kAllReduce, 1, 0}, {kAllReduce, 2, 0}, {kAllReduce, 4, 0}, {kAllReduce, 8, 0}, {kAer, 4, 0}},
       {{kAer, 2, 0}, {kAer, 8, 0}, {kOpe, 4, 0}, {kAllReduce, 16, 0}},
       {{RunParameter::tensor_overhead, 200e-6}}},
  };
}

struct Outcome {
  std::string table;
  bool explained = true;
  int parameter_failures = 0;
  int prediction_failures = 0;
};

Outcome check(const Regime& r) {
  const ModelSpec model = *zoo_model(r.model);
  Setup setup;
  setup.cluster = io::load_profile(r.profile);
  setup.model = &model;
  setup.dtype = r.dtype;
  RunsModel truth{setup.cluster, r.compute_scale, r.compute_scale};
  truth.profile.inter.transport_efficiency = r.transport_efficiency;
  truth.profile.inter.latency_s = r.inter_latency_s;
  for (const auto& [parameter, value] : r.more) set_run_parameter(parameter, value, truth);

  std::vector<MeasuredRun> runs;
  for (std::size_t i = 0; i < r.measured.size(); ++i) {
    MeasuredRun run = make_run(r, r.measured[i]);
    run.measured.iteration_s = predict_run(setup, truth, run).iteration_s * (1.0 + kNoise[i % std::size(kNoise)]);
    runs.push_back(run);
  }
  const RunsFit fit = fit_runs(setup, runs);

  Outcome out;
  out.explained = fit.rms_error <= 0.03;
  out.table = fmt::format("{}: {} runs, fit rms {:.2f} %{}\n", r.name, runs.size(), 100.0 * fit.rms_error,
                          out.explained ? "" : "  FAIL");
  for (const FittedParameter& p : fit.parameters) {
    // Every parameter has a truth: the regime's, or the profile's value where it sets none.
    const double t = run_parameter(p.parameter, truth);
    bool ok = true;
    if (p.identified) {
      // Within 2 standard errors: [low, high] is value -/+ 1 SE in the fitting scale, the
      // logarithm for scales, efficiencies and latencies (fitted_in_log), so 2 SE reach
      // value x (high / value)^2 above and value x (low / value)^2 below.
      // The host work and the interference kappas are fitted by their value: there the
      // same reach is value -/+ 2 (value - low, high - value).
      const bool log = fitted_in_log(p.parameter);
      const double above = log ? std::log(p.high / p.value) : p.high - p.value;
      const double below = log ? std::log(p.value / p.low) : p.value - p.low;
      const double z = log ? std::log(t / p.value) : t - p.value;
      ok = z <= 2.0 * above + 1e-12 && -z <= 2.0 * below + 1e-12;
    }
    out.parameter_failures += ok ? 0 : 1;
    out.table += fmt::format("  {:<20} truth {:>10.4g} fitted {:.4g} [{:.4g}, {:.4g}] {}{}\n", name_of(p.parameter), t,
                             p.value, p.low, p.high,
                             p.identified ? "pinned" : "open", ok ? "" : "  FAIL");
  }
  for (const FitNote& n : fit.notes) out.table += "  note: " + fit_note_text(n) + "\n";
  for (std::size_t i = 0; i < r.held_out.size(); ++i) {
    const MeasuredRun run = make_run(r, r.held_out[i]);
    const double true_s = predict_run(setup, truth, run).iteration_s;
    const PredictedRun predicted = predict_run_with_band(setup, fit, run);
    const double error = predicted.iteration_s / true_s - 1.0;
    const double sigma = std::log(predicted.p90_s / predicted.p10_s) / (2.0 * 1.2816);
    const double z = std::abs(std::log(predicted.iteration_s / true_s)) / sigma;
    const bool ok = std::abs(error) <= 0.03 || z <= 2.0;
    out.prediction_failures += ok ? 0 : 1;
    out.table += fmt::format("  {:<28} truth {:8.2f} ms predicted {:8.2f} ms ({:+.1f} %) band [{:.2f}, {:.2f}] z {:.2f}{}\n",
                             run.label, true_s * 1e3, predicted.iteration_s * 1e3, 100.0 * error,
                             predicted.p10_s * 1e3, predicted.p90_s * 1e3, z, ok ? "" : "  FAIL");
  }
  return out;
}

}  // namespace

TEST_CASE("parameters come back from runs made with known ones, and held-out predictions hold",
          "[fit_runs][recovery]") {
  for (const Regime& r : regimes()) {
    const Outcome o = check(r);
    INFO(o.table);
    CHECK(o.explained);
    CHECK(o.parameter_failures == 0);
    CHECK(o.prediction_failures == 0);
  }
}
