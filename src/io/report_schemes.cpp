#include "dtperf/io/report_schemes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

Json steps_json(const SchemeOutcome& o) {
  Json out = Json::array();
  for (std::size_t k = 0; k < o.steps.size(); ++k) {
    Json step = {{"step", k},
                 {"intra_bytes_per_gpu", o.steps[k].intra_bytes_per_gpu},
                 {"inter_bytes_per_node", o.steps[k].inter_bytes_per_node}};
    if (k < o.step_iteration_s.size()) step["iteration_ms"] = o.step_iteration_s[k] / units::ms;
    out.push_back(std::move(step));
  }
  return out;
}

namespace {
double gib(double bytes) { return bytes / units::GiB; }
}  // namespace

Json memory_json(const MemoryBreakdown& m) {
  Json j = {{"weights_GiB", gib(m.weights_bytes)},
            {"gradients_GiB", gib(m.gradients_bytes)},
            {"optimizer_GiB", gib(m.optimizer_bytes)},
            {"activations_GiB", gib(m.activations_bytes)},
            {"activations_known", m.activations_known},
            {"comm_buffers_GiB", gib(m.comm_buffers_bytes)},
            {"reserve_GiB", gib(m.reserve_bytes)},
            {"total_GiB", gib(m.total_bytes())},
            {"fits", m.fits()}};
  j["gpu_memory_GiB"] = m.capacity_bytes > 0.0 ? Json(gib(m.capacity_bytes)) : Json(nullptr);
  return j;
}

std::string memory_line(const MemoryBreakdown& m) {
  const std::string of = m.capacity_bytes > 0.0 ? fmt::format(" of {:g}", gib(m.capacity_bytes)) : "";
  std::string line = fmt::format(
      "# memory per GPU: {:.1f}{} GiB (weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, activations {}, "
      "communication buffers {:.2f}, runtime reserve {:.2f})",
      gib(m.total_bytes()), of, gib(m.weights_bytes), gib(m.gradients_bytes), gib(m.optimizer_bytes),
      m.activations_known ? fmt::format("{:.2f}", gib(m.activations_bytes)) : std::string("unknown"),
      gib(m.comm_buffers_bytes), gib(m.reserve_bytes));
  if (m.capacity_bytes <= 0.0) line += "; the profile gives no GPU memory to check against";
  if (!m.fits()) line += ": DOES NOT FIT";
  return line + "\n";
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
  return j;
}

