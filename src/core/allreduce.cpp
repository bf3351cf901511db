#include "dtperf/allreduce.hpp"

#include <algorithm>
#include <cstdint>

#include "dtperf/contention.hpp"
#include "dtperf/stats.hpp"

namespace dtperf {

std::size_t make_buckets(const ModelSpec& model, std::span<const double> backward_s,
                         const AllReduceOptions& options, std::span<Bucket> out) {
  std::size_t count = 0;
  double bytes = 0.0;
  double since_last_s = 0.0;
  const std::size_t n = model.tensors.size();
  for (std::size_t i = 0; i < n; ++i) {
    bytes += static_cast<double>(model.tensors[i].params) * model.param_bytes;
    since_last_s += backward_s[i];
    bool close = false;
    if (options.bucketing == Bucketing::ddp) {
      const double cap = count == 0 ? options.first_bucket_cap_bytes : options.bucket_cap_bytes;
      close = bytes >= cap;
    } else {
      close = since_last_s >= options.fusion_cycle_s || bytes >= options.fusion_buffer_bytes;
    }
    if ((close || i + 1 == n) && bytes > 0.0) {
      out[count++] = Bucket{static_cast<std::uint32_t>(i), bytes};
      bytes = 0.0;
      since_last_s = 0.0;
    }
  }
  return count;
}

AllReducePredictor::AllReducePredictor(const ModelSpec& model)
    : model_(model),
      backward_s_(model.tensors.size()),
      buckets_(model.tensors.size()),
      segment_s_(model.tensors.size()),
      cost_s_(model.tensors.size()),
      intra_bytes_(model.tensors.size()),
      inter_bytes_(model.tensors.size()),
      copy_in_s_(model.tensors.size()),
      copy_out_s_(model.tensors.size()),
      interference_(model.tensors.size()),
      comm_factor_(model.tensors.size()),
      remaining_s_(model.tensors.size()) {}

// Compute times, buckets and the cost of each bucket's all-reduce.
void AllReducePredictor::prepare(const AllReduceScenario& s) {
  ComputeTimes times;
  times.backward_s = backward_s_;
  compute_cache_.get(model_, s.compute, s.request, times);
  if (s.options.bucketing != Bucketing::ddp || ddp_buckets_of_ != s.options) {
    ddp_buckets_of_.reset();
    bucket_count_ = make_buckets(model_, backward_s_, s.options, buckets_);
    if (s.options.bucketing == Bucketing::ddp) ddp_buckets_of_ = s.options;
  }
  forward_s_ = times.forward_s;
  accumulation_s_ = times.accumulation_s;
  optimizer_s_ = times.optimizer_s;
  single_gpu_s_ = times.iteration_s();
  const NetworkParams& net = s.network;
  distributed_ = net.ranks() > 1;
  // A host transport's CPU time for a bucket's bytes slows the bucket's all-reduce and
  // compute while they overlap (contention.hpp), as do the profile's factors.
  const Contention contention = contention_beside_compute(s.compute, net);
  overhead_s_ = distributed_ ? s.compute.iteration_overhead_s + (net.nodes > 1 ? s.compute.cross_node_overhead_s : 0.0)
                             : 0.0;
  const bool copies = distributed_ && s.options.framework_copies;
  launch_s_ = distributed_ ? net.launch_s : 0.0;
  const GroupShape world{net.nodes, net.gpus_per_node, net.gpus_per_node};
  std::size_t tensor = 0;
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    // Summed tensor by tensor in backward order, so that every engine adds the same way.
    double segment = 0.0;
    for (; tensor <= buckets_[b].last_tensor; ++tensor) segment += backward_s_[tensor];
    segment_s_[b] = segment;
    const CollectiveCost cost = distributed_ ? allreduce_cost(net, world, buckets_[b].bytes, s.options.algorithm)
                                             : CollectiveCost{0.0, Algorithm::ring, 0.0, 0.0};
    cost_s_[b] = cost.time_s;
    intra_bytes_[b] = cost.intra_bytes_per_rank;
    inter_bytes_[b] = cost.inter_bytes_per_node;
    const double share = contention.host_share(cost, world.ranks_per_node, cost.time_s - cost.launch_s);
    interference_[b] = contention.compute_beside(share);
    comm_factor_[b] = contention.exchange_beside_compute(share);
    // 2 passes (read + write) over the bucket into the flat buffer, and 2 back out.
    const double copy_s = copies ? 2.0 * buckets_[b].bytes / s.compute.memory_bytes_per_s : 0.0;
    copy_in_s_[b] = copy_s;
    copy_out_s_[b] = copy_s;
  }
  if (distributed_) {
    double handed = 0.0;
    for (std::size_t b = 0; b < bucket_count_; ++b) handed += buckets_[b].bytes;
    overhead_s_ += exposed_host_s(net, static_cast<double>(model_.tensors.size()), handed);
  }
  uncontended_ = true;
  backward_work_s_ = accumulation_s_ + forward_s_;
  copies_in_s_ = 0.0;
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    uncontended_ = uncontended_ && interference_[b] == 1.0 && comm_factor_[b] == 1.0;
    backward_work_s_ += segment_s_[b];
    copies_in_s_ += copy_in_s_[b];
  }
  double after = 0.0;
  for (std::size_t b = bucket_count_; b-- > 0;) {
    remaining_s_[b] = after;
    after += segment_s_[b] + copy_in_s_[b];
  }
}

