#include "dtperf/sharded.hpp"

#include <algorithm>
#include <vector>

namespace dtperf {

int shard_ranks(Sharding sharding, int ranks, int gpus_per_node) {
  return sharding == Sharding::hsdp ? gpus_per_node : ranks;
}

namespace {

// A collective on the FIFO stream, and what it moves.
struct Stream {
  double free_s = 0.0;
  double busy_s = 0.0;
  double nic_busy_s = 0.0;
  double intra_bytes_per_rank = 0.0;
  double inter_bytes_per_node = 0.0;
  double factor = 1.0;  // contention with compute

  double run(double issue_s, const CollectiveCost& c) {
    const double t = c.time_s * factor;
    free_s = std::max(free_s, issue_s) + t;
    busy_s += t;
    if (c.inter_bytes_per_node > 0.0) nic_busy_s += (c.time_s - c.launch_s) * factor;
    intra_bytes_per_rank += c.intra_bytes_per_rank;
    inter_bytes_per_node += c.inter_bytes_per_node;
    return free_s;
  }
};

}  // namespace

IterationResult predict_sharded(const ModelSpec& model, const ShardedScenario& s) {
  const std::size_t n_tensors = model.tensors.size();
  std::vector<double> backward_s(n_tensors);
  ComputeTimes times{backward_s};
  compute_times(model, s.compute, s.request, times);
  std::vector<Bucket> units(std::max<std::size_t>(n_tensors, 1));
  const std::size_t count = make_buckets(model, backward_s, s.options, units);
  units.resize(count);

  const NetworkParams& net = s.network;
  const int ranks = net.ranks();
  const bool distributed = ranks > 1;
  const bool hybrid = s.sharding == Sharding::hsdp;
  const int shard = shard_ranks(s.sharding, ranks, net.gpus_per_node);
  const double interference = distributed ? s.compute.interference_factor : 1.0;
  const double overhead =
      distributed ? s.compute.iteration_overhead_s + (net.nodes > 1 ? s.compute.cross_node_overhead_s : 0.0) : 0.0;

  // Per unit: backward and forward compute (forward split as backward is), and the
  // collectives. The gradient network carries grad bytes; the parameter network the
  // parameters.
  std::vector<double> unit_backward(count, 0.0), unit_forward(count), ag_bytes(count), rs_bytes(count);
  std::size_t tensor = 0;
  for (std::size_t u = 0; u < count; ++u) {
    double params = 0.0;
    for (; tensor <= units[u].last_tensor; ++tensor) {
      unit_backward[u] += backward_s[tensor];
      params += static_cast<double>(model.tensors[tensor].params);
    }
    ag_bytes[u] = params * model.param_bytes;
    rs_bytes[u] = units[u].bytes;
  }
  for (std::size_t u = 0; u < count; ++u) {
    unit_forward[u] = times.backward_total_s > 0.0 ? times.forward_s * unit_backward[u] / times.backward_total_s
                                                   : times.forward_s / static_cast<double>(count);
    unit_backward[u] *= interference;
    unit_forward[u] *= interference;
  }

  const GroupShape world{net.nodes, net.gpus_per_node, net.gpus_per_node};
  const GroupShape node{1, net.gpus_per_node, net.gpus_per_node};
  const GroupShape across{net.nodes, 1, net.gpus_per_node};
  const GroupShape& group = hybrid ? node : world;
  const bool across_nodes = hybrid && net.nodes > 1;
  // Each unit's collectives cost the same at every micro-step: priced once here, not in
  // the micro-step loops (a 16-step accumulation would price them 16 times).
  std::vector<CollectiveCost> gather_cost(count), scatter_cost(count), across_cost(across_nodes ? count : 0);
  for (std::size_t u = 0; u < count; ++u) {
    gather_cost[u] = collective_cost(s.param_network, group, Collective::all_gather, ag_bytes[u]);
    scatter_cost[u] = collective_cost(net, group, Collective::reduce_scatter, rs_bytes[u]);
    if (across_nodes) {
      // Every GPU of the node all-reduces its shard at once: the node's NICs carry G of
      // these collectives' bytes (the cost already shares the NICs among them).
      across_cost[u] = allreduce_cost(net, across, rs_bytes[u] / net.gpus_per_node, s.options.algorithm);
      across_cost[u].inter_bytes_per_node *= net.gpus_per_node;
    }
  }

  Stream stream;
  stream.factor = distributed ? s.compute.comm_interference_factor : 1.0;
  const auto reduce = [&](std::size_t u, double issue_s) {
    double end = stream.run(issue_s, scatter_cost[u]);
    if (across_nodes) end = stream.run(end, across_cost[u]);
    return end;
  };

  double compute_s = 0.0;
  const double optimizer_s = times.optimizer_s / (distributed ? shard : 1);
  const int micro_steps = s.request.accumulation_steps;
  double end_s = 0.0;
  double accumulation_s = 0.0;  // the compute of the micro-steps before the last
  if (!distributed) {
    accumulation_s = times.accumulation_s;
    compute_s = accumulation_s + times.forward_s + times.backward_total_s;
    end_s = compute_s + optimizer_s;
  } else if (s.sharding == Sharding::zero1 || s.sharding == Sharding::zero2) {
    // Gradient accumulation: zero-1 keeps whole gradients and reduces them once, at the
    // last micro-step; zero-2 keeps only its shard, so every micro-step reduce-scatters.
    double comm_end = 0.0;
    for (int k = 0; k < micro_steps; ++k) {
      const bool last = k + 1 == micro_steps;
      const bool reduces = last || s.sharding == Sharding::zero2;
      // unit_backward carries the contention; a compute-only micro-step runs without it.
      const double uncontended = reduces ? 1.0 : 1.0 / interference;
      const double start = compute_s;
      compute_s += times.forward_s * interference * uncontended;
      for (std::size_t u = 0; u < count; ++u) {
        compute_s += unit_backward[u] * uncontended;
        if (reduces) comm_end = reduce(u, compute_s);
      }
      if (!last) accumulation_s += compute_s - start;
    }
    double clock = std::max(compute_s, comm_end) + optimizer_s;
    for (std::size_t u = 0; u < count; ++u) clock = stream.run(clock, gather_cost[u]);
    end_s = clock;
  } else {
    // Every micro-step gathers the parameters again and reduce-scatters its gradients
    // (FSDP without no_sync keeps only sharded gradients).
    std::vector<double> gathered(count);
    double comm_end = 0.0;
    for (int k = 0; k < micro_steps; ++k) {
      // Forward runs the units in reverse gradient-ready order.
      double previous_start = compute_s;
      for (std::size_t j = 0; j < count; ++j) {
        const std::size_t u = count - 1 - j;
        gathered[u] = stream.run(previous_start, gather_cost[u]);
        const double start = std::max(compute_s, gathered[u]);
        previous_start = start;
        compute_s = start + unit_forward[u];
      }
      // Backward: unit 0 is still gathered; the others are gathered again, one ahead.
      double ready = 0.0;  // unit u's parameters gathered
      for (std::size_t u = 0; u < count; ++u) {
        const double start = std::max(compute_s, ready);
        if (u + 1 < count) ready = stream.run(start, gather_cost[u + 1]);
        compute_s = start + unit_backward[u];
        comm_end = reduce(u, compute_s);
      }
    }
    accumulation_s = (micro_steps - 1) * (times.forward_s + times.backward_total_s) * interference;
    end_s = std::max(compute_s, comm_end) + optimizer_s;
  }

  // Compute as it runs (with contention); everything else before the optimizer step is
  // waiting for communication, inside forward and backward (fsdp) or after them.
  IterationResult r;
  r.accumulation_s = accumulation_s;
  r.forward_s = times.forward_s * interference;
  r.backward_s = times.backward_total_s * interference;
  r.optimizer_s = optimizer_s;
  double handed = 0.0;  // each unit's gather and scatter, once
  for (std::size_t u = 0; u < count; ++u) handed += ag_bytes[u] + rs_bytes[u];
  const double exposed =
      distributed ? overhead + exposed_host_s(net, static_cast<double>(model.tensors.size()), handed) : 0.0;
  r.overhead_s = exposed;
  r.iteration_s = end_s + exposed;
  r.exposed_comm_s = std::max(0.0, end_s - optimizer_s - accumulation_s - r.forward_s - r.backward_s);
  r.comm_busy_s = stream.busy_s;
  r.nic_busy_s = stream.nic_busy_s;
  r.intra_bytes_per_gpu = stream.intra_bytes_per_rank;
  r.inter_bytes_per_node = stream.inter_bytes_per_node;
  r.inter_bytes_per_gpu = r.inter_bytes_per_node / net.gpus_per_node;
  const double nic_capacity = net.nics_per_node * net.nic_line_bytes_per_s * r.iteration_s;
  r.nic_utilization = net.nodes > 1 ? r.inter_bytes_per_node / nic_capacity : 0.0;
  r.single_gpu_iteration_s = times.iteration_s();
  r.throughput_samples_per_s = ranks * s.request.samples_per_gpu_per_step() / r.iteration_s;
  r.scaling_factor = r.single_gpu_iteration_s / r.iteration_s;
  r.buckets = static_cast<int>(count);
  return r;
}

}  // namespace dtperf