namespace {

// The sentences of the advice, from its values.

// What switching a factor off in the model removes, in a user's terms.
const char* factor_meaning(Factor factor) {
  switch (factor) {
    case Factor::overlap:
      return "exchanges run on into the next iteration instead of ending their own";
    case Factor::heterogeneous_links:
      return "groups inside a node use its fast links, not the NICs";
    case Factor::variable_compute:
      return "a slow rank holds up only its group, not every rank";
    case Factor::other:
      return "the exchange itself: small groups and fewer bytes through the NICs than one all-reduce";
  }
  return "";
}

// Shares add up to 100 %. When a factor works against decentralization (a negative
// share), the others add up to more; when decentralization is slower overall, a positive
// share is what slows it down. Either is said, with the numbers.
std::string shares_explained(const Advice& a) {
  double total_s = 0.0;
  std::vector<std::string> against;
  double against_s = 0.0;
  for (const FactorShare& f : a.factors) {
    total_s += f.seconds;
    if (f.seconds < 0.0) {
      against.push_back(fmt::format("{} ({:+.2f} ms)", name_of(f.factor), f.seconds / units::ms));
      against_s += f.seconds;
    }
  }
  std::string out;
  if (total_s < 0.0) {
    out += fmt::format("# the gain is negative ({:+.2f} ms): a positive share is part of what makes decentralized "
                       "training slower here, a negative one works in its favour\n",
                       total_s / units::ms);
  } else if (!against.empty()) {
    out += fmt::format("# {} {} against decentralization: the other factors add up to {:.1f} % of the gain, more "
                       "than 100 %, and together they give the net {:+.2f} ms\n",
                       fmt::join(against, ", "), against.size() == 1 ? "works" : "work",
                       100.0 * (total_s - against_s) / total_s, total_s / units::ms);
  }
  return out;
}

std::string faster_or_slower(bool faster) { return faster ? "faster" : "slower"; }

std::string bandwidth_text(const BreakEven& b) {
  switch (b.outcome) {
    case BreakEven::Outcome::crosses:
      return fmt::format("decentralized training is {} below {:.3g} Gbit/s per NIC and {} above",
                         faster_or_slower(b.faster_below), b.value, faster_or_slower(!b.faster_below));
    case BreakEven::Outcome::always_faster:
    case BreakEven::Outcome::always_slower:
      return fmt::format("decentralized training is {} at every rate from {:g} to {:g} Gbit/s per NIC",
                         faster_or_slower(b.outcome == BreakEven::Outcome::always_faster), b.range_low, b.range_high);
    case BreakEven::Outcome::not_applicable:
      return b.why == BreakEven::Why::one_node ? "one node: the inter-node rate plays no part"
                                               : "no topology fits this cluster";
  }
  return "";
}

std::string nodes_text(const BreakEven& b) {
  switch (b.outcome) {
    case BreakEven::Outcome::crosses:
      return fmt::format("decentralized training is {} from {:g} node{} on (up to {:g} it is {})",
                         faster_or_slower(!b.faster_below), b.value, b.value == 1 ? "" : "s", b.last_below,
                         faster_or_slower(b.faster_below));
    case BreakEven::Outcome::always_faster:
    case BreakEven::Outcome::always_slower:
      return fmt::format("decentralized training is {} at every size from {:g} to {:g} nodes",
                         faster_or_slower(b.outcome == BreakEven::Outcome::always_faster), b.range_low, b.range_high);
    case BreakEven::Outcome::not_applicable:
      return "no topology fits any size";
  }
  return "";
}

std::string variability_text(const BreakEven& b, const std::string& scheme, NoiseLaw law) {
  switch (b.outcome) {
    case BreakEven::Outcome::crosses:
      return fmt::format("{} is {} than all-reduce above a compute CV of {:.1f} % ({} law)", scheme,
                         faster_or_slower(!b.faster_below), 100.0 * b.value, name_of(law));
    case BreakEven::Outcome::always_faster:
    case BreakEven::Outcome::always_slower:
      return fmt::format("{} is {} than all-reduce at every compute CV from {:g} to {:g} % ({} law)", scheme,
                         faster_or_slower(b.outcome == BreakEven::Outcome::always_faster), 100.0 * b.range_low,
                         100.0 * b.range_high, name_of(law));
    case BreakEven::Outcome::not_applicable:
      return "";
  }
  return "";
}

std::string inner_steps_text(const BreakEven& b) {
  switch (b.outcome) {
    case BreakEven::Outcome::crosses:
      return fmt::format("diloco is faster than all-reduce from H = {:g} inner steps on (at H = {:g} it is slower)",
                         b.value, b.last_below);
    case BreakEven::Outcome::always_faster:
      return fmt::format("diloco is faster than all-reduce at every H from {:g} on", b.range_low);
    case BreakEven::Outcome::always_slower:
      return fmt::format("diloco is slower than all-reduce at every H from {:g} to {:g}", b.range_low, b.range_high);
    case BreakEven::Outcome::not_applicable: return "";
  }
  return "";
}

std::string low_communication_rate_text(const BreakEven& b, int inner_steps) {
  switch (b.outcome) {
    case BreakEven::Outcome::crosses:
      return fmt::format("at H = {}, diloco is {} than all-reduce below {:.3g} Gbit/s per NIC and {} above", inner_steps,
                         faster_or_slower(b.faster_below), b.value, faster_or_slower(!b.faster_below));
    case BreakEven::Outcome::always_faster:
    case BreakEven::Outcome::always_slower:
      return fmt::format("at H = {}, diloco is {} than all-reduce at every rate from {:g} to {:g} Gbit/s per NIC",
                         inner_steps, faster_or_slower(b.outcome == BreakEven::Outcome::always_faster), b.range_low,
                         b.range_high);
    case BreakEven::Outcome::not_applicable: return "";
  }
  return "";
}

std::string caveat_text(const Caveat& c) {
  switch (c.kind) {
    case Caveat::Kind::consensus:
      return fmt::format(
          "Consensus: {} has a spectral gap of {:.3g} (All-Reduce: 1, an exact average every step); disagreement "
          "between replicas shrinks by about 1/e every {:.3g} steps{}. [DEC] measured equal or better accuracy than "
          "All-Reduce at a fixed iteration budget; check convergence on your model before switching.",
          c.topology, c.spectral_gap, c.spectral_gap > 0.0 ? 1.0 / c.spectral_gap : INFINITY,
          c.exact_average_per_period ? ", and the replicas agree exactly after each period" : "");
    case Caveat::Kind::local_batch:
      return fmt::format(
          "Local batch: {:g} {}s per GPU{}. [DEC] recommends accumulating over a window of 4-8 iterations "
          "(AccumAdam) when local batches are small, to tame the variance gossip adds.",
          c.batch_per_gpu, c.sample_unit, c.small_batch ? " is small" : "");
    case Caveat::Kind::not_applicable:
      return "Not applicable here: " + c.reason;
    case Caveat::Kind::straggler:
      return fmt::format(
          "Straggler: rank {} waits least with all-reduce ({:.2f} ms per iteration, others up to {:.2f} ms): it "
          "is the slow one. A persistent straggler paces gossip too: groups stay within a few iterations of each "
          "other, so in the long run every rank runs at the slowest rank's pace; decentralization hides only "
          "variability that comes and goes. Replace or rebalance the slow hardware.",
          c.straggler_rank, c.idle_min_s * 1e3, c.idle_max_s * 1e3);
    case Caveat::Kind::network_not_bottleneck:
      return "All-Reduce exposes less than 2 % of its iteration as communication: the network is not the "
             "bottleneck here.";
    case Caveat::Kind::gain_from_overlap:
      return "Most of the gain comes from overlapping communication with the next iteration, not from "
             "decentralization as such.";
    case Caveat::Kind::does_not_fit:
      return fmt::format("Memory: {} {} {:.1f} GiB per GPU of {:g} GiB: {} not fit and {} not recommended "
                         "(dtperf predict --scheme {} shows the breakdown).",
                         fmt::join(c.schemes, ", "), c.schemes.size() == 1 ? "needs" : "need", gib(c.memory_bytes),
                         gib(c.capacity_bytes), c.schemes.size() == 1 ? "it does" : "they do",
                         c.schemes.size() == 1 ? "is" : "are", c.schemes.front());
  }
  return "";
}

const char* outcome_name(BreakEven::Outcome outcome) {
  switch (outcome) {
    case BreakEven::Outcome::crosses: return "crosses";
    case BreakEven::Outcome::always_faster: return "always_faster";
    case BreakEven::Outcome::always_slower: return "always_slower";
    case BreakEven::Outcome::not_applicable: return "not_applicable";
  }
  return "?";
}

Json break_even_json(const BreakEven& b, const char* unit, const std::string& text) {
  Json j = {{"found", b.found()},
            {"outcome", outcome_name(b.outcome)},
            {"description", text},
            {"range", {b.range_low, b.range_high}}};
  if (b.found()) {
    j[unit] = b.value;
    j["decentralized_faster"] = b.faster_below ? "below" : "above";
  }
  return j;
}

Json caveat_json(const Caveat& c) {
  Json j = {{"kind", name_of(c.kind)}, {"text", caveat_text(c)}};
  switch (c.kind) {
    case Caveat::Kind::consensus:
      j["topology"] = c.topology;
      j["spectral_gap"] = c.spectral_gap;
      j["exact_average_per_period"] = c.exact_average_per_period;
      break;
    case Caveat::Kind::local_batch:
      j["batch_per_gpu"] = c.batch_per_gpu;
      j["sample_unit"] = c.sample_unit;
      j["small_batch"] = c.small_batch;
      break;
    case Caveat::Kind::not_applicable:
      j["reason"] = c.reason;
      break;
    case Caveat::Kind::straggler:
      j["rank"] = c.straggler_rank;
      j["idle_min_ms"] = c.idle_min_s * 1e3;
      j["idle_max_ms"] = c.idle_max_s * 1e3;
      break;
    case Caveat::Kind::does_not_fit:
      j["schemes"] = c.schemes;
      j["memory_GiB"] = gib(c.memory_bytes);
      j["gpu_memory_GiB"] = gib(c.capacity_bytes);
      break;
    case Caveat::Kind::network_not_bottleneck:
    case Caveat::Kind::gain_from_overlap:
      break;
  }
  return j;
}

}  // namespace