// One iteration from the start of forward, every rank with its own compute factor. A
// bucket is all-reduced when it is ready on every rank and the stream is free; compute
// beside a busy stream is slowed by the interference factor.
AllReducePredictor::Iteration AllReducePredictor::run_iteration(std::span<const double> factors,
                                                                std::span<double> compute_end_s) const {
  const std::size_t ranks = factors.size();
  // Gradient accumulation: the K - 1 micro-steps before the last only compute (no_sync).
  for (std::size_t r = 0; r < ranks; ++r) compute_end_s[r] = factors[r] * (accumulation_s_ + forward_s_);
  double comm_free = 0.0;
  double interference = 1.0;  // compute beside the bucket in flight
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    double ready = 0.0;
    double compute_until = 0.0;  // when the slowest rank's remaining backward would end
    if (interference == 1.0 && comm_factor_[b] == 1.0) {
      // Nothing slows compute or the all-reduce (every built-in profile): the same sums
      // as below (stretched_compute_s returns the work at a factor of 1, and
      // compute_until is read only by a stretched all-reduce) in a pass the compiler
      // vectorises, the latest ready time taken over four interleaved partial maxima (the
      // same value in any order) so that the ranks' updates do not wait on one another.
      const double segment = segment_s_[b];
      const double copy = copy_in_s_[b];
      double* __restrict clock = compute_end_s.data();
      const double* __restrict f = factors.data();
      double partial[4] = {0.0, 0.0, 0.0, 0.0};
      std::size_t r = 0;
      for (; r + 4 <= ranks; r += 4) {
        for (std::size_t k = 0; k < 4; ++k) {
          clock[r + k] += f[r + k] * segment + copy;
          partial[k] = std::max(partial[k], clock[r + k]);
        }
      }
      for (; r < ranks; ++r) {
        clock[r] += f[r] * segment + copy;
        partial[0] = std::max(partial[0], clock[r]);
      }
      ready = std::max(std::max(partial[0], partial[1]), std::max(partial[2], partial[3]));
    } else {
      for (std::size_t r = 0; r < ranks; ++r) {
        double& clock = compute_end_s[r];
        clock += stretched_compute_s(factors[r] * segment_s_[b], clock, comm_free, interference) + copy_in_s_[b];
        ready = std::max(ready, clock);
        compute_until = std::max(compute_until, clock + factors[r] * remaining_s_[b]);
      }
    }
    if (distributed_) {
      const double start = std::max(ready, comm_free);
      comm_free = start + stretched_compute_s(cost_s_[b] + copy_out_s_[b], start, compute_until, comm_factor_[b]);
      interference = interference_[b];
    }
  }
  Iteration it;
  for (std::size_t r = 0; r < ranks; ++r) it.compute_end_max_s = std::max(it.compute_end_max_s, compute_end_s[r]);
  it.comm_end_s = comm_free;
  it.end_s = std::max(it.compute_end_max_s, comm_free) + optimizer_s_ + overhead_s_;
  return it;
}

