// One configuration of the gossip simulation, before it runs: buckets and their compute,
// node-level units, exchange prices, traffic per step, clocks.
#include "gossip_state.hpp"

namespace dtperf {

using namespace gossip_internal;

void GossipPredictor::State::make_buckets(const GossipScenario& s, const ComputeTimes& times) {
  const ComputeParams& c = s.compute;
  const double bytes_per_param = model.param_bytes;
  const auto close_bucket = [&](double bytes, double backward, std::size_t last_tensor) {
    bucket_bytes[buckets] = bytes;
    bucket_last_tensor[buckets] = last_tensor;
    bucket_backward_s[buckets] = backward;
    const double mix_passes = algorithm == GossipAlgorithm::sgp     ? kSgpMixPasses
                              : algorithm == GossipAlgorithm::dpsgd ? kDpsgdMixPasses
                                                                    : kDecentMixPasses;
    bucket_step_s[buckets] = optimizer_step_s(c, s.request.optimizer, bytes / bytes_per_param, model.param_bytes);
    if (algorithm == GossipAlgorithm::sgp) bucket_step_s[buckets] += kSgpWeightPasses * bytes / c.memory_bytes_per_s;
    bucket_mix_s[buckets] = c.kernel_overhead_s + mix_passes * bytes / c.memory_bytes_per_s;
    ++buckets;
  };
  buckets = 0;
  double bytes = 0.0;
  double backward = 0.0;
  const std::size_t n = model.tensors.size();
  for (std::size_t i = 0; i < n; ++i) {
    bytes += static_cast<double>(model.tensors[i].params) * bytes_per_param;
    backward += times.backward_s[i];
    // SGP and D-PSGD send the whole model as one message.
    const bool whole_model = algorithm != GossipAlgorithm::decent_dp;
    const bool close = whole_model ? i + 1 == n : (bytes >= s.options.bucket_cap_bytes || i + 1 == n);
    if (close) {
      close_bucket(bytes, backward, i);
      bytes = 0.0;
      backward = 0.0;
    }
  }
}

void GossipPredictor::State::make_local_units(const GossipScenario& s, const ComputeTimes& times) {
  local_units.clear();
  local_intra_bytes_per_gpu = 0.0;
  std::fill(bucket_gather_s.begin(), bucket_gather_s.end(), 0.0);
  if (s.replica_gpus <= 1) return;
  const GroupShape node{1, s.replica_gpus, 0};
  const std::size_t n = model.tensors.size();
  std::size_t bucket = 0;
  double into_bucket_s = 0.0;  // backward time since the gossip bucket began
  double unit_bytes = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    unit_bytes += static_cast<double>(model.tensors[i].params) * model.param_bytes;
    into_bucket_s += times.backward_s[i];
    const bool bucket_closes = i == bucket_last_tensor[bucket];
    if (unit_bytes >= s.options.bucket_cap_bytes || bucket_closes) {
      const CollectiveCost c = allreduce_cost(s.replica_network, node, unit_bytes, s.options.algorithm);
      local_units.push_back({bucket, into_bucket_s, c.time_s});
      local_intra_bytes_per_gpu += c.intra_bytes_per_rank;
      unit_bytes = 0.0;
    }
    if (bucket_closes && bucket + 1 < buckets) {
      ++bucket;
      into_bucket_s = 0.0;
    }
  }
  for (std::size_t b = 0; b < buckets; ++b) {
    const CollectiveCost c = collective_cost(s.replica_network, node, Collective::all_gather, bucket_bytes[b]);
    bucket_gather_s[b] = c.time_s;
    local_intra_bytes_per_gpu += c.intra_bytes_per_rank;
  }
}

void GossipPredictor::State::price_exchanges(const GossipScenario& s) {
  const NetworkParams& net = s.network;
  const std::size_t placements = schedule->placements.size();
  // Per placement x bucket, sized by the buckets this configuration closes (not the
  // tensors, which bound them: 262,144 tensors in a few dozen buckets took 0.2 GB per
  // simulation that way, and advise's node search keeps one per node count).
  const std::size_t cells = placements * buckets;
  for (auto* v : {&cost_s, &latency_cell_s, &host_share, &intra_bytes_per_rank, &inter_bytes_per_node}) {
    v->assign(cells, 0.0);
  }
  for (std::size_t p = 0; p < placements; ++p) {
    const GroupShape shape = schedule->placements[p].shape();
    // The shared link's latency: the part no other exchange slows, the group's cost for one byte.
    const double one_byte_s = lanes > 0 ? allreduce_cost(net, shape, 1.0, s.options.algorithm).time_s : 0.0;
    for (std::size_t b = 0; b < buckets; ++b) {
      const CollectiveCost cost = schedule->directed ? pair_send_cost(net, shape, bucket_bytes[b])
                                                     : allreduce_cost(net, shape, bucket_bytes[b], s.options.algorithm);
      const std::size_t cell = p * buckets + b;
      cost_s[cell] = cost.time_s + bucket_gather_s[b];
      if (lanes > 0) latency_cell_s[cell] = std::min(cost_s[cell], one_byte_s + bucket_gather_s[b]);
      host_share[cell] = contention.host_share(cost, shape.ranks_per_node, cost_s[cell] - cost.launch_s);
      intra_bytes_per_rank[cell] = cost.intra_bytes_per_rank;
      inter_bytes_per_node[cell] = cost.inter_bytes_per_node;
    }
  }
  exchange_stretched = false;
  host_shared = false;
  for (const double share : host_share) {
    exchange_stretched = exchange_stretched || contention.exchange_beside_compute(share) != 1.0;
    host_shared = host_shared || share != 0.0;
  }
}

