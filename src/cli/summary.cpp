#include "summary.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "dtperf/error.hpp"
#include "dtperf/io/report.hpp"

namespace dtperf::cli {

std::string run_header(const char* command, const Loaded& loaded, const ComputeRequest& request,
                       const ModelOptions& options, const std::optional<AnchorResult>& anchored) {
  const ComputeSource source = resolve_compute_source(loaded.model, request);
  std::string text = fmt::format("# dtperf {}: {}\n# batch {:g} {}s per GPU", command,
                                 io::run_summary(loaded.profile, loaded.model, loaded.dtype), request.batch_per_gpu,
                                 loaded.model.sample_unit);
  if (request.accumulation_steps > 1) {
    text += fmt::format(" per micro-step, {} micro-steps per optimizer step ({:g} per GPU per step)",
                        request.accumulation_steps, request.samples_per_gpu_per_step());
  }
  text += fmt::format("; compute: {}", name_of(source));
  if (options.workload.compression_ratio != 1.0) {
    text += fmt::format("; gradients compressed {:g}x", options.workload.compression_ratio);
  }
  if (const auto& fit = loaded.profile.runs_fit; fit && fit->model == loaded.model.name) {
    text += fmt::format("; compute x{:.4g} forward, x{:.4g} backward, fitted to {} measured runs", fit->forward_scale,
                        fit->backward_scale, fit->runs);
  }
  if (anchored) {
    text += fmt::format("; compute scaled x{:.4g} to reproduce {:g} ms measured with {} on {} GPUs",
                        anchored->compute_scale, anchored->measured_iteration_ms, anchored->scheme, anchored->gpus);
  }
  // The links as modelled, naming what the command line changed from the profile.
  const auto& inter = loaded.profile.inter;
  text += fmt::format("\n# between nodes: {} x {:g} Gbit/s NIC{} per node at {:g} % of line rate, {:g} us per hop",
                      inter.nics_per_node, inter.nic_gbps, inter.nics_per_node == 1 ? "" : "s",
                      100.0 * inter.transport_efficiency, inter.latency_s * 1e6);
  if (inter.host_gbps > 0.0) text += fmt::format(", host ceiling {:g} Gbit/s", inter.host_gbps);
  if (const auto& t = loaded.profile.transport; t.lockstep_ring) {
    text += fmt::format(", {}lockstep ring (every step at the slowest hop)", t.library.empty() ? "" : t.library + ": ");
  }
  if (const auto& t = loaded.profile.transport; t.collectives_in_flight > 0) {
    text += fmt::format(", {} collective{} in flight per group, sharing the link", t.collectives_in_flight,
                        t.collectives_in_flight == 1 ? "" : "s");
  }
  const ClusterOverrides& o = options.cluster;
  std::vector<std::string> changed;
  if (o.nic_gbps) changed.emplace_back("NIC rate");
  if (o.nics_per_node) changed.emplace_back("NIC count");
  if (o.transport_efficiency) changed.emplace_back("efficiency");
  if (o.inter_latency_s) changed.emplace_back("latency");
  if (o.host_gbps) changed.emplace_back("host ceiling");
  if (o.intra_bandwidth_bytes_per_s || o.intra_latency_s || o.intra_efficiency) changed.emplace_back("intra-node link");
  if (!changed.empty()) text += " (what-if: " + join_names(changed) + ")";
  return text + "\n";
}

std::string gossip_header(const GossipOptions& g) {
  if (!g.node_level) return "";
  return "# node-level gossip: the GPUs of a node all-reduce their gradients and keep one replica; the topologies, "
         "SGP and D-PSGD run over nodes\n";
}

std::string variability_header(const Variability& v) {
  if (!v.any()) return "";
  std::vector<std::string> parts;
  if (v.law == NoiseLaw::empirical) {
    parts.push_back(fmt::format("factors resampled from {} measured iteration times", v.empirical_factors.size()));
  } else if (v.random()) {
    parts.push_back(fmt::format("{} law, CV {:g} %", name_of(v.law), 100.0 * v.cv));
  }
  for (const auto& [rank, factor] : v.slow_ranks) parts.push_back(fmt::format("rank {} x{:g}", rank, factor));
  for (const auto& [node, factor] : v.slow_nodes) parts.push_back(fmt::format("node {} x{:g}", node, factor));
  parts.push_back(fmt::format("{} iterations after {} of warm-up, seed {}", v.iterations, v.warmup_iterations, v.seed));
  return "# variable compute: " + join_names(parts) + "\n";
}

io::Json variability_settings_json(const Variability& v) {
  if (!v.any()) return nullptr;
  io::Json json = {{"law", name_of(v.law)},
                   {"iterations", v.iterations},
                   {"warmup_iterations", v.warmup_iterations},
                   {"seed", v.seed}};
  if (v.law == NoiseLaw::empirical) {
    json["measured_samples"] = v.empirical_factors.size();
  } else if (v.random()) {
    json["cv"] = v.cv;
  }
  io::Json ranks = io::Json::array();
  for (const auto& [rank, factor] : v.slow_ranks) ranks.push_back({{"rank", rank}, {"factor", factor}});
  io::Json nodes = io::Json::array();
  for (const auto& [node, factor] : v.slow_nodes) nodes.push_back({{"node", node}, {"factor", factor}});
  json["slow_ranks"] = ranks;
  json["slow_nodes"] = nodes;
  return json;
}

io::Json run_json(const char* command, const Loaded& loaded, const ComputeRequest& request,
                  const ModelOptions& options, const std::optional<AnchorResult>& anchored,
                  const Variability& variability) {
  io::Json json = {
      {"schema", io::kReportSchema},
      {"command", command},
      {"cluster", io::cluster_json(loaded.profile, loaded.dtype)},
      {"model", io::model_json(loaded.model, request, resolve_compute_source(loaded.model, request))},
      {"compression_ratio", options.workload.compression_ratio},
  };
  if (variability.any()) json["variable_compute"] = variability_settings_json(variability);
  if (anchored) {
    json["anchor"] = {{"compute_scale", anchored->compute_scale},
                      {"measured_iteration_ms", anchored->measured_iteration_ms},
                      {"measured_scheme", anchored->scheme},
                      {"measured_gpus", anchored->gpus}};
  }
  return json;
}

}  // namespace dtperf::cli