Json advice_json(const Advice& a) {
  const double t_ar = a.allreduce.iteration.iteration_s;
  Json candidates = Json::array();
  for (const auto& c : a.candidates) candidates.push_back(scheme_outcome_json(c, t_ar));
  Json whole_model = Json::array();
  for (const auto& c : a.whole_model_gossip) whole_model.push_back(scheme_outcome_json(c, t_ar));
  Json factors = Json::array();
  for (const auto& f : a.factors) {
    factors.push_back({{"factor", name_of(f.factor)},
                       {"gain_ms", f.seconds / units::ms},
                       {"share", f.share},
                       {"meaning", factor_meaning(f.factor)}});
  }
  Json caveats = Json::array();
  for (const Caveat& c : a.caveats) caveats.push_back(caveat_json(c));
  const std::string best = a.best ? a.best->scheme.name() : "";
  Json j = {{"verdict", name_of(a.verdict)},
            {"speedup", a.speedup},
            {"allreduce", scheme_outcome_json(a.allreduce, t_ar)},
            {"candidates", candidates},
            {"whole_model_gossip", whole_model},
            {"factors", factors},
            {"break_even_bandwidth", break_even_json(a.bandwidth, "nic_gbps", bandwidth_text(a.bandwidth))},
            {"break_even_nodes", break_even_json(a.nodes, "nodes", nodes_text(a.nodes))},
            {"break_even_variability",
             break_even_json(a.variability, "compute_cv", variability_text(a.variability, best, a.variability_law))},
            {"caveats", caveats}};
  if (a.best) j["best"] = scheme_outcome_json(*a.best, t_ar);
  if (a.sharded_alternative) j["sharded_alternative"] = scheme_outcome_json(*a.sharded_alternative, t_ar);
  if (const auto& l = a.low_communication) {
    const int h = l->diloco.local_sgd_options.inner_steps;
    j["low_communication"] = {
        {"diloco", scheme_outcome_json(l->diloco, t_ar)},
        {"local_sgd", scheme_outcome_json(l->local_sgd, t_ar)},
        {"speedup", l->speedup},
        {"break_even_inner_steps", break_even_json(l->inner_steps, "inner_steps", inner_steps_text(l->inner_steps))},
        {"break_even_bandwidth", break_even_json(l->bandwidth, "nic_gbps", low_communication_rate_text(l->bandwidth, h))}};
  }
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
                                        {"spectral-gap", ""},
                                        {"mem/GPU", "GiB"}};
  columns.push_back(variable ? Table::Column{"p99", "ms"} : Table::Column{"p90", "ms"});
  Table table(columns);
  const double t_ar = outcomes.front().iteration.iteration_s;
  std::string unavailable;
  std::vector<std::pair<double, std::vector<std::string>>> too_big;  // GiB to 0.1, schemes
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
                                    fixed(r.inter_bytes_per_node / units::MB, 1), percent(r.nic_utilization), gap,
                                    fixed(gib(o.memory.total_bytes()), 1)};
    if (!o.memory.fits()) {
      const double need = gib_to_a_tenth(o.memory.total_bytes());
      auto same = std::find_if(too_big.begin(), too_big.end(), [&](const auto& g) { return g.first == need; });
      if (same == too_big.end()) same = too_big.insert(too_big.end(), {need, {}});
      same->second.push_back(o.scheme.name());
    }
    if (variable) {
      row.push_back(o.variability ? fixed(o.variability->iteration_p99_s / units::ms, 2) : "-");
    } else {
      row.push_back(o.step_p90_s > 0.0 ? fixed(o.step_p90_s / units::ms, 2) : "-");
    }
    table.add_row(std::move(row));
  }
  std::string memory;
  for (const auto& [need, schemes] : too_big) {
    memory += fmt::format("# does not fit in GPU memory ({:g} GiB): {} {} {:.1f} GiB per GPU\n",
                          gib(outcomes.front().memory.capacity_bytes), fmt::join(schemes, ", "),
                          schemes.size() == 1 ? "needs" : "need", need);
  }
  return table.render() + memory + unavailable;
}

