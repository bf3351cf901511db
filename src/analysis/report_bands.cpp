// The bands of the predicting reports: every scheme's iteration time and advise's speedup
// get a P10-P90 band (fit_runs.hpp: the parameters' covariance and the model's residual,
// through the delta method), from a profile fitted to runs of this model, or, where no
// fit applies, from the spread of the datasheet's values across measured clusters
// (datasheet_uncertainty).
#include <cmath>
#include <optional>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/analysis/report.hpp"

namespace dtperf {

namespace {

std::optional<BandModels> band_models(const Prepared& p) {
  const Setup& s = p.evaluator.setup();
  const RunsModel base{s.cluster, s.workload.forward_scale, s.workload.backward_scale};
  std::optional<BandModels> models;
  switch (p.run.band_source) {
    case BandSource::none: return std::nullopt;
    case BandSource::fitted: models.emplace(*s.cluster.runs_fit, base, p.overrides); break;
    case BandSource::datasheet:
      models.emplace(datasheet_uncertainty(p.run.compute_source == ComputeSource::flops), base, p.overrides);
      break;
  }
  if (models->empty()) return std::nullopt;
  return models;
}

// What would settle a speedup whose band straddles 1, from the parameter that widens it.
std::string settling_measurement(const std::string& widest, const SchemeOutcome& best, int nodes) {
  if (widest == "compute_scale" || widest == "forward_scale" || widest == "backward_scale") {
    return "measure one run on a single node (or at another batch per GPU): it separates compute from communication";
  }
  return "measure one run of " + best.scheme.name() + " on " + std::to_string(nodes) +
         " nodes: it measures what the exchange really costs on this cluster";
}

}  // namespace

void add_bands(Prepared& p, std::span<SchemeOutcome> outcomes) {
  const std::optional<BandModels> models = band_models(p);
  if (!models) return;
  for (SchemeOutcome& o : outcomes) {
    if (!o.available) continue;
    o.band = models->band(o.iteration.iteration_s, band_times(p.evaluator, *models, o.scheme));
  }
}

void add_speedup_band(Prepared& p, AdviseReport& r) {
  Advice& a = r.advice;
  const std::optional<BandModels> models = band_models(p);
  if (!models || !a.best) return;
  // The two schemes the verdict compares, each predicted once per band model (with
  // variable compute, a simulation each); `compare` bands every scheme.
  const std::vector<double> allreduce = band_times(p.evaluator, *models, a.allreduce.scheme);
  const std::vector<double> best = band_times(p.evaluator, *models, a.best->scheme);
  a.allreduce.band = models->band(a.allreduce.iteration.iteration_s, allreduce);
  a.best->band = models->band(a.best->iteration.iteration_s, best);
  for (SchemeOutcome& c : a.candidates) {
    if (c.scheme == a.best->scheme) c.band = a.best->band;
  }
  std::vector<double> ratios;
  for (std::size_t i = 0; i < allreduce.size(); ++i) ratios.push_back(allreduce[i] / best[i]);
  const Band ratio = models->band(a.speedup, ratios, std::sqrt(2.0));  // the times' band, on a ratio
  r.speedup_band = SpeedupBand{ratio.p10_s, ratio.p90_s};
  // A band on both sides of 1 makes a decisive verdict uncertain; "no clear winner" (the
  // two within 5 %) already says neither is worth switching to, and stays.
  if (r.speedup_band->p10 < 1.0 && r.speedup_band->p90 > 1.0) {
    if (a.verdict == Verdict::decentralize || a.verdict == Verdict::stay_with_allreduce) a.verdict = Verdict::uncertain;
    r.settle = settling_measurement(models->widest(ratios), *a.best, r.run.cluster.nodes);
  }
}

}  // namespace dtperf
