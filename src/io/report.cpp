#include "dtperf/io/report.hpp"

#include <fmt/format.h>

#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

Json cluster_json(const ClusterProfile& c, DType dtype) {
  return {
      {"profile", c.name},
      {"provenance", c.provenance.source},
      {"nodes", c.nodes},
      {"gpus_per_node", c.gpus_per_node},
      {"gpus", c.ranks()},
      {"gpu", c.gpu.model},
      {"dtype", name_of(dtype)},
      {"intra_bandwidth_GB_per_s", c.intra.bandwidth_bytes_per_s * c.intra.efficiency / units::GB},
      {"intra_latency_us", c.intra.latency_s / units::us},
      {"nics_per_node", c.inter.nics_per_node},
      {"nic_gbps", c.inter.nic_gbps},
      {"transport_efficiency", c.inter.transport_efficiency},
      {"host_gbps", c.inter.host_gbps},
      {"inter_latency_us", c.inter.latency_s / units::us},
      {"interference_factor", c.compute.interference_factor},
      {"comm_interference_factor", c.compute.comm_interference_factor},
      {"iteration_overhead_ms", c.compute.iteration_overhead_s / units::ms},
      {"cross_node_overhead_ms", c.compute.cross_node_overhead_s / units::ms},
  };
}

Json model_json(const ModelSpec& m, const ComputeRequest& request, ComputeSource source) {
  return {
      {"model", m.name},
      {"params", m.total_params()},
      {"gradient_bytes", m.total_bytes()},
      {"tensors", m.tensors.size()},
      {"sample_unit", m.sample_unit},
      {"batch_per_gpu", request.batch_per_gpu},
      {"accumulation_steps", request.accumulation_steps},
      {"optimizer", name_of(request.optimizer)},
      {"compute_source", name_of(source)},
  };
}

Json allreduce_options_json(const AllReduceOptions& o) {
  Json j = {{"algorithm", name_of(o.algorithm)}, {"bucketing", name_of(o.bucketing)}};
  if (o.bucketing == Bucketing::ddp) {
    j["bucket_cap_MiB"] = o.bucket_cap_bytes / units::MiB;
    j["first_bucket_cap_MiB"] = o.first_bucket_cap_bytes / units::MiB;
  } else {
    j["fusion_cycle_ms"] = o.fusion_cycle_s / units::ms;
    j["fusion_buffer_MiB"] = o.fusion_buffer_bytes / units::MiB;
  }
  return j;
}

Json iteration_json(const IterationResult& r) {
  return {
      {"iteration_ms", r.iteration_s / units::ms},
      {"accumulation_ms", r.accumulation_s / units::ms},
      {"forward_ms", r.forward_s / units::ms},
      {"backward_ms", r.backward_s / units::ms},
      {"exposed_comm_ms", r.exposed_comm_s / units::ms},
      {"optimizer_ms", r.optimizer_s / units::ms},
      {"overhead_ms", r.overhead_s / units::ms},
      {"comm_busy_ms", r.comm_busy_s / units::ms},
      {"nic_busy_ms", r.nic_busy_s / units::ms},
      {"intra_bytes_per_gpu", r.intra_bytes_per_gpu},
      {"inter_bytes_per_gpu", r.inter_bytes_per_gpu},
      {"inter_bytes_per_node", r.inter_bytes_per_node},
      {"nic_utilization", r.nic_utilization},
      {"throughput_samples_per_s", r.throughput_samples_per_s},
      {"single_gpu_iteration_ms", r.single_gpu_iteration_s / units::ms},
      {"scaling_factor", r.scaling_factor},
      {"buckets", r.buckets},
  };
}

std::string run_summary(const ClusterProfile& c, const ModelSpec& m, DType dtype) {
  return fmt::format("{} ({:.2f} M parameters, {:.1f} MB gradients) on {} x {} = {} GPUs ({}, {})", m.name,
                     static_cast<double>(m.total_params()) / 1e6, m.total_bytes() / units::MB, c.nodes, c.name,
                     c.ranks(), c.gpu.model, name_of(dtype));
}

std::string iteration_tables(const IterationResult& r, const std::string& sample_unit) {
  const auto ms = [](double s) { return fixed(s / units::ms, 2); };
  // Gradient accumulation's micro-steps get a column of their own when there are any.
  const bool accumulates = r.accumulation_s > 0.0;
  std::vector<Table::Column> columns = {{"iteration", "ms"}};
  if (accumulates) columns.push_back({"accumulation", "ms"});
  for (const char* name : {"forward", "backward", "exposed-comm", "optimizer", "overhead", "comm-busy", "NIC-busy"}) {
    columns.push_back({name, "ms"});
  }
  Table time(columns);
  std::vector<std::string> row = {ms(r.iteration_s)};
  if (accumulates) row.push_back(ms(r.accumulation_s));
  for (double s : {r.forward_s, r.backward_s, r.exposed_comm_s, r.optimizer_s, r.overhead_s, r.comm_busy_s, r.nic_busy_s}) {
    row.push_back(ms(s));
  }
  time.add_row(row);
  Table rates({{"intra/GPU", "MB"},
               {"inter/node", "MB"},
               {"NIC-util", "%"},
               {"throughput", sample_unit + "s/s"},
               {"scaling", "%"},
               {"1-GPU-iter", "ms"},
               {"buckets", ""}});
  rates.add_row({fixed(r.intra_bytes_per_gpu / units::MB, 1), fixed(r.inter_bytes_per_node / units::MB, 1),
                 percent(r.nic_utilization), fixed(r.throughput_samples_per_s, 0), percent(r.scaling_factor),
                 ms(r.single_gpu_iteration_s), std::to_string(r.buckets)});
  return time.render() + "\n" + rates.render();
}

}  // namespace dtperf::io
