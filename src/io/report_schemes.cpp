#include "dtperf/io/report_schemes.hpp"

#include <cmath>

#include <fmt/format.h>

#include "dtperf/io/report.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

Json mixing_json(const MixingQuality& m) {
  return {{"spectral_gap", m.spectral_gap},
          {"spectral_gap_converged", m.converged},
          {"exact_average_per_period", m.exact_average_per_period},
          {"peers_per_period", m.degree}};
}

Json variability_json(const VariabilityOutcome& v, std::span<const double> idle_per_rank_s) {
  Json idle = Json::array();
  for (const double s : idle_per_rank_s) idle.push_back(s / units::ms);
  return {{"iterations", v.iterations},
          {"iteration_p50_ms", v.iteration_p50_s / units::ms},
          {"iteration_p99_ms", v.iteration_p99_s / units::ms},
          {"idle_mean_ms", v.idle_mean_s / units::ms},
          {"idle_min_ms", v.idle_min_s / units::ms},
          {"idle_max_ms", v.idle_max_s / units::ms},
          {"straggler_rank", v.straggler_rank},
          {"idle_per_rank_ms", idle}};
}

std::string variability_table(const VariabilityOutcome& v) {
  Table table({{"mean", "ms"}, {"p50", "ms"}, {"p99", "ms"}, {"idle-mean", "ms"}, {"idle-min", "ms"},
               {"idle-max", "ms"}, {"straggler", "rank"}, {"iterations", ""}});
  const auto ms = [](double s) { return fixed(s / units::ms, 2); };
  table.add_row({ms(v.iteration.iteration_s), ms(v.iteration_p50_s), ms(v.iteration_p99_s), ms(v.idle_mean_s),
                 ms(v.idle_min_s), ms(v.idle_max_s), std::to_string(v.straggler_rank), std::to_string(v.iterations)});
  return table.render();
}

Json step_traffic_json(std::span<const StepTraffic> steps) {
  Json out = Json::array();
  for (std::size_t k = 0; k < steps.size(); ++k) {
    out.push_back({{"step", k},
                   {"intra_bytes_per_gpu", steps[k].intra_bytes_per_gpu},
                   {"inter_bytes_per_node", steps[k].inter_bytes_per_node}});
  }
  return out;
}

Json scheme_outcome_json(const SchemeOutcome& o, double allreduce_iteration_s) {
  Json j = {{"scheme", o.scheme.name()}, {"available", o.available}};
  if (!o.available) {
    j["reason"] = o.unavailable_reason;
    return j;
  }
  j["result"] = iteration_json(o.iteration);
  j["speedup_over_allreduce"] = allreduce_iteration_s / o.iteration.iteration_s;
  if (!o.steps.empty()) {
    j["period"] = o.steps.size();
    j["steps"] = step_traffic_json(o.steps);
    j["rank_classes_simulated"] = o.rank_classes;
  }
  if (o.mixing) j["mixing"] = mixing_json(*o.mixing);
  if (o.variability) j["variability"] = variability_json(*o.variability, o.idle_per_rank_s);
  return j;
}

Json advice_json(const Advice& a) {
  const double t_ar = a.allreduce.iteration.iteration_s;
  Json candidates = Json::array();
  for (const auto& c : a.candidates) candidates.push_back(scheme_outcome_json(c, t_ar));
  Json factors = Json::array();
  for (const auto& f : a.factors) {
    factors.push_back({{"factor", f.factor}, {"gain_ms", f.seconds / units::ms}, {"share", f.share}});
  }
  const auto break_even = [](const BreakEven& b, const char* unit) {
    Json j = {{"found", b.found}, {"description", b.description}};
    if (b.found) j[unit] = b.value;
    return j;
  };
  Json j = {{"verdict", a.verdict},
            {"speedup", a.speedup},
            {"allreduce", scheme_outcome_json(a.allreduce, t_ar)},
            {"candidates", candidates},
            {"factors", factors},
            {"break_even_bandwidth", break_even(a.bandwidth, "nic_gbps")},
            {"break_even_nodes", break_even(a.nodes, "nodes")},
            {"break_even_variability", break_even(a.variability, "compute_cv")},
            {"caveats", a.caveats}};
  if (a.best) j["best"] = scheme_outcome_json(*a.best, t_ar);
  return j;
}