AllReducePredictor::Iteration AllReducePredictor::run_iteration_uncontended(std::span<const double> factors,
                                                                            std::span<double> compute_end_s) const {
  // The latest rank: run_iteration's clock of a rank is a chain of roundings, each
  // monotone in the rank's factor (a product by a non-negative time, then sums with the
  // same times), so the largest factor gives the latest clock at every bucket, rounding
  // included, and its clock alone is every bucket's ready time.
  double slowest = 0.0;
  for (const double f : factors) slowest = std::max(slowest, f);
  double clock = slowest * (accumulation_s_ + forward_s_);
  double comm_free = 0.0;
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    clock += slowest * segment_s_[b] + copy_in_s_[b];
    if (distributed_) comm_free = std::max(clock, comm_free) + (cost_s_[b] + copy_out_s_[b]);
  }
  // Every rank's own end of backward, for its idle time: its factor times the backward
  // work plus the copies, in one product (the same value up to rounding, capped at the
  // latest clock so that no idle time is negative).
  for (std::size_t r = 0; r < factors.size(); ++r) {
    compute_end_s[r] = std::min(clock, factors[r] * backward_work_s_ + copies_in_s_);
  }
  Iteration it;
  it.compute_end_max_s = clock;
  it.comm_end_s = comm_free;
  it.end_s = std::max(clock, comm_free) + optimizer_s_ + overhead_s_;
  return it;
}

IterationResult AllReducePredictor::predict(const AllReduceScenario& s) {
  prepare(s);
  const double one = 1.0;
  double compute_end = 0.0;
  const Iteration it = run_iteration({&one, 1}, {&compute_end, 1});

  const NetworkParams& net = s.network;
  IterationResult r;
  r.accumulation_s = accumulation_s_;
  r.forward_s = forward_s_;
  r.backward_s = it.compute_end_max_s - accumulation_s_ - forward_s_;
  r.optimizer_s = optimizer_s_;
  r.overhead_s = overhead_s_;
  r.iteration_s = it.end_s;
  r.exposed_comm_s = std::max(0.0, it.comm_end_s - it.compute_end_max_s);
  for (std::size_t b = 0; b < bucket_count_ && distributed_; ++b) {
    r.comm_busy_s += cost_s_[b] + copy_out_s_[b];
    r.intra_bytes_per_gpu += intra_bytes_[b];
    r.inter_bytes_per_node += inter_bytes_[b];
    if (inter_bytes_[b] > 0.0) r.nic_busy_s += cost_s_[b] - launch_s_;
  }
  r.inter_bytes_per_gpu = r.inter_bytes_per_node / net.gpus_per_node;
  const double nic_capacity = net.nics_per_node * net.nic_line_bytes_per_s * r.iteration_s;
  r.nic_utilization = net.nodes > 1 ? r.inter_bytes_per_node / nic_capacity : 0.0;
  r.single_gpu_iteration_s = single_gpu_s_;
  r.throughput_samples_per_s = net.ranks() * s.request.samples_per_gpu_per_step() / r.iteration_s;
  r.scaling_factor = r.single_gpu_iteration_s / r.iteration_s;
  r.buckets = static_cast<int>(bucket_count_);
  return r;
}

}  // namespace dtperf

