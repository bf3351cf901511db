// The reports of predict, compare and whatif: one scheme in detail, the schemes side by
// side, and one scheme across inter-node rates.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dtperf/io/columns.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/units.hpp"
#include "render_parts.hpp"

namespace dtperf::io {

namespace {

double gib(double bytes) { return bytes / units::GiB; }
Cell ms(double s) { return s / units::ms; }

// A prediction's P10-P90 band (from a profile fitted to runs).
Json band_json(const Band& b) { return {{"iteration_p10_ms", b.p10_s / units::ms}, {"iteration_p90_ms", b.p90_s / units::ms}}; }
std::string band_text(const Band& b) { return fmt::format("{:.2f}-{:.2f}", b.p10_s / units::ms, b.p90_s / units::ms); }

Json allreduce_options_json(const AllReduceOptions& o) {
  Json j = {{"algorithm", name_of(o.algorithm)}, {"bucketing", name_of(o.bucketing)}};
  if (o.bucketing == Bucketing::ddp) {
    j["bucket_cap_mib"] = o.bucket_cap_bytes / units::MiB;
    j["first_bucket_mib"] = o.first_bucket_cap_bytes / units::MiB;
  } else {
    j["fusion_cycle_ms"] = o.fusion_cycle_s / units::ms;
    j["fusion_buffer_MiB"] = o.fusion_buffer_bytes / units::MiB;
  }
  return j;
}

// A row of the comparison: a scheme that applies, with All-Reduce's time beside it.
struct CompareRow {
  const SchemeOutcome& o;
  double allreduce_s;
};
using C = CompareRow;

Columns<C> compare_columns(bool variable, bool banded) {
  Columns<C> c = {
      {"scheme", "", "scheme", [](const C& r) { return Cell(r.o.scheme.name()); }, {}, {}, true},
      {"iteration", "ms", "iteration_ms", [](const C& r) { return ms(r.o.iteration.iteration_s); }},
      {"exposed-comm", "ms", "exposed_comm_ms", [](const C& r) { return ms(r.o.iteration.exposed_comm_s); }},
      {"speedup", "x", "speedup_over_allreduce", [](const C& r) { return Cell(r.allreduce_s / r.o.iteration.iteration_s); },
       decimals(3)},
      {"inter/node", "MB", "inter_bytes_per_node", [](const C& r) { return Cell(r.o.iteration.inter_bytes_per_node); },
       per(units::MB, 1)},
      {"NIC-util", "%", "nic_utilization", [](const C& r) { return Cell(r.o.iteration.nic_utilization); }, as_percent()},
      {"spectral-gap", "", "spectral_gap",
       [](const C& r) {
         return r.o.scheme.kind == Scheme::Kind::allreduce ? Cell(1.0) : r.o.mixing ? Cell(r.o.mixing->spectral_gap) : Cell();
       },
       decimals(4),
       [](const C& r) {
         return r.o.scheme.kind == Scheme::Kind::allreduce ? std::string("1")
                : r.o.mixing                                ? fixed(r.o.mixing->spectral_gap, 4)
                                                            : std::string("-");
       }},
      {"mem/GPU", "GiB", "memory_GiB", [](const C& r) { return Cell(gib(r.o.memory.total_bytes())); }, decimals(1)},
  };
  if (banded) {
    c.push_back({"P10-P90", "ms", "", [](const C&) { return Cell(); }, {},
                 [](const C& r) { return r.o.band ? band_text(*r.o.band) : std::string("-"); }});
  }
  if (variable) {
    c.push_back({"p99", "ms", "iteration_p99_ms",
                 [](const C& r) { return r.o.variability ? ms(r.o.variability->iteration_p99_s) : Cell(); }});
  } else {
    c.push_back({"p90", "ms", "step_iteration_p90_ms",
                 [](const C& r) { return r.o.step_p90_s > 0.0 ? ms(r.o.step_p90_s) : Cell(); }});
  }
  return c;
}

}  // namespace

// The other regime of a node link its crossing ranks share (gossip.hpp), where it exists.
Json node_link_in_turns_json(const SchemeOutcome& o) {
  return {{"iteration_ms", o.node_link_in_turns_s / units::ms}, {"crossing_ranks", o.node_link_crossing_ranks}};
}

Json scheme_outcome_json(const SchemeOutcome& o, double allreduce_iteration_s) {
  Json j = {{"scheme", o.scheme.name()}, {"available", o.available}};
  if (!o.available) {
    j["reason"] = o.unavailable_reason;
    return j;
  }
  j["result"] = iteration_json(o.iteration);
  j["memory"] = memory_json(o.memory);
  j["speedup_over_allreduce"] = allreduce_iteration_s / o.iteration.iteration_s;
  if (!o.steps.empty()) {
    j["period"] = o.steps.size();
    j["steps"] = steps_json(o);
    j["rank_classes_simulated"] = o.rank_classes;
  }
  if (o.step_p90_s > 0.0) {
    j["step_iteration_p50_ms"] = o.step_p50_s / units::ms;
    j["step_iteration_p90_ms"] = o.step_p90_s / units::ms;
  }
  if (o.mixing) j["mixing"] = mixing_json(*o.mixing);
  if (o.local_sgd) j["round"] = local_sgd_json(*o.local_sgd, o.local_sgd_options);
  if (o.variability) j["variability"] = variability_json(*o.variability, o.idle_per_rank_s);
  if (o.band) j["band"] = band_json(*o.band);
  if (o.node_link_in_turns_s > 0.0) j["node_link_in_turns"] = node_link_in_turns_json(o);
  return j;
}

std::string compare_table(const std::vector<SchemeOutcome>& outcomes) {
  const double t_ar = outcomes.front().iteration.iteration_s;
  std::vector<CompareRow> rows;
  std::string unavailable;
  std::vector<std::pair<double, std::vector<std::string>>> too_big;  // GiB to 0.1, schemes
  for (const auto& o : outcomes) {
    if (!o.available) {
      unavailable += fmt::format("# not applicable: {}\n", o.unavailable_reason);
      continue;
    }
    rows.push_back({o, t_ar});
    if (!o.memory.fits()) {
      const double need = gib_to_a_tenth(o.memory.total_bytes());
      auto same = std::find_if(too_big.begin(), too_big.end(), [&](const auto& g) { return g.first == need; });
      if (same == too_big.end()) same = too_big.insert(too_big.end(), {need, {}});
      same->second.push_back(o.scheme.name());
    }
  }
  std::string memory;
  for (const auto& [need, schemes] : too_big) {
    memory += fmt::format("# does not fit in GPU memory ({:g} GiB): {} {} {:.1f} GiB per GPU\n",
                          gib(outcomes.front().memory.capacity_bytes), fmt::join(schemes, ", "),
                          schemes.size() == 1 ? "needs" : "need", need);
  }
  const bool variable = outcomes.front().variability.has_value();
  const bool banded = std::any_of(outcomes.begin(), outcomes.end(), [](const SchemeOutcome& o) { return o.band.has_value(); });
  return table(compare_columns(variable, banded), std::span<const CompareRow>(rows)) + memory + unavailable;
}

Rendered render(const PredictReport& r) {
  const SchemeOutcome& o = r.outcome;
  const Scheme& scheme = o.scheme;
  Json json = run_json(r.run);
  Json scheme_json = {{"name", scheme.name()}};
  if (scheme.kind == Scheme::Kind::allreduce) scheme_json["all_reduce"] = allreduce_options_json(r.allreduce);
  if (scheme.low_communication()) {
    scheme_json["inner_all_reduce"] = allreduce_options_json(r.allreduce);
  } else if (scheme.kind != Scheme::Kind::allreduce) {
    scheme_json["bucket_cap_mib"] = r.run.gossip.bucket_cap_bytes / units::MiB;
    scheme_json["node_level"] = r.run.gossip.node_level;
  }
  json["scheme"] = scheme_json;
  json["result"] = iteration_json(o.iteration);
  json["memory"] = memory_json(o.memory);
  if (!o.steps.empty()) {
    json["period"] = o.steps.size();
    json["steps"] = steps_json(o);
  }
  if (!o.step_iteration_s.empty()) {
    json["step_iteration_p50_ms"] = o.step_p50_s / units::ms;
    json["step_iteration_p90_ms"] = o.step_p90_s / units::ms;
  }
  if (o.mixing) json["mixing"] = mixing_json(*o.mixing);
  if (o.local_sgd) json["round"] = local_sgd_json(*o.local_sgd, o.local_sgd_options);
  if (o.variability) json["variability"] = variability_json(*o.variability, o.idle_per_rank_s);
  if (o.band) json["band"] = band_json(*o.band);
  if (o.node_link_in_turns_s > 0.0) json["node_link_in_turns"] = node_link_in_turns_json(o);

  std::string text = run_header(r.run) + fmt::format("# scheme: {}", scheme.name());
  if (scheme.kind == Scheme::Kind::allreduce || scheme.low_communication()) {
    text += fmt::format(" ({}{}, {} buckets)", scheme.low_communication() ? "inside groups: " : "",
                        name_of(r.allreduce.algorithm), name_of(r.allreduce.bucketing));
  } else if (o.mixing) {
    text += fmt::format(" (period {} steps, spectral gap {:.4g}{})", o.steps.size(), o.mixing->spectral_gap,
                        o.mixing->exact_average_per_period ? ", exact average every period" : "");
  }
  text += "\n" + memory_line(o.memory);
  if (o.band) {
    text += fmt::format("# iteration {:.2f} ms, P10-P90 {} ms: {}\n", o.iteration.iteration_s / units::ms,
                        band_text(*o.band), band_origin(r.run));
  }
  if (o.node_link_in_turns_s > 0.0) {
    text += fmt::format(
        "# node link: {} ranks of a node cross at once, each at its share of the link (in phase); where they take "
        "turns, the link stays busy and an iteration approaches {:.2f} ms, its busy time (a second regime, "
        "docs/VALIDATION.md)\n",
        o.node_link_crossing_ranks, o.node_link_in_turns_s / units::ms);
  }
  text += "\n" + iteration_tables(o.iteration, r.run.model.sample_unit);
  if (o.variability) text += "\n" + variability_table(*o.variability);
  if (!o.steps.empty()) text += "\n" + steps_table(o);
  if (o.local_sgd) text += "\n" + local_sgd_table(*o.local_sgd, o.local_sgd_options);
  return {text, json, "/result"};
}

Rendered render(const CompareReport& r) {
  Json json = run_json(r.run);
  json["schemes"] = Json::array();
  for (const auto& o : r.outcomes) json["schemes"].push_back(scheme_outcome_json(o, r.outcomes.front().iteration.iteration_s));
  std::string text = run_header(r.run) + compare_table(r.outcomes);
  if (std::any_of(r.outcomes.begin(), r.outcomes.end(), [](const SchemeOutcome& o) { return o.band.has_value(); })) {
    text += "# P10-P90: the iteration's band from " + band_origin(r.run) + "\n";
  }
  std::vector<std::string> in_turns;
  for (const auto& o : r.outcomes) {
    if (o.available && o.node_link_in_turns_s > 0.0) {
      in_turns.push_back(fmt::format("{} {:.2f} ms", o.scheme.name(), o.node_link_in_turns_s / units::ms));
    }
  }
  if (!in_turns.empty()) {
    text += "# node link: where a node's crossing ranks take turns on it instead of crossing in phase: " +
            join_names(in_turns) + " (a second regime; dtperf predict says more)\n";
  }
  return {text, json, "/schemes"};
}

namespace {

using P = RatePoint;
const Columns<P>& rate_columns() {
  static const Columns<P> columns = {
      {"NIC-rate", "Gbit/s", "nic_gbps", [](const P& p) { return Cell(p.nic_gbps); }, decimals(1)},
      {"scaling", "%", "", [](const P& p) { return Cell(p.at_profile.scaling_factor); }, as_percent()},
      {"NIC-util", "%", "", [](const P& p) { return Cell(p.at_profile.nic_utilization); }, as_percent()},
      {"iteration", "ms", "", [](const P& p) { return ms(p.at_profile.iteration_s); }},
      {"line:scaling", "%", "", [](const P& p) { return Cell(p.at_line_rate.scaling_factor); }, as_percent()},
      {"line:NIC-util", "%", "", [](const P& p) { return Cell(p.at_line_rate.nic_utilization); }, as_percent()},
      {"line:iteration", "ms", "", [](const P& p) { return ms(p.at_line_rate.iteration_s); }},
  };
  return columns;
}

using T = TargetSolution;
const Columns<T>& target_columns() {
  static const Columns<T> columns = {
      {"target", "%", "scaling_factor", [](const T& t) { return Cell(t.scaling_factor); }, as_percent()},
      {"NIC-rate", "Gbit/s", "least_nic_gbps", [](const T& t) { return maybe(t.rate.value); }, decimals(1)},
      {"line:NIC-rate", "Gbit/s", "least_nic_gbps_line_rate", [](const T& t) { return maybe(t.line_rate.value); },
       decimals(1)},
      {"compression", "x", "least_compression", [](const T& t) { return maybe(t.compression.value); }, decimals(2)},
      {"", "", "max_scaling_factor_any_rate", [](const T& t) { return Cell(t.rate.best_scaling); }},
      {"", "", "max_scaling_factor_any_compression", [](const T& t) { return Cell(t.compression.best_scaling); }},
  };
  return columns;
}

}  // namespace

Rendered render(const WhatifReport& r) {
  const std::string scheme = r.scheme.name();
  const double nic_gbps = r.run.cluster.inter.nic_gbps;
  Json json = run_json(r.run);
  json["scheme"] = scheme;
  json["codec_ns_per_byte"] = r.codec_ns_per_byte;
  json["result"] = iteration_json(r.here);
  if (r.here_band) json["band"] = band_json(*r.here_band);
  json["rates"] = Json::array();
  for (const RatePoint& p : r.rates) {
    Json row = record(rate_columns(), p);
    row["at_profile_efficiency"] = iteration_json(p.at_profile);
    row["at_line_rate"] = iteration_json(p.at_line_rate);
    json["rates"].push_back(row);
  }
  json["targets"] = records(target_columns(), std::span<const TargetSolution>(r.targets));

  std::string text = run_header(r.run);
  text += fmt::format("# scheme: {}; here: {} % scaling at {} Gbit/s per NIC\n", scheme, percent(r.here.scaling_factor),
                      fixed(nic_gbps, 1));
  if (r.here_band) {
    text += fmt::format("# iteration {:.2f} ms, P10-P90 {} ms: {}\n", r.here.iteration_s / units::ms,
                        band_text(*r.here_band), band_origin(r.run));
  }
  text += table(rate_columns(), std::span<const RatePoint>(r.rates));
  text += fmt::format("\n# the least NIC rate (at the profile's efficiency and at line rate) and the least compression (at "
                      "{} Gbit/s{}) that reach each target\n",
                      fixed(nic_gbps, 1),
                      r.codec_ns_per_byte > 0 ? fmt::format(", codec {} ns per gradient byte", r.codec_ns_per_byte) : "");
  text += table(target_columns(), std::span<const TargetSolution>(r.targets));
  const auto unreached = [](const T& t) { return !t.rate.value || !t.line_rate.value || !t.compression.value; };
  const ClusterProfile& cluster = r.run.cluster;
  json["bound"] = {{"limit", bound_name(r.bound.limit)},
                   {"best_scaling_factor", r.bound.best_scaling},
                   {"unbounded_scaling_factor", r.bound.unbounded_scaling}};
  if (std::any_of(r.targets.begin(), r.targets.end(), unreached)) {
    const T& last = r.targets.back();
    std::string limit;
    switch (r.bound.limit) {
      case RateBound::intra_node_link:
        limit = fmt::format("the intra-node link ({}) bounds it: with it unbounded too, {} % at any rate",
                            cluster.intra.link.empty()
                                ? fmt::format("{:.1f} GB/s per GPU", cluster.intra.bandwidth_bytes_per_s / 1e9)
                                : cluster.intra.link,
                            percent(r.bound.unbounded_scaling));
        break;
      case RateBound::host_transport:
        limit = fmt::format("the host-driven transport ({} Gbit/s per node) bounds it: without it, {} % at any rate",
                            fixed(cluster.inter.host_gbps, 1), percent(r.bound.unbounded_scaling));
        break;
      case RateBound::compute_and_overheads: limit = "compute and fixed overheads bound it"; break;
    }
    text += fmt::format("# -: not reached; the scaling factor is at most {} % at any rate and {} % at any compression: {}\n",
                        percent(std::max(last.rate.best_scaling, last.line_rate.best_scaling)),
                        percent(last.compression.best_scaling), limit);
  }
  if (const auto& win = r.nodes_to_win) {
    json["nodes_to_win"] = {{"max_nodes", r.max_nodes},
                            {"nodes", win->nodes ? Json(*win->nodes) : Json(nullptr)},
                            {"speedup", win->speedup}};
    text += win->nodes ? fmt::format("# {} beats all-reduce from {} nodes on ({:.3f}x there)\n", scheme, *win->nodes,
                                     win->speedup)
                       : fmt::format("# {} does not beat all-reduce on up to {} nodes\n", scheme, r.max_nodes);
  }
  return {text, json, "/rates"};
}

}  // namespace dtperf::io
