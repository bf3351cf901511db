// Fitting the model to measured runs: parameters recovered from runs the model itself
// made, one run behaving as the compute anchor, a run compute cannot explain freeing the
// network term, and leave-one-out errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"
#include "validation_cells.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

struct Fixture {
  ModelSpec model = *zoo_model("transformer-base");
  Setup setup;
  Fixture() {
    setup.cluster = io::load_profile("a100x4-ib100");
    setup.model = &model;
    setup.dtype = DType::fp16;
  }
};

MeasuredRun run(const std::string& label, Scheme scheme, int nodes, double nic_gbps) {
  MeasuredRun r;
  r.label = label;
  r.file = label;
  r.config.scheme = std::move(scheme);
  r.config.cluster.nodes = nodes;
  r.config.cluster.nic_gbps = nic_gbps;
  r.config.workload.global_batch = 25000;
  return r;
}

// All-Reduce on 1, 2, 4 and 8 nodes at 10, 25, 40 and 100 Gbit/s, each run timed as the
// model predicts it with compute 2x slower than the FLOPs estimate.
std::vector<MeasuredRun> sixteen_allreduce_runs(const Fixture& f) {
  const RunsModel truth{f.setup.cluster, 2.0, 2.0};
  std::vector<MeasuredRun> runs;
  for (int nodes : {1, 2, 4, 8}) {
    for (double gbps : {10.0, 25.0, 40.0, 100.0}) {
      runs.push_back(run(fmt::format("{}x{}", nodes, gbps), Scheme::allreduce(), nodes, gbps));
      runs.back().measured.iteration_s = predict_run(f.setup, truth, runs.back()).iteration_s;
    }
  }
  return runs;
}

const FittedParameter& parameter(const RunsFit& fit, RunParameter p) {
  const auto it = std::find_if(fit.parameters.begin(), fit.parameters.end(),
                               [&](const FittedParameter& f) { return f.parameter == p; });
  REQUIRE(it != fit.parameters.end());
  return *it;
}

}  // namespace

TEST_CASE("compute scale and inter-node efficiency are recovered from runs the model made", "[fit_runs]") {
  Fixture f;
  // The truth: compute 2.5x slower than the FLOPs estimate, the network at 40 % of line
  // rate instead of the profile's 75 %.
  RunsModel truth{f.setup.cluster, 2.5, 2.5};
  truth.profile.inter.transport_efficiency = 0.4;
  std::vector<MeasuredRun> runs;
  for (int nodes : {1, 2, 4, 8}) {
    for (double gbps : {25.0, 100.0}) {
      if (nodes == 1 && gbps == 25.0) continue;
      runs.push_back(run(std::to_string(nodes) + "x" + std::to_string(static_cast<int>(gbps)), Scheme::allreduce(), nodes, gbps));
    }
  }
  // A second single-node run, at half the batch: the runs on several nodes alone cannot
  // tell slower compute from a slower network with more latency per node crossed (left
  // out, the one single-node run is missed by 15 %: 6 multi-node runs fitted to 1e-4 with
  // compute 2.1x, efficiency 0.47 and 420 us per crossing), so leave-one-out keeps one.
  runs.push_back(run("1x100-half-batch", Scheme::allreduce(), 1, 100.0));
  runs.back().config.workload.global_batch = 12500;
  for (MeasuredRun& r : runs) r.measured.iteration_s = predict_run(f.setup, truth, r).iteration_s;
  const RunsFit fit = fit_runs(f.setup, runs);
  const FittedParameter& compute = parameter(fit, RunParameter::compute_scale);
  const FittedParameter& efficiency = parameter(fit, RunParameter::inter_efficiency);
  INFO("compute " << compute.value << ", efficiency " << efficiency.value << ", rms " << fit.rms_error);
  CHECK(compute.identified);
  CHECK(efficiency.identified);
  CHECK_THAT(compute.value, WithinRel(2.5, 0.02));
  CHECK_THAT(efficiency.value, WithinRel(0.4, 0.05));
  CHECK(compute.low <= compute.value);
  CHECK(compute.high >= compute.value);
  CHECK(fit.max_abs_error < 0.01);
  REQUIRE(fit.loo_max_abs_error);
  CHECK(*fit.loo_max_abs_error < 0.03);
}