Json local_sgd_json(const LocalSgdRound& r, const LocalSgdOptions& o) {
  return {{"inner_steps", o.inner_steps},
          {"groups", r.groups},
          {"gpus_per_group", r.gpus_per_group},
          {"outer", o.outer_gossip ? "gossip" : "all-reduce"},
          {"sync", name_of(o.sync)},
          {"fragments", r.fragments},
          {"overlap_steps", r.overlap_steps},
          {"codec", name_of(o.codec)},
          {"top_k_fraction", o.codec == OuterCodec::top_k ? Json(o.top_k_fraction) : Json(nullptr)},
          {"inner_step_ms", r.inner_step_s / units::ms},
          {"round_ms", r.round_s / units::ms},
          {"compute_utilization", r.compute_utilization},
          {"per_sync",
           {{"prep_ms", r.prep_s / units::ms},
            {"comm_ms", r.comm_s / units::ms},
            {"overlap_window_ms", r.window_s / units::ms},
            {"wait_ms", r.wait_s / units::ms},
            {"compute_slowdown_ms", r.slow_s / units::ms},
            {"fold_ms", r.fold_s / units::ms},
            {"outer_step_ms", r.step_s / units::ms},
            {"wire_MB_per_gpu", r.wire_bytes_per_gpu / units::MB}}}};
}

