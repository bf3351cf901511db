// The reports of fit: a calibration's fits per measured series (and how well each holds on
// sizes it was not fitted to), and a fit to measured training runs (parameters, residuals,
// leave-one-out errors).
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "dtperf/io/calibrated_profile.hpp"
#include "dtperf/io/columns.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/parameter_unit.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

namespace {

// Drops the keys whose value is null (a record's optional values are absent, not null).
Json without_nulls(Json j) {
  for (auto it = j.begin(); it != j.end();) it = it->is_null() ? j.erase(it) : std::next(it);
  return j;
}

// One segment of one series' fit, for the table.
struct SegmentRow {
  const MeasuredSeries& series;
  const CollectiveFit& fit;
  std::size_t index;
};
using SR = SegmentRow;

const AlphaBetaSegment& segment(const SR& r) { return r.fit.fit.segments[r.index]; }
bool flat(const SR& r) { return latency_only(segment(r), r.fit.bus_factor); }

// Two decimals, or three significant digits below 1 GB/s (small-size segments of slow links).
std::string busbw_text(double gb_per_s) { return gb_per_s >= 1.0 ? fixed(gb_per_s, 2) : fmt::format("{:.3g}", gb_per_s); }

const Columns<SR>& segment_columns() {
  static const Columns<SR> columns = {
      {"collective", "", "", [](const SR& r) { return Cell(r.series.collective); }, {}, {}, true},
      {"group", "", "", [](const SR& r) { return Cell(r.series.group); }, {}, {}, true},
      {"ranks", "", "", [](const SR& r) { return Cell(std::int64_t{r.series.ranks}); }},
      {"nodes", "", "", [](const SR& r) { return Cell(std::int64_t{r.series.nodes}); }},
      {"conc", "", "", [](const SR& r) { return Cell(std::int64_t{r.series.concurrent_per_node}); }},
      {"seg", "", "", [](const SR& r) { return Cell(static_cast<std::int64_t>(r.index + 1)); }},
      {"from", "", "min_bytes", [](const SR& r) { return Cell(segment(r).min_bytes); }, {},
       [](const SR& r) { return format_bytes(segment(r).min_bytes); }, true},
      {"to", "", "max_bytes", [](const SR& r) { return Cell(segment(r).max_bytes); }, {},
       [](const SR& r) { return format_bytes(segment(r).max_bytes); }, true},
      {"alpha", "us", "alpha_us", [](const SR& r) { return Cell(segment(r).alpha_s / units::us); }},
      {"busbw", "GB/s", "busbw_GB_per_s", [](const SR& r) { return Cell(segment(r).bus_bytes_per_s / units::GB); }, {},
       [](const SR& r) { return flat(r) ? std::string("-") : busbw_text(segment(r).bus_bytes_per_s / units::GB); }},
      {"", "", "latency_only", [](const SR& r) { return Cell(flat(r)); }},
      {"rms", "%", "", [](const SR& r) { return Cell(r.fit.fit.rms_relative_error); }, as_percent()},
      {"worst", "%", "",
       [](const SR& r) { return Cell(r.fit.worst.empty() ? 0.0 : std::abs(r.fit.worst.front().relative_error)); },
       as_percent()},
  };
  return columns;
}

std::vector<SegmentRow> segment_rows(const FitOutcome& out, std::size_t i) {
  std::vector<SegmentRow> rows;
  for (std::size_t k = 0; k < out.fits[i].fit.segments.size(); ++k) rows.push_back({out.series[i], out.fits[i], k});
  return rows;
}

Json fits_json(const FitOutcome& out) {
  Json fits = Json::array();
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    const MeasuredSeries& s = out.series[i];
    const CollectiveFit& f = out.fits[i];
    const std::vector<SegmentRow> rows = segment_rows(out, i);
    Json worst = Json::array();
    for (const auto& w : f.worst) worst.push_back({{"bytes", w.bytes}, {"relative_error", w.relative_error}});
    Json outliers = Json::array();
    for (const auto& r : f.residuals) {
      if (r.outlier) outliers.push_back({{"bytes", r.bytes}, {"time_us", r.time_s / units::us}});
    }
    fits.push_back({{"file", s.file},
                    {"collective", s.collective},
                    {"group", s.group},
                    {"ranks", s.ranks},
                    {"nodes", s.nodes},
                    {"concurrent_per_node", s.concurrent_per_node},
                    {"rms_relative_error", f.fit.rms_relative_error},
                    {"worst", worst},
                    {"outliers", outliers},
                    {"segments", records(segment_columns(), std::span<const SegmentRow>(rows))}});
  }
  return fits;
}