TEST_CASE("each parameter's scale and place in a model are those the fit records", "[fit_runs]") {
  Fixture f;
  std::vector<MeasuredRun> runs = {run("1", Scheme::allreduce(), 1, 100.0), run("2", Scheme::allreduce(), 2, 100.0)};
  for (MeasuredRun& r : runs) r.measured.iteration_s = 0.1;
  RunsFitOptions options;
  options.leave_one_out = false;
  const RunsFit fit = fit_runs(f.setup, runs, options);
  REQUIRE(fit.uncertainty.size() == fit.parameters.size());
  for (std::size_t j = 0; j < fit.parameters.size(); ++j) {
    const FittedParameter& p = fit.parameters[j];
    INFO(name_of(p.parameter));
    CHECK(fit.uncertainty[j].log == fitted_in_log(p.parameter));
    CHECK_THAT(run_parameter(p.parameter, fit.fitted), WithinRel(p.value, 1e-12));
    // Set in a copy of the priors' model, it reads back as set.
    RunsModel m{f.setup.cluster, 1.0, 1.0};
    set_run_parameter(p.parameter, p.value, m);
    CHECK_THAT(run_parameter(p.parameter, m), WithinRel(p.value, 1e-12));
  }
}

TEST_CASE("beyond 10 runs the held-out errors come from 10 folds, one refit per fold", "[fit_runs]") {
  Fixture f;
  const std::vector<MeasuredRun> runs = sixteen_allreduce_runs(f);
  std::vector<int> calls;
  RunsFitOptions options;
  options.threads = 4;  // more than this machine may have: the refits still report in order
  std::vector<int> totals;  // checked here, not in the callback (it may run on a worker thread)
  options.on_refit = [&calls, &totals](int done, int total) {
    totals.push_back(total);
    calls.push_back(done);
  };
  const RunsFit fit = fit_runs(f.setup, runs, options);
  // 16 runs: 10 refits (reported before the first and after each), not 16; runs 0 and 10
  // are held out together, and every run gets its held-out error.
  CHECK(fit.held_out_folds == 10);
  CHECK(calls == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(totals == std::vector<int>(11, 10));
  for (const RunResidual& r : fit.runs) CHECK(r.leave_one_out);
  REQUIRE(fit.loo_max_abs_error);
  CHECK(*fit.loo_max_abs_error < 0.03);
  // The fit predicts its configurations, and the folds refit, on several threads; one
  // thread gives the same fit and the same held-out errors, to the last bit.
  RunsFitOptions one_thread;
  one_thread.threads = 1;
  const RunsFit serial = fit_runs(f.setup, runs, one_thread);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK(serial.runs[i].predicted_s == fit.runs[i].predicted_s);
    CHECK(serial.runs[i].leave_one_out == fit.runs[i].leave_one_out);
  }
  for (std::size_t j = 0; j < fit.parameters.size(); ++j) CHECK(serial.parameters[j].value == fit.parameters[j].value);
  // Up to 10 runs it stays leave-one-out.
  const RunsFit few = fit_runs(f.setup, std::span<const MeasuredRun>(runs).first(5));
  CHECK(few.held_out_folds == 5);
}