void GossipPredictor::State::account_traffic() {
  const CompiledSchedule& sc = *schedule;
  std::fill(traffic.begin(), traffic.end(), StepTraffic{});
  for (const PlacementCount& count : sc.counts) {
    const Placement& place = sc.placements[count.placement];
    // Directed transfers count once per sending rank; a group counts its members and
    // the nodes it spans.
    const double members = sc.directed ? 1.0 : place.size;
    const double nodes = sc.directed ? (place.nodes > 1 ? 1.0 : 0.0) : place.nodes;
    for (std::size_t b = 0; b < buckets; ++b) {
      const std::size_t cell = count.placement * buckets + b;
      traffic[count.step].intra_bytes_per_gpu += count.groups * members * intra_bytes_per_rank[cell];
      traffic[count.step].inter_bytes_per_node += count.groups * nodes * inter_bytes_per_node[cell];
    }
  }
  const double ranks = sc.ranks;
  const double node_count = static_cast<double>(sc.ranks) / sc.ranks_per_node;
  for (StepTraffic& t : traffic) {
    t.intra_bytes_per_gpu = t.intra_bytes_per_gpu / ranks + local_intra_bytes_per_gpu;
    t.inter_bytes_per_node /= node_count;
  }
}

void GossipPredictor::State::reset_clocks() {
  for (auto* v : {&compute_clock_s, &intra_free_s, &inter_free_s, &intra_share, &inter_share, &accumulation_sum_s,
                  &forward_sum_s, &backward_sum_s, &wait_sum_s, &local_free_s, &received_s}) {
    std::fill(v->begin(), v->end(), 0.0);
  }
  std::fill(done_s.begin(), done_s.end(), 0.0);
  std::fill(launch_s.begin(), launch_s.end(), 0.0);
  for (Link& l : links) {
    l.clock_s = 0.0;
    l.jobs.clear();
  }
  flights.clear();
  std::fill(done_flight.begin(), done_flight.end(), 0);
  next_flight = 1;
}

// Bucket by bucket, every class in turn: a class's own arithmetic is the same as rank by
// rank (so the values are too), but consecutive classes are independent, which keeps the
// processor busy instead of waiting on one class's chain of additions, and every array is
// walked in order.
//
// A group exchange of bucket b starts once every member has launched it, so it is priced
// as soon as every class has passed bucket b: the backward segments of the later buckets
// then see it in flight (a host transport's CPU share slows them, and the exchange itself
// runs x its comm factor beside them). Directed exchanges (SGP: one bucket) follow the phase.

void GossipPredictor::State::prepare(const GossipScenario& s) {
  ComputeTimes times;
  times.backward_s = backward_s;
  compute_cache.get(model, s.compute, s.request, times);
  forward_s = times.forward_s;
  accumulation_s = times.accumulation_s;
  single_gpu_s = times.iteration_s();
  make_buckets(s, times);
  make_local_units(s, times);
  const bool distributed = s.network.ranks() > 1;
  contention = contention_beside_compute(s.compute, s.network);
  compute_work_s = times.accumulation_s + times.forward_s;
  for (std::size_t b = 0; b < buckets; ++b) compute_work_s += bucket_backward_s[b] + bucket_step_s[b] + bucket_mix_s[b];
  double after = 0.0;
  for (std::size_t b = buckets; b-- > 0;) {
    remaining_after_s[b] = after;
    after += bucket_backward_s[b] + bucket_step_s[b] + bucket_mix_s[b];
  }
  const std::size_t cells = compute_clock_s.size() * buckets;
  if (done_s.size() != cells) {  // allocates only when the bucket count changes
    done_s.assign(cells, 0.0);
    launch_s.assign(cells, 0.0);
  }
  lanes = schedule->directed ? 0 : s.network.collectives_in_flight;
  if (lanes > 0) {
    links.resize(2 * compute_clock_s.size());
    done_flight.resize(cells);
  }
  price_exchanges(s);
  account_traffic();
  overhead_s = 0.0;
  if (distributed) {
    // Every tensor, every bucket's bytes, once per iteration.
    double handed = 0.0;
    for (std::size_t b = 0; b < buckets; ++b) handed += bucket_bytes[b];
    overhead_s = s.compute.iteration_overhead_s + (s.network.nodes > 1 ? s.compute.cross_node_overhead_s : 0.0) +
                 exposed_host_s(s.network, static_cast<double>(model.tensors.size()), handed);
  }
  reset_clocks();
}


}  // namespace dtperf
