#include "dtperf/analysis/evaluator.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/limits.hpp"

namespace dtperf {

std::string Scheme::name() const {
  switch (kind) {
    case Kind::allreduce: return "all-reduce";
    case Kind::sgp: return "sgp";
    case Kind::sgp_sync: return "sgp-sync";
    case Kind::dpsgd: return "d-psgd";
    case Kind::gossip: return topology;
    case Kind::sharded: return name_of(sharding);
    case Kind::local_sgd: return "local-sgd";
    case Kind::diloco: return "diloco";
  }
  return "?";
}

std::optional<Scheme> parse_scheme(const std::string& name) {
  if (name == "all-reduce" || name == "allreduce") return Scheme::allreduce();
  if (name == "sgp") return Scheme::sgp();
  if (name == "sgp-sync") return Scheme::sgp_sync();
  if (name == "d-psgd") return Scheme::dpsgd();
  if (name == "local-sgd") return Scheme::local_sgd();
  if (name == "diloco") return Scheme::diloco();
  if (const auto sharding = parse_name<Sharding>(name)) return Scheme::sharded(*sharding);
  for (const TopologyInfo& t : topologies()) {
    if (name == t.name) return Scheme::gossip(name);
  }
  return std::nullopt;
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names = {"all-reduce", "sgp", "sgp-sync", "d-psgd"};
  for (const Sharding s : kShardings) names.emplace_back(name_of(s));
  names.emplace_back("local-sgd");
  names.emplace_back("diloco");
  for (const TopologyInfo& t : topologies()) names.emplace_back(t.name);
  return names;
}

Evaluator::Evaluator(Setup setup) : setup_(std::move(setup)) {}

std::shared_ptr<const CompiledSchedule> Evaluator::schedule(const std::string& topology, int ranks,
                                                            int ranks_per_node, bool per_rank) {
  const auto key = std::make_tuple(topology, ranks, ranks_per_node, per_rank);
  auto& slot = schedules_[key];
  if (!slot) {
    slot = topology == "sgp"      ? compile_sgp_schedule(ranks, ranks_per_node, !per_rank)
           : topology == "d-psgd" ? compile_dpsgd_schedule(ranks, ranks_per_node, !per_rank)
                                  : compile_schedule(make_topology(topology, ranks, ranks_per_node), !per_rank);
  }
  return slot;
}

GossipPredictor& Evaluator::merged_predictor(const std::shared_ptr<const CompiledSchedule>& schedule,
                                             GossipAlgorithm algorithm) {
  auto& slot = merged_predictors_[{schedule.get(), algorithm}];
  if (!slot) slot = std::make_unique<GossipPredictor>(*setup_.model, schedule, algorithm);
  return *slot;
}

const MixingQuality& Evaluator::mixing(const std::string& topology, int ranks, int ranks_per_node) {
  const auto key = std::make_tuple(topology, ranks, ranks_per_node);
  const auto it = mixing_.find(key);
  if (it != mixing_.end()) return it->second;
  return mixing_.emplace(key, mixing_quality(make_topology(topology, ranks, ranks_per_node))).first->second;
}

const MixingQuality& Evaluator::setup_mixing(const std::string& topology) {
  const ClusterProfile& c = setup_.cluster;
  const bool node_level = setup_.gossip.node_level && c.gpus_per_node > 1;
  return node_level ? mixing(topology, c.nodes, 1) : mixing(topology, c.ranks(), c.gpus_per_node);
}

SchemeOutcome Evaluator::evaluate(const Scheme& scheme, const Factors& factors, bool with_mixing) {
  return evaluate_on(setup_.cluster, scheme, factors, with_mixing);
}

namespace {

// Homogeneous links: every GPU's link inside its node becomes as fast as the node's
// whole inter-node path (its NICs together) and as slow to start (the inter-node
// latency). Rings that cross nodes are bound by the NICs either way; what changes is that
// mixing inside a node is no longer cheaper than mixing across nodes.
NetworkParams homogenized(const NetworkParams& net) {
  NetworkParams same = net;
  same.intra_bytes_per_s = net.node_nic_bytes_per_s();
  same.intra_latency_s = net.inter_latency_s;
  same.tables = {};
  return same;
}

// Every number a report prints from an outcome, by the name the message gives it: finite
// and non-negative, and a time at most limits::kMaxPredictedS (reports print it in ms and
// us, and the simulations sum it over iterations: 1e306 s printed as inf ms).
void check_outcome(const SchemeOutcome& out, const ClusterProfile& cluster) {
  const IterationResult& i = out.iteration;
  const bool variable = out.variability.has_value();
  struct Value {
    const char* name;
    double x;
    bool seconds;
  };
  const Value values[] = {
      {"iteration time", i.iteration_s, true},
      {"accumulation time", i.accumulation_s, true},
      {"forward time", i.forward_s, true},
      {"backward time", i.backward_s, true},
      {"exposed communication", i.exposed_comm_s, true},
      {"optimizer time", i.optimizer_s, true},
      {"overhead", i.overhead_s, true},
      {"communication busy time", i.comm_busy_s, true},
      {"NIC busy time", i.nic_busy_s, true},
      {"single-GPU iteration time", i.single_gpu_iteration_s, true},
      {"median step time", out.step_p50_s, true},
      {"P90 step time", out.step_p90_s, true},
      {"P50 iteration time", variable ? out.variability->iteration_p50_s : 0.0, true},
      {"P99 iteration time", variable ? out.variability->iteration_p99_s : 0.0, true},
      {"mean idle time", variable ? out.variability->idle_mean_s : 0.0, true},
      {"intra-node bytes", i.intra_bytes_per_gpu, false},
      {"inter-node bytes", i.inter_bytes_per_node, false},
      {"NIC utilization", i.nic_utilization, false},
      {"throughput", i.throughput_samples_per_s, false},
      {"scaling factor", i.scaling_factor, false},
  };
  const auto refuse = [&](const std::string& what) {
    // Named as "prediction", not as an input: no one flag or key is to blame.
    throw InputError("prediction", "",
                     fmt::format("{} on {} x {} GPUs: {}; the rates, times and sizes given are too far apart to model "
                                 "(docs/MANUAL.md, \"Limits\")",
                                 out.scheme.name(), cluster.nodes, cluster.gpus_per_node, what));
  };
  for (const Value& v : values) {
    if (!std::isfinite(v.x) || v.x < 0.0) refuse(fmt::format("the {} came out as {}", v.name, v.x));
    if (v.seconds && v.x > limits::kMaxPredictedS) {
      refuse(fmt::format("the {} came out as {:.3g} s, beyond {:g} s", v.name, v.x, limits::kMaxPredictedS));
    }
  }
  for (const double x : out.step_iteration_s) {
    if (!std::isfinite(x) || x < 0.0 || x > limits::kMaxPredictedS) {
      refuse(fmt::format("a step's iteration time came out as {:.3g} s", x));
    }
  }
  // Local SGD and DiLoCo print their round too: H inner steps, each within the limit, can
  // add up past it.
  if (const std::optional<LocalSgdRound>& r = out.local_sgd) {
    const Value rounds[] = {{"round time", r->round_s, true}, {"synchronisation time", r->comm_s, true},
                            {"wait", r->wait_s, true}, {"preparation time", r->prep_s, true}};
    for (const Value& v : rounds) {
      if (!std::isfinite(v.x) || v.x < 0.0) refuse(fmt::format("the {} came out as {}", v.name, v.x));
      if (v.x > limits::kMaxPredictedS) {
        refuse(fmt::format("the {} came out as {:.3g} s, beyond {:g} s", v.name, v.x, limits::kMaxPredictedS));
      }
    }
  }
}

// Variable compute simulates every rank: beyond limits::kMaxVariableRanks it is refused
// before anything is compiled for them.
void check_variable_ranks(int ranks, const ClusterProfile& cluster) {
  if (ranks <= limits::kMaxVariableRanks) return;
  throw InputError::in_input(
      "nodes", fmt::format("variable compute simulates every rank, at most {} (docs/MANUAL.md, \"Limits\"); {} x {} "
                           "GPUs are {}: give fewer nodes, or predict without variable compute",
                           limits::kMaxVariableRanks, cluster.nodes, cluster.gpus_per_node, ranks));
}

// Why a variable-compute simulation beyond limits::kMaxRankSteps is not run, with the
// most iterations that would fit beside the warm-up it needs (All-Reduce only draws in
// its warm-up; a gossip topology runs at least until it settles).
std::string simulation_work_refusal(const SimulationWork& w, const Scheme& scheme, const ClusterProfile& cluster) {
  const double fitting = w.most_measured_iterations(limits::kMaxRankSteps);
  const std::string advice =
      fitting >= 1.0 ? fmt::format("simulate at most {:.0f} iterations here, or fewer GPUs", fitting)
                     : std::string("no iteration fits at this size: give fewer GPUs or larger buckets");
  return fmt::format(
      "variable compute with {} on {} x {} GPUs would simulate {:.3g} rank-steps ({:.0f} ranks x {:.0f} buckets x "
      "{:.3g} step{} per bucket x {:.0f} iterations), beyond the limit of {:.3g} (docs/MANUAL.md, \"Limits\"): {}",
      scheme.name(), cluster.nodes, cluster.gpus_per_node, w.rank_steps(), w.ranks, w.buckets, 1.0 + w.rounds_per_bucket,
      w.rounds_per_bucket == 0.0 ? "" : "s", w.iterations, limits::kMaxRankSteps, advice);
}

}  // namespace

SchemeOutcome Evaluator::evaluate_on(const ClusterProfile& cluster, const Scheme& scheme, const Factors& factors,
                                     bool with_mixing) {
  // Every reader holds its own counts to the limits; a cluster put together from several
  // (a runs file's nodes on a profile's node size) is held to the GPU limit here.
  if (static_cast<std::int64_t>(cluster.nodes) * cluster.gpus_per_node > limits::kMaxGpus) {
    throw InputError::in_input("nodes", fmt::format("{} nodes x {} GPUs is over the limit of {} GPUs", cluster.nodes,
                                                    cluster.gpus_per_node, limits::kMaxGpus));
  }
  ++evaluations_;
  SchemeOutcome out = evaluate_unchecked(cluster, scheme, factors, with_mixing);
  // The engine's boundary: whatever the inputs, a report never prints inf, NaN (JSON
  // null) or a negative time; an outcome that has one is refused here, by name.
  if (out.available) check_outcome(out, cluster);
  return out;
}

SchemeOutcome Evaluator::plan(const Scheme& scheme, const Factors& factors) {
  planning_ = true;
  try {
    SchemeOutcome out = evaluate_unchecked(setup_.cluster, scheme, factors, false);
    planning_ = false;
    return out;
  } catch (...) {
    planning_ = false;
    throw;
  }
}

// memory_per_gpu reads the model, the GPU's memory, the ranks and GPUs per node, the dtype,
// the request, the scheme's kind and sharding and the all-reduce options: the key.
MemoryBreakdown Evaluator::memory(const ClusterProfile& cluster, const ComputeRequest& request, ReplicaScheme scheme,
                                  Sharding sharding) {
  const MemoryKey key{setup_.model, cluster.gpu.memory_gib, cluster.ranks(), cluster.gpus_per_node,
                      setup_.dtype, request, scheme, setup_.allreduce, sharding};
  if (!memory_ || !(memory_->first == key)) {
    memory_.emplace(key, memory_per_gpu(*setup_.model, cluster, setup_.dtype, request, scheme, setup_.allreduce,
                                        sharding));
  }
  return memory_->second;
}

SchemeOutcome Evaluator::evaluate_unchecked(const ClusterProfile& cluster, const Scheme& scheme,
                                            const Factors& factors, bool with_mixing) {
  SchemeOutcome out;
  out.scheme = scheme;
  const ModelSpec& model = *setup_.model;
  // The links once; the variants differ only in what the wire carries per byte.
  const NetworkParams gathered = network_params(cluster, 1.0, setup_.reduction);  // uncompressed
  const auto compressed = [&](double ratio) {
    NetworkParams n = gathered;
    n.compression_ratio = ratio;
    return n;
  };
  const NetworkParams net = compressed(setup_.workload.compression_ratio);
  ComputeParams compute = compute_params(cluster, setup_.dtype);
  compute.compute_scale = setup_.workload.compute_scale;
  compute.forward_scale = setup_.workload.forward_scale;
  compute.backward_scale = setup_.workload.backward_scale;
  const ComputeRequest request = compute_request(model, setup_.workload, cluster.ranks());
  const int ranks = cluster.ranks();
  const int per_node = cluster.gpus_per_node;

  const bool variable = factors.variable_compute && setup_.variability.any();
  const auto keep_variability = [&](const VariabilityOutcome& v) {
    out.iteration = v.iteration;
    out.idle_per_rank_s.assign(v.idle_per_rank_s.begin(), v.idle_per_rank_s.end());
    out.variability = v;
    out.variability->idle_per_rank_s = {};
  };

  out.memory = memory(cluster, request,
                       scheme.kind == Scheme::Kind::allreduce || scheme.low_communication() ? ReplicaScheme::allreduce
                       : scheme.kind == Scheme::Kind::sharded ? ReplicaScheme::sharded
                                                              : ReplicaScheme::gossip,
                       scheme.sharding);
  // Gradients reduced at --grad-dtype: the wire carries grad_bytes / param_bytes of them.
  const double grad_ratio =
      setup_.workload.grad_bytes ? static_cast<double>(model.param_bytes) / *setup_.workload.grad_bytes : 1.0;
  const NetworkParams grad_net = grad_ratio == 1.0 ? net : compressed(setup_.workload.compression_ratio * grad_ratio);
  if (scheme.kind == Scheme::Kind::sharded) {
    if (variable) {
      out.available = false;
      out.unavailable_reason = fmt::format("{} is modelled without variable compute", scheme.name());
      return out;
    }
    const NetworkParams links = factors.heterogeneous_links ? grad_net : homogenized(grad_net);
    // Parameters are gathered uncompressed.
    const NetworkParams params = factors.heterogeneous_links ? gathered : homogenized(gathered);
    out.iteration = predict_sharded(model, ShardedScenario{scheme.sharding, links, params, compute, request, setup_.allreduce});
    out.step_p50_s = out.step_p90_s = out.iteration.iteration_s;
    out.rank_classes = 1;
    return out;
  }
  if (scheme.low_communication()) {
    const bool diloco = scheme.kind == Scheme::Kind::diloco;
    out.memory.optimizer_bytes += outer_state_bytes(model, diloco);
    if (variable) {
      out.available = false;
      out.unavailable_reason = fmt::format("{} is modelled without variable compute", scheme.name());
      return out;
    }
    if (const auto problem = local_sgd_unavailable(setup_.local_sgd, cluster.nodes)) {
      out.available = false;
      out.unavailable_reason = fmt::format("{}: {}", scheme.name(), *problem);
      return out;
    }
    // The outer synchronisation moves what its codec says; the inner DDP as All-Reduce.
    const LocalSgdScenario s{factors.heterogeneous_links ? gathered : homogenized(gathered),
                             factors.heterogeneous_links ? grad_net : homogenized(grad_net),
                             compute,
                             request,
                             setup_.allreduce,
                             setup_.local_sgd,
                             diloco ? OuterOptimizer::nesterov : OuterOptimizer::average};
    if (!allreduce_) allreduce_ = std::make_unique<AllReducePredictor>(model);
    const LocalSgdResult r = predict_local_sgd(model, s, *allreduce_);
    out.iteration = r.iteration;
    out.local_sgd = r.round;
    out.local_sgd_options = setup_.local_sgd;
    // Of a round's H steps, one per fragment also synchronises (nearest-rank quantiles).
    const int H = setup_.local_sgd.inner_steps;
    const auto quantile = [&](double p) {
      const int k = static_cast<int>(std::ceil(p * H));
      return k > H - r.round.fragments ? r.round.inner_step_s + (r.round.round_s - H * r.round.inner_step_s) / r.round.fragments
                                       : r.round.inner_step_s;
    };
    out.step_p50_s = quantile(0.5);
    out.step_p90_s = quantile(0.9);
    out.rank_classes = 1;
    return out;
  }
  if (scheme.kind == Scheme::Kind::allreduce) {
    AllReduceScenario s{factors.heterogeneous_links ? grad_net : homogenized(grad_net), compute, request,
                        setup_.allreduce};
    if (!allreduce_) allreduce_ = std::make_unique<AllReducePredictor>(model);
    AllReducePredictor& predictor = *allreduce_;
    out.rank_classes = variable ? ranks : 1;
    if (variable) {
      check_variable_ranks(ranks, cluster);
      // Every analysis compares with All-Reduce: beyond the limit it is refused outright.
      predictor.predict(s);  // its buckets, for the work
      const SimulationWork work = predictor.variable_work(s, setup_.variability);
      if (work.rank_steps() > limits::kMaxRankSteps) {
        throw InputError::in_input("sim-iterations", simulation_work_refusal(work, scheme, cluster));
      }
      out.simulation_work = work;
      if (planning_) return out;
      keep_variability(predictor.predict(s, setup_.variability));
    } else {
      out.iteration = predictor.predict(s);
      out.step_p50_s = out.step_p90_s = out.iteration.iteration_s;
    }
    return out;
  }

  const std::string topology = scheme.kind == Scheme::Kind::dpsgd ? "d-psgd"
                               : scheme.directed_gossip()       ? "sgp"
                                                                : scheme.topology;
  // Node-level: one replica per node; the schedule runs over nodes (gossip.hpp).
  const bool node_level = setup_.gossip.node_level && per_node > 1;
  const int schedule_ranks = node_level ? cluster.nodes : ranks;
  const int schedule_per_node = node_level ? 1 : per_node;
  if (node_level && cluster.nodes < 2) {
    out.available = false;
    out.unavailable_reason = fmt::format("node-level {} needs at least 2 nodes", scheme.name());
    return out;
  }
  if (scheme.kind == Scheme::Kind::gossip) {
    if (const auto problem = topology_unavailable(topology, schedule_ranks, schedule_per_node)) {
      out.available = false;
      out.unavailable_reason = *problem;
      return out;
    }
  } else if (ranks < 2) {
    out.available = false;
    out.unavailable_reason = fmt::format("{} needs at least 2 ranks", scheme.name());
    return out;
  }
  GossipScenario s{factors.heterogeneous_links ? net : homogenized(net), compute, request, setup_.gossip};
  s.options.overlap = factors.overlap && scheme.kind != Scheme::Kind::sgp_sync;
  if (node_level) {
    if (variable) {
      out.available = false;
      out.unavailable_reason = fmt::format("node-level {} is modelled without variable compute", scheme.name());
      return out;
    }
    s.replica_gpus = per_node;
    s.replica_network = s.network;
    s.replica_network.nodes = 1;
    s.network.gpus_per_node = 1;
  }
  const GossipAlgorithm algorithm = scheme.kind == Scheme::Kind::dpsgd ? GossipAlgorithm::dpsgd
                                    : scheme.directed_gossip()         ? GossipAlgorithm::sgp
                                                                       : GossipAlgorithm::decent_dp;
  // With variable compute: the settling run, on rank classes, and the work the per-rank
  // simulation will do, checked before its schedule is compiled.
  const GossipResult* settled = nullptr;
  if (variable) {
    check_variable_ranks(schedule_ranks, cluster);
    GossipPredictor& merged = merged_predictor(schedule(topology, schedule_ranks, schedule_per_node, false), algorithm);
    settled = &merged.predict(s);
    // Beyond the limit this topology is not applicable here (compare and advise go on
    // with the others; predict names the option to change).
    const SimulationWork work = merged.variable_work(setup_.variability, *settled);
    out.simulation_work = work;
    if (work.rank_steps() > limits::kMaxRankSteps) {
      out.available = false;
      out.unavailable_input = "sim-iterations";
      out.unavailable_reason = simulation_work_refusal(work, scheme, cluster);
      return out;
    }
    if (planning_) return out;
  }
  std::optional<GossipPredictor> per_rank;
  if (variable) per_rank.emplace(model, schedule(topology, schedule_ranks, schedule_per_node, true), algorithm);
  const GossipResult& r =
      variable ? per_rank->predict(s, setup_.variability, *settled)
               : merged_predictor(schedule(topology, schedule_ranks, schedule_per_node, false), algorithm).predict(s);
  out.iteration = r.iteration;
  if (variable) keep_variability(r.variability);
  out.steps.assign(r.steps.begin(), r.steps.end());
  out.step_iteration_s.assign(r.step_iteration_s.begin(), r.step_iteration_s.end());
  out.step_p50_s = r.step_p50_s;
  out.step_p90_s = r.step_p90_s;
  out.rank_classes = r.rank_classes;
  if (!variable) {
    out.iterations_simulated = r.iterations_simulated;
    out.exchange_slots_per_iteration = r.exchange_slots_per_iteration;
  }
  out.node_link_in_turns_s = r.node_link_in_turns_s;
  out.node_link_crossing_ranks = r.node_link_crossing_ranks;
  if (with_mixing && scheme.kind == Scheme::Kind::gossip) out.mixing = mixing(topology, schedule_ranks, schedule_per_node);
  return out;
}

double Evaluator::fit_compute_scale(const Scheme& scheme, int nodes, double measured_iteration_s, int gpus_per_node) {
  ClusterProfile cluster = setup_.cluster;
  cluster.nodes = nodes;
  if (gpus_per_node > 0) cluster.gpus_per_node = gpus_per_node;
  const double saved = setup_.workload.compute_scale;
  const auto iteration_at = [&](double scale) {
    setup_.workload.compute_scale = scale;
    const SchemeOutcome o = evaluate_on(cluster, scheme);
    if (!o.available) throw InputError::in_input("measured-scheme", o.unavailable_reason);
    return o.iteration.iteration_s;
  };
  double low = 1e-3;
  double high = 1e3;
  const double fastest = iteration_at(low);
  const double slowest = iteration_at(high);
  setup_.workload.compute_scale = saved;
  if (measured_iteration_s < fastest || measured_iteration_s > slowest) {
    throw InputError::in_input("measured-iteration-ms",
                     fmt::format("{:.3f} ms cannot be reproduced by scaling compute: {} on {} nodes takes {:.3f} ms "
                                 "with compute 1000x faster and {:.3f} ms with it 1000x slower",
                                 measured_iteration_s * 1e3, scheme.name(), nodes, fastest * 1e3, slowest * 1e3));
  }
  for (int i = 0; i < 80 && high / low > 1.0 + 1e-12; ++i) {
    const double mid = std::sqrt(low * high);
    (iteration_at(mid) < measured_iteration_s ? low : high) = mid;
  }
  setup_.workload.compute_scale = saved;
  return std::sqrt(low * high);
}

}  // namespace dtperf