TEST_CASE("a fit is held to its time: refused before its search, stopped in it or in its refits", "[fit_runs]") {
  Fixture f;
  const std::vector<MeasuredRun> runs = sixteen_allreduce_runs(f);
  RunsFitOptions options;
  options.threads = 1;  // each evaluation's cost charged whole
  const RunsFit full = fit_runs(f.setup, runs, options);
  // 16 All-Reduce configurations, each a closed form at 1.9 us: an evaluation costs
  // 16 x 1.9 = 30.4 us, and the search charged a whole number of them.
  const double evaluation_s = 16 * limits::kFitClosedFormPredictionS;
  const double evaluations = full.charged_search_s / evaluation_s;
  INFO("search " << full.charged_search_s << " s = " << evaluations << " evaluations; refits "
                 << full.charged_refits_s << " s");
  CHECK_THAT(evaluations, WithinRel(std::round(evaluations), 1e-9));
  CHECK(full.charged_refits_s > 0.0);
  CHECK(full.charged_search_s + full.charged_refits_s < limits::kMaxFitS);

  const auto refusal = [&](double limit_s) {
    RunsFitOptions limited = options;
    limited.limit_s = limit_s;
    try {
      fit_runs(f.setup, runs, limited);
    } catch (const InputError& e) {
      CHECK(e.file() == runs.front().file);
      return e.reason();
    }
    return std::string();
  };
  // The first scan: each parameter over 26 points, twice, after the first evaluation at
  // the priors.
  const std::size_t scan = 1 + 2 * 26 * full.parameters.size();
  const double projected_s = evaluation_s * static_cast<double>(scan);
  REQUIRE(full.charged_search_s > 1.01 * projected_s);
  const std::string before = refusal(0.99 * projected_s);
  CHECK_THAT(before, Catch::Matchers::Contains("would take about"));
  CHECK_THAT(before, Catch::Matchers::Contains(fmt::format("their 16 distinct configurations take 0.0304 ms per "
                                                           "evaluation at the priors, and the search's first scan "
                                                           "alone makes {})",
                                                           scan)));
  const std::string during = refusal(1.01 * projected_s);
  CHECK_THAT(during, Catch::Matchers::Contains("evaluations of its 16 distinct configurations its search had not "
                                               "converged"));
  const std::string refits = refusal(full.charged_search_s + 0.5 * full.charged_refits_s);
  CHECK_THAT(refits, Catch::Matchers::Contains("the held-out refits would take the fit past"));
  CHECK_THAT(refits, Catch::Matchers::Contains(fmt::format("the fit itself made {:.0f} evaluations", evaluations)));
  CHECK_THAT(refits, Catch::Matchers::Contains("--no-leave-one-out skips them"));
  // At the limit it took, the same fit.
  RunsFitOptions enough = options;
  enough.limit_s = (full.charged_search_s + full.charged_refits_s) * (1.0 + 1e-9);
  const RunsFit again = fit_runs(f.setup, runs, enough);
  for (std::size_t j = 0; j < full.parameters.size(); ++j) CHECK(again.parameters[j].value == full.parameters[j].value);
}

TEST_CASE("repeated measurements of one configuration are predicted as that configuration", "[fit_runs]") {
  Fixture f;
  // Three configurations, measured 3, 2 and 1 times and interleaved: each run's prediction
  // must be its own configuration's, whichever run first stated it.
  RunsModel truth{f.setup.cluster, 2.0, 2.0};
  std::vector<MeasuredRun> runs;
  const std::pair<int, double> configs[] = {{2, 100.0}, {4, 25.0}, {2, 100.0}, {8, 40.0}, {4, 25.0}, {2, 100.0}};
  for (std::size_t i = 0; i < std::size(configs); ++i) {
    runs.push_back(run(fmt::format("r{}", i), Scheme::allreduce(), configs[i].first, configs[i].second));
    // Repeats differ by up to +-2 % as repeated timings do.
    const double jitter = 1.0 + 0.01 * (static_cast<double>(i % 3) - 1.0) * 2.0;
    runs.back().measured.iteration_s = predict_run(f.setup, truth, runs.back()).iteration_s * jitter;
  }
  const RunsFit fit = fit_runs(f.setup, runs);
  REQUIRE(fit.runs.size() == runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK(fit.runs[i].predicted.iteration_s == predict_run(f.setup, fit.fitted, runs[i]).iteration_s);
  }
  CHECK(fit.runs[0].predicted.iteration_s == fit.runs[2].predicted.iteration_s);
  CHECK(fit.runs[0].predicted.iteration_s != fit.runs[1].predicted.iteration_s);
  // Same prediction, different measurements: the errors differ by the repeats' jitter.
  CHECK(fit.runs[0].error != fit.runs[2].error);
}

