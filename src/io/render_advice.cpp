// The advisor's answer: its sentences (verdict, factor shares, break-even points,
// caveats) and its JSON, both from the Advice's values.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dtperf/io/render.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"
#include "render_parts.hpp"

namespace dtperf::io {

namespace {
double gib(double bytes) { return bytes / units::GiB; }
}  // namespace

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

constexpr const char* kNotSearched = "not searched: no replicated scheme fits in GPU memory";

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
      if (b.why == BreakEven::Why::too_large) {
        return fmt::format(
            "not searched at this size: with variable compute the scan simulates every rank, {:.0f} rank-buckets per "
            "iteration here (ranks x All-Reduce's and the topology's buckets), over its limit of {:.0f}; "
            "`dtperf predict --compute-cv CV --nic-gbps RATE` predicts one rate",
            b.simulated, b.simulated_limit);
      }
      return b.why == BreakEven::Why::one_node       ? "one node: the inter-node rate plays no part"
             : b.why == BreakEven::Why::does_not_fit ? kNotSearched
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
      return b.why == BreakEven::Why::does_not_fit ? kNotSearched : "no topology fits any size";
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
      if (b.why != BreakEven::Why::too_large) return "";
      return fmt::format(
          "not searched at this size: the search simulates every rank, {:.0f} rank-buckets per iteration here "
          "(ranks x All-Reduce's and the topology's buckets), over its limit of {:.0f}; "
          "`dtperf predict --compute-cv CV` predicts one CV",
          b.simulated, b.simulated_limit);
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
          "Local batch: {:g} {}{} per GPU{}. [DEC] recommends accumulating over a window of 4-8 iterations "
          "(AccumAdam) when local batches are small, to tame the variance gossip adds.",
          c.batch_per_gpu, c.sample_unit, c.batch_per_gpu == 1.0 ? "" : "s", c.small_batch ? " is small" : "");
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

Json break_even_json(const BreakEven& b, const char* unit, const std::string& text) {
  Json j = {{"found", b.found()},
            {"outcome", name_of(b.outcome)},
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
  j["parameter_allreduce"] = scheme_outcome_json(a.parameter_allreduce, t_ar);
  if (a.best) {
    j["best"] = scheme_outcome_json(*a.best, t_ar);
    Json tied = Json::array();
    for (const SchemeOutcome* o : tied_with_best(a)) tied.push_back(o->scheme.name());
    j["tied_with_best"] = tied;
  }
  if (a.sharded_alternative) {
    j["sharded_alternative"] = scheme_outcome_json(*a.sharded_alternative, t_ar);
    j["sharded_alternative"]["without_variable_compute"] = a.sharded_without_variability;
  }
  if (a.unfit_without_variability) {
    j["replicated_without_variable_compute"] = true;
  }
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

namespace {

// ", does not fit: N GiB per GPU of M" for a scheme that does not fit in GPU memory.
std::string not_fitting(const SchemeOutcome& o) {
  if (o.memory.fits()) return "";
  return fmt::format(", does not fit: {:.1f} GiB per GPU of {:g}", gib(o.memory.total_bytes()), gib(o.memory.capacity_bytes));
}

}  // namespace

std::string advice_text(const Advice& a) {
  std::string out;
  const double t_ar = a.allreduce.iteration.iteration_s / units::ms;
  if (a.best) {
    const double t_best = a.best->iteration.iteration_s / units::ms;
    out += fmt::format("verdict: {}. Best decentralized topology: {}, {:.3f}x the speed of all-reduce "
                       "({:.2f} ms vs {:.2f} ms per iteration).\n",
                       name_of(a.verdict), a.best->scheme.name(), a.speedup, t_best, t_ar);
    if (const auto tied = tied_with_best(a); !tied.empty()) {
      std::vector<std::string> names;
      for (const SchemeOutcome* o : tied) {
        names.push_back(fmt::format("{} ({:.2f} ms, spectral gap {:.4f})", o->scheme.name(),
                                    o->iteration.iteration_s / units::ms, o->mixing ? o->mixing->spectral_gap : 0.0));
      }
      out += fmt::format("tie: {} within {:.0f} % of the fastest, closer than the model tells apart; {} mixes best "
                         "(spectral gap {:.4f}), so its replicas agree soonest for the same time.\n",
                         fmt::join(names, ", "), (kComparableSpeed - 1.0) * 100.0, a.best->scheme.name(),
                         a.best->mixing ? a.best->mixing->spectral_gap : 0.0);
    }
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
      out += fmt::format(" Sharded, {} fits: {:.1f} GiB per GPU, {:.2f} ms per iteration{} (dtperf predict --scheme {}).\n",
                         s->scheme.name(), gib(s->memory.total_bytes()), s->iteration.iteration_s / units::ms,
                         a.sharded_without_variability
                             ? " without variable compute (sharded schemes are modelled without it)"
                             : "",
                         s->scheme.name());
    } else {
      out += " No sharded scheme fits either: reduce the batch per GPU or recompute activations "
             "(--recompute-activations).\n";
    }
    out += memory_line(m);
    if (a.unfit_without_variability) {
      out += "# with variable compute: nothing replicated fits, so the replicated schemes below are predicted without "
             "it, for reference\n";
    }
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
  if (const SchemeOutcome& p = a.parameter_allreduce; p.available) {
    out += fmt::format("overlapped all-reduce of parameters (Decent-DP's complete topology; for reference, not "
                       "decentralized): {:.2f} ms ({:.3f}x{})\n",
                       p.iteration.iteration_s / units::ms, a.allreduce.iteration.iteration_s / p.iteration.iteration_s,
                       p.memory.fits() ? "" : ", does not fit");
  }
  if (const auto& l = a.low_communication) {
    const LocalSgdRound& r = *l->diloco.local_sgd;
    const LocalSgdOptions& o = l->diloco.local_sgd_options;
    out += fmt::format(
        "\nlow-communication training (for reference, not ranked by the verdict: it changes the optimisation): "
        "diloco {:.2f} ms per inner step ({:.3f}x{}), local-sgd {:.2f} ms{}, with {} groups of {} GPUs synchronising "
        "every {} steps ({}, {}); compute utilisation {} %\n",
        l->diloco.iteration.iteration_s / units::ms, l->speedup, not_fitting(l->diloco),
        l->local_sgd.iteration.iteration_s / units::ms, not_fitting(l->local_sgd), r.groups, r.gpus_per_group,
        o.inner_steps, name_of(o.sync), name_of(o.codec), percent(r.compute_utilization));
    if (const std::string t = inner_steps_text(l->inner_steps); !t.empty()) out += "  inner steps: " + t + "\n";
    if (const std::string t = low_communication_rate_text(l->bandwidth, o.inner_steps); !t.empty()) {
      out += "  bandwidth:   " + t + "\n";
    }
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

Rendered render(const AdviseReport& r) {
  Json json = run_json(r.run);
  json["advice"] = advice_json(r.advice);
  std::string band;
  if (const auto& b = r.speedup_band) {
    json["advice"]["speedup_band"] = {{"p10", b->p10}, {"p90", b->p90}};
    band = fmt::format("speedup P10-P90 {}: {:.3f}x to {:.3f}x{}\n",
                       r.run.band_source == BandSource::fitted ? "from the fitted profile" : "from the datasheet's uncertainty",
                       b->p10, b->p90, r.settle.empty() ? "" : "; on both sides of 1: " + r.settle);
    if (!r.settle.empty()) json["advice"]["settle"] = r.settle;
  }
  return {run_header(r.run) + band + advice_text(r.advice), json, "/advice/candidates"};
}

}  // namespace dtperf::io
