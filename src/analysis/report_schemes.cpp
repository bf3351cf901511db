// The reports of predict, compare, advise and whatif: one configuration's schemes.
#include <fmt/format.h>

#include "dtperf/analysis/report.hpp"
#include "dtperf/error.hpp"
#include "report_checked.hpp"

namespace dtperf {

PredictReport build_predict_report(Prepared& p, const Scheme& scheme) {
  PredictReport r{p.run, p.evaluator.setup().allreduce, {}};
  r.outcome = checked_model(p.model_source, [&] { return p.evaluator.evaluate(scheme, {}, true); });
  if (!r.outcome.available) throw InputError::in_input(r.outcome.unavailable_input, r.outcome.unavailable_reason);
  add_bands(p, std::span<SchemeOutcome>(&r.outcome, 1));
  return r;
}

CompareReport build_compare_report(Prepared& p, const std::function<void(const char*)>& stage) {
  CompareReport r{p.run, checked_model(p.model_source, [&] { return compare_schemes(p.evaluator, true, stage); })};
  if (stage && p.run.band_source != BandSource::none) stage("the prediction bands");
  add_bands(p, r.outcomes);
  return r;
}

AdviseReport build_advise_report(Prepared& p, const std::function<void(const char*)>& stage) {
  AdviseReport r{p.run, checked_model(p.model_source, [&] { return advise(p.evaluator, stage); }), {}, {}};
  add_speedup_band(p, r);
  return r;
}

WhatifReport build_whatif_report(Prepared& p, const WhatifRequest& request) {
  Evaluator& e = p.evaluator;
  WhatifReport r;
  r.run = p.run;
  r.scheme = request.scheme;
  r.codec_ns_per_byte = request.codec_ns_per_byte;
  SchemeOutcome here = e.evaluate(request.scheme);
  if (!here.available) throw InputError::in_input(here.unavailable_input, here.unavailable_reason);
  add_bands(p, std::span<SchemeOutcome>(&here, 1));
  r.here = here.iteration;
  r.here_band = here.band;
  r.rates = scaling_by_rate(e, request.scheme, request.rates_gbps);
  for (const double target : request.targets) {
    r.targets.push_back({target, least_rate_gbps(e, request.scheme, target, false),
                         least_rate_gbps(e, request.scheme, target, true),
                         least_compression(e, request.scheme, target, request.codec_ns_per_byte * 1e-9)});
  }
  r.bound = bound_at_any_rate(e, request.scheme);
  r.max_nodes = request.max_nodes;
  if (request.scheme.kind != Scheme::Kind::allreduce) {
    r.nodes_to_win = least_nodes_to_win(e, request.scheme, request.max_nodes);
  }
  return r;
}

SweepReport build_sweep_report(Prepared& p, SweepAxes axes, std::vector<std::string> model_names, NoiseLaw cv_law) {
  const WorkloadOptions& w = p.evaluator.setup().workload;
  if (!axes.models.empty() && (p.run.anchor || w.forward_scale != 1.0 || w.backward_scale != 1.0)) {
    throw InputError::in_input("vary", fmt::format("model: the compute scale {} belongs to {}; sweep other models without it",
                                                   p.run.anchor ? "fitted to --measured-iteration-ms"
                                                                : "of the profile's runs fit",
                                                   p.run.model.name));
  }
  Setup base = p.evaluator.setup();
  if (!axes.compute_cv.empty() && base.variability.law == NoiseLaw::none) base.variability.law = cv_law;
  return {p.run, SweepGrid(std::move(base), std::move(axes), p.overrides), std::move(model_names)};
}

}  // namespace dtperf