namespace dtperf {

namespace {

/// A running mean that returns the value itself, exactly, while every sample is equal.
struct ExactMean {
  double first = 0.0;
  double sum = 0.0;
  long count = 0;
  bool constant = true;
  void add(double x) {
    if (count == 0) first = x;
    constant = constant && x == first;
    sum += x;
    ++count;
  }
  double mean() const { return constant ? first : sum / static_cast<double>(count); }
};

}  // namespace

SimulationWork AllReducePredictor::variable_work(const AllReduceScenario& s, const Variability& v) const {
  SimulationWork w;
  w.ranks = s.network.ranks();
  w.buckets = static_cast<double>(bucket_count_);
  w.iterations = v.iterations;
  w.measured_iterations = v.iterations;
  return w;
}

const VariabilityOutcome& AllReducePredictor::predict(const AllReduceScenario& s, const Variability& v) {
  const IterationResult deterministic = predict(s);  // prepares the buckets and costs
  const auto ranks = static_cast<std::size_t>(s.network.ranks());
  if (factors_.size() != ranks) {
    factors_.resize(ranks);
    compute_end_s_.resize(ranks);
    idle_sum_s_.resize(ranks);
  }
  std::fill(idle_sum_s_.begin(), idle_sum_s_.end(), 0.0);
  durations_.reset(deterministic.iteration_s);
  NoiseStream noise(v, s.network.ranks(), s.network.gpus_per_node);

  ExactMean iteration, accumulation, forward, backward;
  // Iterations are independent (everyone leaves each one together), so the warm-up only
  // keeps the draws aligned with the gossip simulations of the same seed.
  for (int k = 0; k < v.warmup_iterations; ++k) noise.next(factors_);
  for (int k = 0; k < v.iterations; ++k) {
    noise.next(factors_);
    const Iteration it = uncontended_ ? run_iteration_uncontended(factors_, compute_end_s_)
                                      : run_iteration(factors_, compute_end_s_);
    iteration.add(it.end_s);
    durations_.add(it.end_s);
    for (std::size_t r = 0; r < ranks; ++r) {
      const double own_accumulation = factors_[r] * accumulation_s_;
      const double own_forward = factors_[r] * forward_s_;
      accumulation.add(own_accumulation);
      forward.add(own_forward);
      backward.add(compute_end_s_[r] - own_accumulation - own_forward);
      idle_sum_s_[r] += it.end_s - compute_end_s_[r] - optimizer_s_ - overhead_s_;
    }
  }

  VariabilityOutcome& out = variable_;
  out.iteration = deterministic;
  IterationResult& r = out.iteration;
  r.iteration_s = iteration.mean();
  r.accumulation_s = accumulation.mean();
  r.forward_s = forward.mean();
  r.backward_s = backward.mean();
  r.exposed_comm_s = r.iteration_s - r.accumulation_s - r.forward_s - r.backward_s - r.optimizer_s - r.overhead_s;
  r.nic_utilization = deterministic.nic_utilization * deterministic.iteration_s / r.iteration_s;
  r.throughput_samples_per_s = deterministic.throughput_samples_per_s * deterministic.iteration_s / r.iteration_s;
  r.scaling_factor = r.single_gpu_iteration_s / r.iteration_s;
  out.iteration_p50_s = iteration.constant ? iteration.first : durations_.quantile(0.50);
  out.iteration_p99_s = iteration.constant ? iteration.first : durations_.quantile(0.99);
  const double per_iteration = 1.0 / v.iterations;
  out.idle_min_s = idle_sum_s_[0] * per_iteration;
  out.idle_max_s = out.idle_min_s;
  out.straggler_rank = 0;
  double idle_total = 0.0;
  for (std::size_t i = 0; i < ranks; ++i) {
    idle_sum_s_[i] *= per_iteration;  // now the mean idle per iteration
    idle_total += idle_sum_s_[i];
    if (idle_sum_s_[i] < out.idle_min_s) {
      out.idle_min_s = idle_sum_s_[i];
      out.straggler_rank = static_cast<int>(i);
    }
    out.idle_max_s = std::max(out.idle_max_s, idle_sum_s_[i]);
  }
  out.idle_mean_s = idle_total / static_cast<double>(ranks);
  out.iterations = v.iterations;
  out.idle_per_rank_s = idle_sum_s_;
  return out;
}

}  // namespace dtperf