std::string fits_table(const FitOutcome& out) {
  std::vector<SegmentRow> rows;
  bool any_flat = false;
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    for (const SegmentRow& row : segment_rows(out, i)) {
      any_flat = any_flat || flat(row);
      rows.push_back(row);
    }
  }
  std::string text = table(segment_columns(), std::span<const SegmentRow>(rows));
  if (any_flat) text += "# busbw '-': the segment's time does not grow with its size (latency only).\n";
  return text;
}

using H = HoldoutRow;
Cell held(const H& r, Cell cell) { return r.errors ? cell : Cell(); }
Cell held_large(const H& r, Cell cell) { return r.errors && r.errors->large.points > 0 ? cell : Cell(); }

const Columns<H>& holdout_columns() {
  static const Columns<H> columns = {
      {"input", "", "file", [](const H& r) { return Cell(r.file); }, {},
       [](const H& r) { return r.file.substr(r.file.find_last_of('/') == std::string::npos ? 0 : r.file.find_last_of('/') + 1); },
       true},
      {"collective", "", "collective", [](const H& r) { return Cell(r.collective); }, {}, {}, true},
      {"group", "", "group", [](const H& r) { return Cell(r.group); }, {}, {}, true},
      {"ranks", "", "ranks", [](const H& r) { return Cell(std::int64_t{r.ranks}); }},
      {"nodes", "", "nodes", [](const H& r) { return Cell(std::int64_t{r.nodes}); }},
      {"fitted", "sizes", "fitted_sizes",
       [](const H& r) { return r.errors ? Cell(std::int64_t{r.errors->fitted}) : Cell(); }, {},
       [](const H& r) { return std::to_string(r.errors ? static_cast<std::size_t>(r.errors->fitted) : r.sizes); }},
      {"held-out", "sizes", "held_out_sizes", [](const H& r) { return held(r, std::int64_t{r.errors ? r.errors->held_out.points : 0}); },
       {}, [](const H& r) { return std::to_string(r.errors ? r.errors->held_out.points : 0); }},
      {"gmean", "%", "geomean_abs_error", [](const H& r) { return held(r, r.errors ? r.errors->held_out.geomean : 0.0); },
       as_percent()},
      {"worst", "%", "worst_abs_error", [](const H& r) { return held(r, r.errors ? r.errors->held_out.worst : 0.0); },
       as_percent()},
      {"at", "", "worst_bytes", [](const H& r) { return held(r, r.errors ? r.errors->held_out.worst_bytes : 0.0); }, {},
       [](const H& r) { return r.errors ? format_bytes(r.errors->held_out.worst_bytes) : std::string("-"); }, true},
      {"gmean>=1MiB", "%", "geomean_abs_error_at_least_1MiB",
       [](const H& r) { return held_large(r, r.errors ? r.errors->large.geomean : 0.0); }, as_percent()},
      {"worst>=1MiB", "%", "worst_abs_error_at_least_1MiB",
       [](const H& r) { return held_large(r, r.errors ? r.errors->large.worst : 0.0); }, as_percent()},
  };
  return columns;
}

Json holdout_json(const std::vector<HoldoutRow>& rows) {
  Json out = Json::array();
  for (const HoldoutRow& row : rows) out.push_back(without_nulls(record(holdout_columns(), row)));
  return out;
}

}  // namespace

Rendered render(const FitReport& r) {
  const FitOutcome& out = r.fit;
  Json json = {{"schema", kReportSchema},
               {"command", "fit"},
               {"profile", r.output.empty() ? profile_to_json(out.profile) : Json(r.output)},
               {"name", out.profile.name},
               {"fits", fits_json(out)},
               {"holdout", r.holdout_requested ? holdout_json(r.holdout) : Json(nullptr)},
               {"notes", out.notes},
               {"warnings", out.warnings}};
  std::string text = fits_table(out) + "\n";
  if (r.holdout_requested) {
    text += "# held-out error: each series fitted on every other size, the sizes between predicted\n" +
            table(holdout_columns(), std::span<const HoldoutRow>(r.holdout)) +
            "# gmean: exp(mean |ln(predicted / measured)|) - 1; '-': fewer than 3 sizes, or none >= 1 MiB held out\n\n";
  }
  for (const auto& note : out.notes) text += "# " + note + "\n";
  for (const auto& warning : out.warnings) text += "# warning: " + warning + "\n";
  if (!r.output.empty()) text += fmt::format("# Wrote the profile '{}' to {}\n", out.profile.name, r.output);
  return {text, json, "/fits"};
}