std::string compare_table(const std::vector<SchemeOutcome>& outcomes) {
  const bool variable = outcomes.front().variability.has_value();
  std::vector<Table::Column> columns = {{"scheme", "", true},
                                        {"iteration", "ms"},
                                        {"exposed-comm", "ms"},
                                        {"speedup", "x"},
                                        {"inter/node", "MB"},
                                        {"NIC-util", "%"},
                                        {"spectral-gap", ""}};
  if (variable) columns.push_back({"p99", "ms"});
  Table table(columns);
  const double t_ar = outcomes.front().iteration.iteration_s;
  std::string unavailable;
  for (const auto& o : outcomes) {
    if (!o.available) {
      unavailable += fmt::format("# not applicable: {}\n", o.unavailable_reason);
      continue;
    }
    const IterationResult& r = o.iteration;
    const std::string gap = o.scheme.kind == Scheme::Kind::allreduce ? "1"
                            : o.mixing                                ? fixed(o.mixing->spectral_gap, 4)
                                                                      : "-";
    std::vector<std::string> row = {o.scheme.name(), fixed(r.iteration_s / units::ms, 2),
                                    fixed(r.exposed_comm_s / units::ms, 2), fixed(t_ar / r.iteration_s, 3),
                                    fixed(r.inter_bytes_per_node / units::MB, 1), percent(r.nic_utilization), gap};
    if (variable) row.push_back(o.variability ? fixed(o.variability->iteration_p99_s / units::ms, 2) : "-");
    table.add_row(std::move(row));
  }
  return table.render() + unavailable;
}

std::string step_traffic_table(std::span<const StepTraffic> steps) {
  Table table({{"step", ""}, {"intra/GPU", "MB"}, {"inter/node", "MB"}});
  for (std::size_t k = 0; k < steps.size(); ++k) {
    table.add_row({std::to_string(k), fixed(steps[k].intra_bytes_per_gpu / units::MB, 1),
                   fixed(steps[k].inter_bytes_per_node / units::MB, 1)});
  }
  return table.render();
}

std::string advice_text(const Advice& a) {
  std::string out;
  const double t_ar = a.allreduce.iteration.iteration_s / units::ms;
  if (a.best) {
    const double t_best = a.best->iteration.iteration_s / units::ms;
    out += fmt::format("verdict: {}. Best decentralized topology: {}, {:.3f}x the speed of all-reduce "
                       "({:.2f} ms vs {:.2f} ms per iteration).\n",
                       a.verdict, a.best->scheme.name(), a.speedup, t_best, t_ar);
    out += fmt::format("\nwhere the difference comes from ({:+.2f} ms per iteration, switching each factor off in the "
                       "model; Shapley shares):\n",
                       t_ar - t_best);
    Table factors({{"factor", "", true}, {"gain", "ms"}, {"share", "%"}});
    for (const auto& f : a.factors) factors.add_row({f.factor, fixed(f.seconds / units::ms, 2), percent(f.share)});
    out += factors.render();
  } else {
    out += fmt::format("verdict: {}: no decentralized topology fits this cluster ({:.2f} ms per iteration with "
                       "all-reduce).\n",
                       a.verdict, t_ar);
  }
  out += "\nbreak-even:\n";
  out += "  bandwidth: " + a.bandwidth.description + "\n";
  out += "  nodes:     " + a.nodes.description + "\n";
  if (!a.variability.description.empty()) out += "  compute:   " + a.variability.description + "\n";
  if (!a.caveats.empty()) {
    out += "\ncaveats:\n";
    for (const auto& c : a.caveats) out += "  - " + c + "\n";
  }
  return out;
}

}  // namespace dtperf::io
