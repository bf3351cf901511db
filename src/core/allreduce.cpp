#include "dtperf/allreduce.hpp"

#include <algorithm>

namespace dtperf {

const char* bucketing_name(Bucketing bucketing) {
  return bucketing == Bucketing::ddp ? "ddp" : "horovod";
}

std::optional<Bucketing> parse_bucketing(const std::string& name) {
  if (name == "ddp") return Bucketing::ddp;
  if (name == "horovod") return Bucketing::horovod;
  return std::nullopt;
}

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
    : model_(model), backward_s_(model.tensors.size()), buckets_(model.tensors.size()) {}

IterationResult AllReducePredictor::predict(const AllReduceScenario& s) {
  ComputeTimes times;
  times.backward_s = backward_s_;
  compute_times(model_, s.compute, s.request, times);
  bucket_count_ = make_buckets(model_, backward_s_, s.options, buckets_);

  const NetworkParams& net = s.network;
  const GroupShape world{net.nodes, net.gpus_per_node, net.gpus_per_node};
  const bool distributed = net.ranks() > 1;
  const double factor = distributed ? s.compute.interference_factor : 1.0;

  IterationResult r;
  double clock_s = 0.0;      // backward progress, from the start of backward
  double comm_free_s = 0.0;  // when the FIFO communication stream is next idle
  std::size_t next_bucket = 0;
  for (std::size_t i = 0; i < backward_s_.size(); ++i) {
    clock_s += stretched_compute_s(backward_s_[i], clock_s, comm_free_s, factor);
    if (next_bucket < bucket_count_ && buckets_[next_bucket].last_tensor == i) {
      if (distributed) {
        const CollectiveCost cost =
            allreduce_cost(net, world, buckets_[next_bucket].bytes, s.options.algorithm);
        comm_free_s = std::max(clock_s, comm_free_s) + cost.time_s;
        r.comm_busy_s += cost.time_s;
        r.intra_bytes_per_gpu += cost.intra_bytes_per_rank;
        r.inter_bytes_per_node += cost.inter_bytes_per_node;
        if (cost.inter_bytes_per_node > 0.0) r.nic_busy_s += cost.time_s;
      }
      ++next_bucket;
    }
  }

  r.forward_s = times.forward_s;
  r.backward_s = clock_s;
  r.optimizer_s = times.optimizer_s;
  r.exposed_comm_s = std::max(0.0, comm_free_s - clock_s);
  r.iteration_s = r.forward_s + r.backward_s + r.exposed_comm_s + r.optimizer_s;
  r.inter_bytes_per_gpu = r.inter_bytes_per_node / net.gpus_per_node;
  const double nic_capacity = net.nics_per_node * net.nic_line_bytes_per_s * r.iteration_s;
  r.nic_utilization = net.nodes > 1 ? r.inter_bytes_per_node / nic_capacity : 0.0;
  r.single_gpu_iteration_s = times.iteration_s();
  r.throughput_samples_per_s = net.ranks() * s.request.batch_per_gpu / r.iteration_s;
  r.scaling_factor = r.single_gpu_iteration_s / r.iteration_s;
  r.buckets = static_cast<int>(bucket_count_);
  return r;
}

}  // namespace dtperf