std::string local_sgd_table(const LocalSgdRound& r, const LocalSgdOptions& o) {
  std::string out = fmt::format(
      "# round: {} inner steps of {:.2f} ms in {} groups of {} GPUs, then {} {} synchronisation{} by {} ({}{}); "
      "round {:.2f} ms, compute utilisation {}\n",
      o.inner_steps, r.inner_step_s / units::ms, r.groups, r.gpus_per_group, r.fragments > 1 ? std::to_string(r.fragments) : "one",
      name_of(o.sync), r.fragments > 1 ? "s" : "", o.outer_gossip ? "gossip between groups" : "all-reduce",
      name_of(o.codec),
      o.codec == OuterCodec::top_k ? fmt::format(" {:g} %", 100 * o.top_k_fraction) : std::string(),
      r.round_s / units::ms, percent(r.compute_utilization) + " %");
  Table table({{"per synchronisation", "", true}, {"time", "ms"}});
  table.add_row({"outer gradient and encoding", fixed(r.prep_s / units::ms, 3)});
  table.add_row({fmt::format("communication ({:.1f} MB per GPU across groups)", r.wire_bytes_per_gpu / units::MB),
                 fixed(r.comm_s / units::ms, 3)});
  table.add_row({fmt::format("  hidden behind {} inner step{}", r.overlap_steps, r.overlap_steps == 1 ? "" : "s"),
                 fixed(std::min(r.comm_s, r.window_s) / units::ms, 3)});
  table.add_row({"  waited for", fixed(r.wait_s / units::ms, 3)});
  table.add_row({"compute slowed beside it", fixed(r.slow_s / units::ms, 3)});
  table.add_row({"decoding into the average", fixed(r.fold_s / units::ms, 3)});
  table.add_row({"outer optimizer step", fixed(r.step_s / units::ms, 3)});
  return out + table.render();
}

std::string steps_table(const SchemeOutcome& o) {
  const bool timed = o.step_iteration_s.size() == o.steps.size();
  std::vector<Table::Column> columns = {{"step", ""}, {"intra/GPU", "MB"}, {"inter/node", "MB"}};
  if (timed) columns.push_back({"iteration", "ms"});
  Table table(columns);
  for (std::size_t k = 0; k < o.steps.size(); ++k) {
    std::vector<std::string> row = {std::to_string(k), fixed(o.steps[k].intra_bytes_per_gpu / units::MB, 1),
                                    fixed(o.steps[k].inter_bytes_per_node / units::MB, 1)};
    if (timed) row.push_back(fixed(o.step_iteration_s[k] / units::ms, 2));
    table.add_row(std::move(row));
  }
  std::string out = table.render();
  if (timed) {
    out += fmt::format("# iteration time over the period: p50 {:.2f} ms, p90 {:.2f} ms, mean {:.2f} ms\n",
                       o.step_p50_s / units::ms, o.step_p90_s / units::ms, o.iteration.iteration_s / units::ms);
  }
  return out;
}