TEST_CASE("one run pins one combination of the parameters, and says so through the bands", "[fit_runs]") {
  Fixture f;
  MeasuredRun one = run("ar-8", Scheme::allreduce(), 2, 100.0);
  one.measured.iteration_s = 73e-3;
  const RunsFit fit = fit_runs(f.setup, std::vector<MeasuredRun>{one});
  // Reproduced, within the model's 2 % error floor that the priors pull against.
  CHECK(std::abs(fit.runs[0].error) < 0.02);
  CHECK_FALSE(fit.runs[0].leave_one_out);  // nothing to leave out
  // One number cannot tell compute from the host work and the links: no parameter is
  // narrowed to half its prior width by it alone.
  for (const FittedParameter& p : fit.parameters) {
    INFO(name_of(p.parameter) << " " << p.value << " [" << p.low << ", " << p.high << "]");
    CHECK_FALSE(p.identified);
  }
  // The same configuration, predicted again, keeps a band around the measurement; one on
  // 8 nodes (not measured) is wider: the run does not pin what the larger scale adds.
  const PredictedRun same = predict_run_with_band(f.setup, fit, one);
  MeasuredRun larger = run("ar-32", Scheme::allreduce(), 8, 100.0);
  const PredictedRun far = predict_run_with_band(f.setup, fit, larger);
  INFO("same " << same.p10_s << " .. " << same.p90_s << ", 8 nodes " << far.p10_s << " .. " << far.p90_s);
  CHECK(same.p10_s < 73e-3);
  CHECK(same.p90_s > 73e-3);
  CHECK(far.p90_s / far.p10_s > same.p90_s / same.p10_s);
}

TEST_CASE("a run compute cannot explain frees the network term, and the fit says so", "[fit_runs]") {
  Fixture f;
  // At 1 Gbit/s the exchange dominates: the iteration cannot get 15 % shorter by faster
  // compute, only by a faster network.
  MeasuredRun slow = run("ar-8-1g", Scheme::allreduce(), 2, 1.0);
  const RunsModel prior{f.setup.cluster, 1.0, 1.0};
  slow.measured.iteration_s = 0.85 * predict_run(f.setup, prior, slow).iteration_s;
  const RunsFit fit = fit_runs(f.setup, std::vector<MeasuredRun>{slow});
  CHECK(parameter(fit, RunParameter::inter_efficiency).identified);
  CHECK(std::abs(fit.runs[0].error) < 0.02);
  const bool said = std::any_of(fit.notes.begin(), fit.notes.end(), [](const FitNote& n) {
    return n.kind == FitNote::Kind::network_instead_of_compute &&
           fit_note_text(n).find("network term") != std::string::npos;
  });
  CHECK(said);
}

TEST_CASE("runs with different bucket counts pin the work per collective, and a new bucket size is predicted",
          "[fit_runs][overheads]") {
  Fixture f;
  // ResNet-50 at 8 images per GPU: a short backward (15 ms measured on one GPU, so the
  // compute prior is narrow) beside many small gradients. The truth: 100 us of host work
  // per collective launched (two prior widths: a slow framework hook), nothing else. DDP
  // bucket caps of 0.25, 1 and 25 MiB launch 46, 35 and 5 all-reduces for the same bytes;
  // on two nodes the launches outlast backward (20.9 ms against 16.3 without them at
  // 0.25 MiB), so only they tell the runs apart. Per collective, the host work and the
  // latency of the inter-node hops are paid alike: the runs pin their sum, not each (the
  // fit may give the sum to either), and that is what a new bucket size needs.
  const ModelSpec resnet = *zoo_model("resnet50");
  f.setup.model = &resnet;
  RunsModel truth{f.setup.cluster, 1.0, 1.0};
  truth.profile.transport.launch_s = 100e-6;
  std::vector<MeasuredRun> runs;
  for (int nodes : {1, 2}) {
    for (double cap_mib : {0.25, 1.0, 25.0}) {
      MeasuredRun r = run("ar-" + std::to_string(nodes) + "-" + std::to_string(static_cast<int>(100 * cap_mib)),
                          Scheme::allreduce(), nodes, 100.0);
      r.config.workload.global_batch.reset();
      r.config.workload.batch_per_gpu = 8;
      r.config.workload.single_gpu_iteration_s = 15e-3;
      r.config.allreduce.bucket_cap_bytes = cap_mib * 1024 * 1024;
      r.measured.iteration_s = predict_run(f.setup, truth, r).iteration_s;
      runs.push_back(r);
    }
  }
  const RunsFit fit = fit_runs(f.setup, runs);
  INFO("rms " << fit.rms_error);
  CHECK(fit.max_abs_error < 0.01);
  MeasuredRun fresh = run("ar-2-400", Scheme::allreduce(), 2, 100.0);
  fresh.config.workload.global_batch.reset();
  fresh.config.workload.batch_per_gpu = 8;
  fresh.config.workload.single_gpu_iteration_s = 15e-3;
  fresh.config.allreduce.bucket_cap_bytes = 4.0 * 1024 * 1024;
  const double truth_s = predict_run(f.setup, truth, fresh).iteration_s;
  const PredictedRun predicted = predict_run_with_band(f.setup, fit, fresh);
  INFO("4 MiB buckets: truth " << truth_s << " s, predicted " << predicted.iteration_s << " [" << predicted.p10_s
                               << ", " << predicted.p90_s << "]");
  CHECK_THAT(predicted.iteration_s, WithinRel(truth_s, 0.10));
  CHECK(predicted.p10_s <= truth_s);
  CHECK(predicted.p90_s >= truth_s);
  // A run of one GPU launches no collective: it has no host work to fit.
  MeasuredRun single = run("one-gpu", Scheme::allreduce(), 1, 100.0);
  single.config.cluster.gpus_per_node = 1;
  single.config.workload.global_batch.reset();
  single.config.workload.batch_per_gpu = 8;
  single.config.workload.single_gpu_iteration_s = 15e-3;
  single.measured.iteration_s = 15.5e-3;
  const RunsFit alone = fit_runs(f.setup, std::vector<MeasuredRun>{single});
  CHECK(std::none_of(alone.parameters.begin(), alone.parameters.end(),
                     [](const FittedParameter& p) { return p.parameter == RunParameter::launch_overhead; }));
}