namespace {

const char* meaning(RunParameter p) {
  switch (p) {
    case RunParameter::compute_scale: return "forward and backward x this";
    case RunParameter::forward_scale: return "forward x this";
    case RunParameter::backward_scale: return "backward x this";
    case RunParameter::inter_efficiency: return "achieved / line rate between nodes";
    case RunParameter::inter_host: return "host-driven transport ceiling per node";
    case RunParameter::inter_latency: return "latency per inter-node hop";
    case RunParameter::intra_efficiency: return "achieved / link rate inside a node";
    case RunParameter::kappa_compute: return "compute beside communication runs x (1 + this)";
    case RunParameter::kappa_comm: return "communication beside compute runs x (1 + this)";
    case RunParameter::launch_overhead: return "host work per collective launched";
    case RunParameter::tensor_overhead: return "host work per gradient tensor, not hidden";
    case RunParameter::host_per_byte: return "host work per byte handed to collectives, not hidden";
    case RunParameter::inter_host_per_byte: return "and more per byte handed across nodes";
  }
  return "";
}

std::string general(double x) { return fmt::format("{:.4g}", x); }

using FP = FittedParameter;
double in_unit(const FP& p, double x) { return x * parameter_unit(p.parameter).scale; }
Cell if_identified(const FP& p, double x) { return p.identified ? Cell(in_unit(p, x)) : Cell(); }

const Columns<FP>& parameter_columns() {
  static const Columns<FP> columns = {
      {"parameter", "", "name", [](const FP& p) { return Cell(std::string(name_of(p.parameter))); }, {}, {}, true},
      {"", "", "meaning", [](const FP& p) { return Cell(std::string(meaning(p.parameter))); }},
      {"prior", "", "prior", [](const FP& p) { return Cell(in_unit(p, p.prior)); }, {},
       [](const FP& p) { return general(in_unit(p, p.prior)); }},
      {"fitted", "", "value", [](const FP& p) { return Cell(in_unit(p, p.value)); }, {},
       [](const FP& p) { return general(in_unit(p, p.value)); }},
      {"-1se", "", "minus_one_se", [](const FP& p) { return if_identified(p, p.low); }, {},
       [](const FP& p) { return p.identified ? general(in_unit(p, p.low)) : "-"; }},
      {"+1se", "", "plus_one_se", [](const FP& p) { return if_identified(p, p.high); }, {},
       [](const FP& p) { return p.identified ? general(in_unit(p, p.high)) : "-"; }},
      {"unit", "", "unit", [](const FP& p) { return Cell(std::string(parameter_unit(p.parameter).unit)); }, {}, {}, true},
      {"status", "", "identified", [](const FP& p) { return Cell(p.identified); }, {},
       [](const FP& p) { return std::string(p.identified ? "pinned" : "open"); }, true},
  };
  return columns;
}

struct RunRow {
  const RunResidual& r;
  const MeasuredRun& run;
  int gpus;
};
using RR = RunRow;

const Columns<RR>& run_columns() {
  static const Columns<RR> columns = {
      {"run", "", "label", [](const RR& x) { return Cell(x.r.label); }, {}, {}, true},
      {"scheme", "", "", [](const RR& x) { return Cell(x.run.config.scheme.name()); }, {}, {}, true},
      {"GPUs", "", "", [](const RR& x) { return Cell(std::int64_t{x.gpus}); }},
      {"measured", "ms", "measured_ms", [](const RR& x) { return Cell(x.r.measured_s / units::ms); }},
      {"predicted", "ms", "predicted_ms", [](const RR& x) { return Cell(x.r.predicted_s / units::ms); }},
      {"prior-error", "%", "prior_error", [](const RR& x) { return Cell(x.r.prior_error); }, {},
       [](const RR& x) { return fmt::format("{:+.1f}", 100.0 * x.r.prior_error); }},
      {"error", "%", "error", [](const RR& x) { return Cell(x.r.error); }, {},
       [](const RR& x) { return fmt::format("{:+.1f}", 100.0 * x.r.error); }},
      {"loo-error", "%", "leave_one_out_error", [](const RR& x) { return maybe(x.r.leave_one_out); }, {},
       [](const RR& x) { return x.r.leave_one_out ? fmt::format("{:+.1f}", 100.0 * *x.r.leave_one_out) : "-"; }},
  };
  return columns;
}

std::string summary_line(const RunsFit& fit) {
  std::string text = fmt::format("# {} runs: rms {:.2f} %, median |error| {:.2f} %, max {:.2f} %", fit.runs.size(),
                                 100.0 * fit.rms_error, 100.0 * fit.median_abs_error, 100.0 * fit.max_abs_error);
  if (fit.loo_median_abs_error) {
    const bool k_fold = fit.held_out_folds < static_cast<int>(fit.runs.size());
    text += fmt::format("; {} median {:.2f} %, max {:.2f} %",
                        k_fold ? fmt::format("held out in {} folds (loo-error)", fit.held_out_folds)
                               : std::string("leave-one-out"),
                        100.0 * *fit.loo_median_abs_error, 100.0 * *fit.loo_max_abs_error);
  }
  text += fmt::format("\n# before the fit (prior-error: the profile as given, every parameter at its prior): median "
                      "|error| {:.2f} %, max {:.2f} %",
                      100.0 * fit.prior_median_abs_error, 100.0 * fit.prior_max_abs_error);
  return text + "\n";
}

Json runs_fit_json(const FitRunsReport& r) {
  const RunsFit& fit = r.fit;
  Json parameters = Json::array();
  for (const FittedParameter& p : fit.parameters) parameters.push_back(without_nulls(record(parameter_columns(), p)));
  Json runs = Json::array();
  for (std::size_t i = 0; i < fit.runs.size(); ++i) {
    Json j = without_nulls(record(run_columns(), RunRow{fit.runs[i], r.runs[i], r.gpus[i]}));
    j["predicted"] = iteration_json(fit.runs[i].predicted);
    runs.push_back(j);
  }
  Json summary = {{"rms_error", fit.rms_error},
                  {"median_abs_error", fit.median_abs_error},
                  {"max_abs_error", fit.max_abs_error},
                  {"prior_median_abs_error", fit.prior_median_abs_error},
                  {"prior_max_abs_error", fit.prior_max_abs_error}};
  if (fit.loo_median_abs_error) {
    summary["loo_median_abs_error"] = *fit.loo_median_abs_error;
    summary["loo_max_abs_error"] = *fit.loo_max_abs_error;
    summary["held_out_folds"] = fit.held_out_folds;
  }
  Json correlations = Json::array();
  for (const auto& c : fit.correlations) {
    correlations.push_back({{"a", name_of(c.a)}, {"b", name_of(c.b)}, {"r", c.r}});
  }
  summary["model_sigma"] = fit.model_sigma;
  return {{"parameters", parameters},
          {"runs", runs},
          {"summary", summary},
          {"correlations", correlations},
          {"notes", fit_notes_json(fit.notes)}};
}

}  // namespace

