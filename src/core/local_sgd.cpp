#include "dtperf/local_sgd.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include <fmt/format.h>

#include "dtperf/contention.hpp"

namespace dtperf {

std::optional<std::string> local_sgd_unavailable(const LocalSgdOptions& o, int nodes) {
  if (nodes % o.group_nodes != 0) {
    return fmt::format("{} nodes do not split into groups of {} nodes", nodes, o.group_nodes);
  }
  const int groups = nodes / o.group_nodes;
  if (groups < 2) {
    return fmt::format("needs at least 2 groups: {} node{} in groups of {} make{} {}", nodes, nodes == 1 ? "" : "s",
                       o.group_nodes, nodes == 1 ? "s" : "", groups);
  }
  if (o.outer_gossip && !std::has_single_bit(static_cast<unsigned>(groups))) {
    return fmt::format("gossip between groups pairs them one-peer exponentially: {} groups is not a power of 2", groups);
  }
  if (o.sync == OuterSync::streaming) {
    if (o.fragments > o.inner_steps) {
      return fmt::format("{} fragments cannot each start on their own inner step of {}", o.fragments, o.inner_steps);
    }
    // In 64 bits: each count may be up to limits::kMaxInnerSteps (10^6), their product not.
    if (static_cast<std::int64_t>(o.overlap_steps) * o.fragments > o.inner_steps) {
      return fmt::format("an overlap of {} inner steps is more than the {} steps between fragments ({} / {})",
                         o.overlap_steps, o.inner_steps / o.fragments, o.inner_steps, o.fragments);
    }
  }
  return std::nullopt;
}

namespace {

// Bytes per element of a shard (the table in local_sgd.hpp).
struct Codec {
  double wire = 4.0;
  double encode = 0.0;
  double fold = 12.0;     // one received encoding into the fp32 sum
  bool reducible = true;  // NCCL all-reduces it
  double reduced_fold = 0.0;  // after an all-reduce: back to fp32
};

constexpr double kScaleBytesPerElement = 4.0 / 256.0;  // one fp32 scale per block of 256

Codec codec_of(OuterCodec codec, double k) {
  switch (codec) {
    case OuterCodec::fp32: return {4.0, 0.0, 12.0, true, 0.0};
    case OuterCodec::bf16: return {2.0, 6.0, 10.0, true, 6.0};
    case OuterCodec::int8: return {1.0 + kScaleBytesPerElement, 9.0, 9.0, false, 0.0};
    case OuterCodec::int4: return {0.5 + kScaleBytesPerElement, 8.5, 8.5, false, 0.0};
    case OuterCodec::top_k: return {8.0 * k, 24.0 + 8.0 * k, 16.0 * k, false, 0.0};
  }
  return {};
}

}  // namespace

LocalSgdResult predict_local_sgd(const ModelSpec& model, const LocalSgdScenario& s) {
  AllReducePredictor inner(model);
  return predict_local_sgd(model, s, inner);
}

LocalSgdResult predict_local_sgd(const ModelSpec& model, const LocalSgdScenario& s, AllReducePredictor& inner) {
  const LocalSgdOptions& o = s.options;
  const NetworkParams& net = s.network;
  const int per_node = net.gpus_per_node;
  const int groups = net.nodes / o.group_nodes;
  const int g = o.group_nodes * per_node;
  const int H = o.inner_steps;

  LocalSgdResult out;
  NetworkParams group_net = s.inner_network;
  group_net.nodes = o.group_nodes;
  out.inner = inner.predict(AllReduceScenario{group_net, s.compute, s.request, s.inner});
  const IterationResult& in = out.inner;

  const int fragments = o.sync == OuterSync::streaming ? o.fragments : 1;
  const int tau = o.sync == OuterSync::blocking ? 0 : o.sync == OuterSync::delayed ? H : o.overlap_steps;
  const double fragment_elements = static_cast<double>(model.total_params()) / fragments;
  const double shard = fragment_elements / g;
  const double memory = s.compute.memory_bytes_per_s;
  const double kernel = s.compute.kernel_overhead_s;
  const Codec codec = codec_of(o.codec, o.top_k_fraction);
  const double param_bytes = model.param_bytes;

  // Communication of one fragment: across groups, then inside the group.
  const GroupShape across{groups, 1, per_node};
  const double wire = shard * codec.wire;
  CollectiveCost cross;
  double folds = 0.0;
  if (o.outer_gossip) {
    cross = pair_send_cost(net, GroupShape{2, 1, per_node}, wire);
    folds = 1.0;
  } else if (codec.reducible) {
    cross = allreduce_cost(net, across, wire, s.inner.algorithm);
  } else {
    cross = collective_cost(net, across, Collective::all_gather, groups * wire);
    folds = groups;
  }
  CollectiveCost gather;
  if (g > 1) {
    gather = collective_cost(net, GroupShape{o.group_nodes, per_node, per_node}, Collective::all_gather,
                             fragment_elements * 4.0);
  }
  const double comm = cross.time_s + gather.time_s;
  const double fold_bytes = o.outer_gossip || !codec.reducible ? folds * codec.fold : codec.reduced_fold;

  LocalSgdRound& r = out.round;
  r.groups = groups;
  r.gpus_per_group = g;
  r.fragments = fragments;
  r.overlap_steps = tau;
  r.inner_step_s = in.iteration_s;
  r.prep_s = kernel + (8.0 + param_bytes + codec.encode) * shard / memory;
  r.fold_s = (fold_bytes > 0.0 ? kernel : 0.0) + fold_bytes * shard / memory;
  const double step_bytes = (s.optimizer == OuterOptimizer::nesterov ? 20.0 : 12.0) + param_bytes;
  r.step_s = kernel + step_bytes * fragment_elements / memory;
  r.window_s = tau * std::max(0.0, in.iteration_s - in.nic_busy_s);
  // The outer exchange crosses nodes beside the inner steps (contention.hpp).
  const Contention contention = contention_beside_compute(s.compute, net);
  const double share = contention.host_share(cross, 1, comm);
  const double comm_factor = tau > 0 ? contention.exchange_beside_compute(share) : 1.0;
  r.comm_s = stretched_compute_s(comm, 0.0, r.window_s, comm_factor);
  r.wait_s = std::max(0.0, r.comm_s - r.window_s);
  const double interference = contention.compute_beside(share);
  r.slow_s = g == 1 && tau > 0 ? std::min(r.comm_s, r.window_s) * (1.0 - 1.0 / interference) : 0.0;
  r.wire_bytes_per_gpu = o.outer_gossip ? wire : codec.reducible ? 2.0 * (groups - 1.0) / groups * wire
                                                                 : (groups - 1.0) * wire;
  // The framework's host work for the fragment it hands over, a rank's shard of the
  // fragment's parameters (per tensor: the inner steps' All-Reduce has it).
  const double sync_overhead =
      s.compute.cross_node_overhead_s + exposed_host_s(net, 0.0, shard * static_cast<double>(param_bytes));
  const double per_sync = r.prep_s + r.wait_s + r.slow_s + r.fold_s + r.step_s + sync_overhead;
  r.round_s = H * in.iteration_s + fragments * per_sync;
  r.compute_utilization = H * in.iteration_s / r.round_s;

  // Per inner step: the round spread over its H steps.
  IterationResult& it = out.iteration;
  it = in;
  const double per_step = static_cast<double>(fragments) / H;
  it.iteration_s = r.round_s / H;
  it.backward_s += per_step * r.slow_s;
  it.exposed_comm_s += per_step * r.wait_s;
  it.optimizer_s += per_step * (r.prep_s + r.fold_s + r.step_s);
  it.overhead_s += per_step * sync_overhead;
  it.comm_busy_s += per_step * r.comm_s;
  it.nic_busy_s += per_step * (cross.time_s - cross.launch_s) * (tau > 0 ? comm_factor : 1.0);
  it.intra_bytes_per_gpu += per_step * gather.intra_bytes_per_rank;
  it.inter_bytes_per_gpu += per_step * (r.wire_bytes_per_gpu + gather.inter_bytes_per_node / per_node);
  it.inter_bytes_per_node = it.inter_bytes_per_gpu * per_node;
  it.nic_utilization = it.inter_bytes_per_node / (net.nics_per_node * net.nic_line_bytes_per_s * it.iteration_s);
  it.throughput_samples_per_s = net.ranks() * s.request.samples_per_gpu_per_step() / it.iteration_s;
  it.scaling_factor = it.single_gpu_iteration_s / it.iteration_s;
  return out;
}

}  // namespace dtperf