// A datasheet value's departure across clusters as a prediction interval for the next
// cluster: the sample sd times sqrt(1 + 1/n), in Student's t with n - 1 degrees of freedom,
// carried as a normal term whose 1.2816 sigmas are t's 90th percentile.
TEST_CASE("a datasheet spread's prediction interval for the next cluster", "[fit_runs][bands]") {
  // Six clusters, sd 0.38: 0.38 x sqrt(7/6) x 1.4759 / 1.2816 = 0.4727.
  CHECK_THAT((ClusterSpread{0.24, 0.38, 6}.predictive_sd()), Catch::Matchers::WithinRel(0.4727, 1e-3));
  // Two clusters, sd 0.06: 0.06 x sqrt(3/2) x 3.0777 / 1.2816 = 0.1765.
  CHECK_THAT((ClusterSpread{0.01, 0.06, 2}.predictive_sd()), Catch::Matchers::WithinRel(0.1765, 1e-3));
  // One value gives no spread: the fit's prior width (ln 3, ln 10) stands. Many tend to
  // the sd itself.
  CHECK(ClusterSpread{0.3, 0.0, 1, kInterEfficiencyPriorSdLn}.predictive_sd() == kInterEfficiencyPriorSdLn);
  CHECK_THAT(kInterEfficiencyPriorSdLn, Catch::Matchers::WithinRel(std::log(3.0), 1e-6));
  CHECK_THAT(kFlopsComputePriorSdLn, Catch::Matchers::WithinRel(std::log(10.0), 1e-6));
  CHECK_THAT((ClusterSpread{0.0, 0.1, 1000}.predictive_sd()), Catch::Matchers::WithinRel(0.1, 1e-3));
  CHECK(student_t90(1) == 3.0777);
  CHECK(student_t90(30) == 1.3104);
  CHECK(student_t90(31) == 1.2816);
  CHECK_THROWS(student_t90(0));
  // The product's datasheet uncertainty carries the means and those sds.
  const ClusterProfile::RunsFit u = datasheet_uncertainty();
  REQUIRE(u.parameters.size() == 2);
  CHECK(u.parameters[0].mean_u == kDatasheetCompute.mean_ln);
  CHECK(u.covariance[0] == kDatasheetCompute.predictive_sd() * kDatasheetCompute.predictive_sd());
  CHECK(u.parameters[1].mean_u == kDatasheetInterEfficiency.mean_ln);
}