Rendered render(const FitRunsReport& r) {
  Json json = {{"schema", kReportSchema},
               {"command", "fit --runs"},
               {"runs_file", r.runs_file},
               {"model", r.model},
               {"base_profile", r.base_profile},
               {"fit", runs_fit_json(r)}};
  if (!r.output.empty()) json["profile"] = r.output;
  std::vector<RunRow> rows;
  for (std::size_t i = 0; i < r.fit.runs.size(); ++i) rows.push_back({r.fit.runs[i], r.runs[i], r.gpus[i]});
  std::set<std::string> models;
  for (const MeasuredRun& run : r.runs) models.insert(run.config.model ? run.config.model->name : r.model);
  std::string text =
      models.size() > 1
          ? fmt::format("# dtperf fit --runs {}: {} models on {} ({} runs)\n", r.runs_file, models.size(),
                        r.base_profile, r.runs.size())
          : fmt::format("# dtperf fit --runs {}: {} on {} ({} runs)\n", r.runs_file, *models.begin(), r.base_profile,
                        r.runs.size());
  text += table(parameter_columns(), std::span<const FittedParameter>(r.fit.parameters)) +
          "# pinned: the runs narrow it to less than half its prior width; open: they do not (alone), and its "
          "uncertainty goes into every prediction's band\n";
  for (const auto& c : r.fit.correlations) {
    text += fmt::format("# {} and {} correlated (r = {:+.2f}): the runs pin them together more than each\n",
                        name_of(c.a), name_of(c.b), c.r);
  }
  text += fmt::format("# model residual {:.1f} % (ln error no parameter explains, at least 2 %): in every band\n\n",
                      100.0 * r.fit.model_sigma);
  text += table(run_columns(), std::span<const RunRow>(rows)) + summary_line(r.fit);
  for (const auto& note : r.fit.notes) text += "# note: " + fit_note_text(note) + "\n";
  if (!r.output.empty()) {
    text += fmt::format("# Wrote the fitted profile '{}' to {} (use it with --profile {})\n", r.profile.name, r.output,
                        r.output);
  }
  return {text, json, "/fit/runs"};
}

}  // namespace dtperf::io