std::string advice_text(const Advice& a) {
  std::string out;
  const double t_ar = a.allreduce.iteration.iteration_s / units::ms;
  if (a.best) {
    const double t_best = a.best->iteration.iteration_s / units::ms;
    out += fmt::format("verdict: {}. Best decentralized topology: {}, {:.3f}x the speed of all-reduce "
                       "({:.2f} ms vs {:.2f} ms per iteration).\n",
                       name_of(a.verdict), a.best->scheme.name(), a.speedup, t_best, t_ar);
    out += fmt::format("\nwhere the difference comes from ({:+.2f} ms per iteration, switching each factor off in the "
                       "model; Shapley shares):\n",
                       t_ar - t_best);
    Table factors({{"factor", "", true}, {"gain", "ms"}, {"share", "%"}, {"what it is", "", true}});
    for (const auto& f : a.factors) {
      factors.add_row({name_of(f.factor), fixed(f.seconds / units::ms, 2), percent(f.share), factor_meaning(f.factor)});
    }
    out += factors.render() + shares_explained(a);
  } else if (a.verdict == Verdict::does_not_fit) {
    const MemoryBreakdown& m = a.allreduce.memory;
    out += fmt::format("verdict: {}: no replicated scheme fits in GPU memory; all-reduce needs {:.1f} GiB per GPU of "
                       "{:g} GiB.",
                       name_of(a.verdict), gib(m.total_bytes()), gib(m.capacity_bytes));
    if (const auto& s = a.sharded_alternative) {
      out += fmt::format(" Sharded, {} fits: {:.1f} GiB per GPU, {:.2f} ms per iteration (dtperf predict --scheme {}).\n",
                         s->scheme.name(), gib(s->memory.total_bytes()), s->iteration.iteration_s / units::ms,
                         s->scheme.name());
    } else {
      out += " No sharded scheme fits either: reduce the batch per GPU or recompute activations "
             "(--recompute-activations).\n";
    }
    out += memory_line(m);
  } else {
    const bool any_available =
        std::any_of(a.candidates.begin(), a.candidates.end(), [](const SchemeOutcome& c) { return c.available; });
    out += fmt::format("verdict: {}: no decentralized topology fits {} ({:.2f} ms per iteration with "
                       "all-reduce).\n",
                       name_of(a.verdict), any_available ? "in GPU memory" : "this cluster", t_ar);
  }
  if (!a.whole_model_gossip.empty()) {
    std::vector<std::string> parts;
    for (const SchemeOutcome& o : a.whole_model_gossip) {
      parts.push_back(o.available ? fmt::format("{} {:.2f} ms ({:.3f}x{})", o.scheme.name(),
                                                o.iteration.iteration_s / units::ms,
                                                a.allreduce.iteration.iteration_s / o.iteration.iteration_s, o.memory.fits() ? "" : ", does not fit")
                                  : fmt::format("{} not applicable", o.scheme.name()));
    }
    out += fmt::format("\nwhole-model gossip (for reference, not ranked by the verdict): {}\n", fmt::join(parts, ", "));
  }
  if (const auto& l = a.low_communication) {
    const LocalSgdRound& r = *l->diloco.local_sgd;
    const LocalSgdOptions& o = l->diloco.local_sgd_options;
    out += fmt::format(
        "\nlow-communication training (for reference, not ranked by the verdict: it changes the optimisation): "
        "diloco {:.2f} ms per inner step ({:.3f}x), local-sgd {:.2f} ms, with {} groups of {} GPUs synchronising "
        "every {} steps ({}, {}); compute utilisation {} %\n",
        l->diloco.iteration.iteration_s / units::ms, l->speedup, l->local_sgd.iteration.iteration_s / units::ms,
        r.groups, r.gpus_per_group, o.inner_steps, name_of(o.sync), name_of(o.codec),
        percent(r.compute_utilization));
    out += "  inner steps: " + inner_steps_text(l->inner_steps) + "\n";
    out += "  bandwidth:   " + low_communication_rate_text(l->bandwidth, o.inner_steps) + "\n";
  }
  out += "\nbreak-even:\n";
  out += "  bandwidth: " + bandwidth_text(a.bandwidth) + "\n";
  out += "  nodes:     " + nodes_text(a.nodes) + "\n";
  if (a.best) out += "  compute:   " + variability_text(a.variability, a.best->scheme.name(), a.variability_law) + "\n";
  if (!a.caveats.empty()) {
    out += "\ncaveats:\n";
    for (const auto& c : a.caveats) out += "  - " + caveat_text(c) + "\n";
  }
  return out;
}

}  // namespace dtperf::io