// Where the curvature at the fit is not the whole story, the profile's wider interval, and
// its claim checked by another fit. [NET]'s two runs (8 and 16 GPUs at 100 Gbit/s over
// TCP) pin the extra host work per byte across nodes, inter_host_per_byte, at about
// 0.2 ns/B; below that value the runs change little (the 16-GPU run's exchange hides more
// of it behind backward), so the objective is flat on that side and steep on the other.
// The fit reports how far the runs allow it within two standard errors (the note's far
// value), and the interval's lower end halfway there (one standard error of that side, in
// the fitting scale, here ns/B). A fit with the parameter held at that far value, the
// others free, must explain the same runs within those two standard errors: its objective,
// plus the held parameter's own prior term ((value - 0) / 0.3 ns/B, the prior's width in
// applicable_specs, squared), at most 4 above the free fit's (the runs scatter less than
// the model's error here, so the threshold is not scaled).
TEST_CASE("a parameter held less tightly than the curvature says: the wider interval, and the claim holds",
          "[fit_runs][profile]") {
  validation::require_net_data();
  const validation::NetFit f;
  const auto note = std::find_if(f.fit.notes.begin(), f.fit.notes.end(), [](const FitNote& n) {
    return n.kind == FitNote::Kind::wider_than_local && n.parameter == "inter_host_per_byte";
  });
  REQUIRE(note != f.fit.notes.end());
  INFO(fit_note_text(*note));
  const FittedParameter& p = parameter(f.fit, RunParameter::inter_host_per_byte);
  CHECK(p.identified);
  CHECK(note->other_value < p.value);
  CHECK_THAT(p.low, WithinRel(p.value - 0.5 * (p.value - note->other_value), 1e-9));

  std::vector<RunParameter> others;
  for (const auto& named : EnumNames<RunParameter>::table) {
    if (named.value != RunParameter::inter_host_per_byte) others.push_back(named.value);
  }
  Setup held = f.setup;
  held.cluster.transport.inter_host_s_per_byte = note->other_value;
  RunsFitOptions options;
  options.only = others;
  options.leave_one_out = false;
  const RunsFit at_far = fit_runs(held, validation::net_fitted_runs(), options);
  const double prior_term = std::pow(note->other_value / 0.3e-9, 2);
  INFO("free fit objective " << f.fit.objective << "; held at " << note->other_value * 1e9 << " ns/B: "
                             << at_far.objective << " + prior " << prior_term);
  CHECK(at_far.objective + prior_term <= f.fit.objective + 4.0 + 1e-6);
  // And not vacuous: the far value is more than two of the curvature's standard errors
  // away (its upper side, untouched by the profile: value + 1 SE).
  CHECK(p.value - note->other_value > 2.0 * (p.high - p.value));
}

// The profiles have their own share of a fit's time (RunsFitOptions::profile_limit_s):
// with none, the same runs keep the local intervals, and a note counts the pinned
// parameters left unprofiled.
TEST_CASE("a fit with no time for its profiles keeps the local intervals and says so", "[fit_runs][profile]") {
  validation::require_net_data();
  const validation::NetFit f;
  RunsFitOptions options;
  options.profile_limit_s = 0.0;
  options.leave_one_out = false;
  const RunsFit local = fit_runs(f.setup, validation::net_fitted_runs(), options);
  const auto pinned = std::count_if(local.parameters.begin(), local.parameters.end(),
                                    [](const FittedParameter& p) { return p.identified; });
  REQUIRE(pinned > 0);
  const auto skipped = std::find_if(local.notes.begin(), local.notes.end(),
                                    [](const FitNote& n) { return n.kind == FitNote::Kind::profile_not_scanned; });
  REQUIRE(skipped != local.notes.end());
  CHECK(skipped->points == pinned);
  INFO(fit_note_text(*skipped));
  CHECK(std::none_of(local.notes.begin(), local.notes.end(),
                     [](const FitNote& n) { return n.kind == FitNote::Kind::wider_than_local; }));
  // The same mode; the local interval is symmetric in the fitting scale (ns/B).
  const FittedParameter& p = parameter(local, RunParameter::inter_host_per_byte);
  CHECK(p.value == parameter(f.fit, RunParameter::inter_host_per_byte).value);
  CHECK_THAT(p.value - p.low, WithinRel(p.high - p.value, 1e-9));
  CHECK(p.low > parameter(f.fit, RunParameter::inter_host_per_byte).low);
}
