// The start of every predicting report: what was modelled (cluster, model, compute source,
// anchor, what-ifs, variable compute), as header lines and as JSON.
#include <cmath>

#include <fmt/format.h>

#include "dtperf/analysis/fit_runs.hpp"

#include "dtperf/io/render.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

namespace {

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

Json model_json(const RunContext& run) {
  Json json = {
      {"model", run.model.name},
      {"params", run.model.params},
      {"gradient_bytes", run.model.gradient_bytes},
      {"tensors", run.model.tensors},
      {"sample_unit", run.model.sample_unit},
      {"batch_per_gpu", run.request.batch_per_gpu},
      {"grad_accum_steps", run.request.accumulation_steps},
      {"optimizer", name_of(run.request.optimizer)},
      {"compute_source", name_of(run.compute_source)},
  };
  if (!run.measured_device.empty()) json["measured_device"] = run.measured_device;
  return json;
}

// The variable-compute settings (law, CV, slow ranks and nodes, iterations, seed): a run
// with them is reproduced from the report alone.
Json variability_settings_json(const Variability& v) {
  Json json = {{"law", name_of(v.law)},
               {"iterations", v.iterations},
               {"warmup_iterations", v.warmup_iterations},
               {"seed", v.seed}};
  if (v.law == NoiseLaw::empirical) {
    json["measured_samples"] = v.empirical_factors.size();
  } else if (v.random()) {
    json["cv"] = v.cv;
  }
  Json ranks = Json::array();
  for (const auto& [rank, factor] : v.slow_ranks) ranks.push_back({{"rank", rank}, {"factor", factor}});
  Json nodes = Json::array();
  for (const auto& [node, factor] : v.slow_nodes) nodes.push_back({{"node", node}, {"factor", factor}});
  json["slow_ranks"] = ranks;
  json["slow_nodes"] = nodes;
  return json;
}

// "# variable compute: ..." when compute varies, else "".
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

std::string gossip_header(const GossipOptions& g) {
  if (!g.node_level) return "";
  return "# node-level gossip: the GPUs of a node all-reduce their gradients and keep one replica; the topologies, "
         "SGP and D-PSGD run over nodes\n";
}

// The first line and the workload: "# dtperf predict: resnet50 (...) on 8 x ...\n# batch ...".
std::string what_line(const RunContext& run) {
  const ClusterProfile& c = run.cluster;
  const ModelSummary& m = run.model;
  std::string text = fmt::format(
      "# dtperf {}: {} ({:.2f} M parameters, {:.1f} MB gradients) on {} x {} = {} GPUs ({}, {})\n# batch {:g} {}{} per GPU",
      run.command, m.name, static_cast<double>(m.params) / 1e6, m.gradient_bytes / units::MB, c.nodes, c.name,
      c.ranks(), c.gpu.model, name_of(run.dtype), run.request.batch_per_gpu, m.sample_unit,
      run.request.batch_per_gpu == 1.0 ? "" : "s");
  if (run.request.accumulation_steps > 1) {
    text += fmt::format(" per micro-step, {} micro-steps per optimizer step ({:g} per GPU per step)",
                        run.request.accumulation_steps, run.request.samples_per_gpu_per_step());
  }
  text += fmt::format("; compute: {}", name_of(run.compute_source));
  if (!run.measured_device.empty()) text += fmt::format(" (measured on {})", run.measured_device);
  if (run.compression_ratio != 1.0) text += fmt::format("; gradients compressed {:g}x", run.compression_ratio);
  if (const auto& fit = c.runs_fit; fit && run.runs_fit_applied) {
    text += fmt::format("; compute x{:.4g} forward, x{:.4g} backward, fitted to {} measured runs", fit->forward_scale,
                        fit->backward_scale, fit->runs);
  }
  if (const auto& a = run.anchor) {
    text += fmt::format("; compute scaled x{:.4g} to reproduce {:g} ms measured with {} on {} GPU{}", a->compute_scale,
                        a->measured_iteration_ms, a->scheme, a->gpus, a->gpus == 1 ? "" : "s");
  }
  // Nothing measured behind the compute: say so, for it can be far off (docs/VALIDATION.md,
  // compute defaults on one GPU).
  const bool measured_compute = (c.runs_fit && run.runs_fit_applied) || run.anchor || !c.calibration.gemm.empty();
  if (run.compute_source == ComputeSource::flops && !measured_compute) text += " (datasheet, not fitted)";
  return text;
}

// The links as modelled, naming what the options changed from the profile.
std::string links_line(const RunContext& run) {
  const auto& inter = run.cluster.inter;
  std::string text = fmt::format("# between nodes: {} x {:g} Gbit/s NIC{} per node at {:g} % of line rate, {:g} us per hop",
                                  inter.nics_per_node, inter.nic_gbps, inter.nics_per_node == 1 ? "" : "s",
                                  100.0 * inter.transport_efficiency, inter.latency_s * 1e6);
  if (inter.host_gbps > 0.0) text += fmt::format(", host ceiling {:g} Gbit/s", inter.host_gbps);
  if (const auto& t = run.cluster.transport; t.lockstep_ring) {
    text += fmt::format(", {}lockstep ring (every step at the slowest hop)", t.library.empty() ? "" : t.library + ": ");
  }
  if (const auto& t = run.cluster.transport; t.collectives_in_flight > 0) {
    text += fmt::format(", {} collective{} in flight per group, sharing the link", t.collectives_in_flight,
                        t.collectives_in_flight == 1 ? "" : "s");
  }
  if (!run.what_if.empty()) text += " (what-if: " + join_names(run.what_if) + ")";
  return text;
}

}  // namespace

std::string run_header(const RunContext& run) {
  return what_line(run) + "\n" + links_line(run) + "\n" + variability_header(run.variability) +
         gossip_header(run.gossip);
}

Json run_json(const RunContext& run) {
  Json json = {
      {"schema", kReportSchema},
      {"command", run.command},
      {"cluster", cluster_json(run.cluster, run.dtype)},
      {"model", model_json(run)},
      {"compression", run.compression_ratio},
  };
  if (run.variability.any()) json["variable_compute"] = variability_settings_json(run.variability);
  if (const auto& a = run.anchor) {
    json["anchor"] = {{"compute_scale", a->compute_scale},
                      {"measured_iteration_ms", a->measured_iteration_ms},
                      {"measured_scheme", a->scheme},
                      {"measured_gpus", a->gpus}};
  }
  if (run.band_source != BandSource::none) {
    json["band_source"] = run.band_source == BandSource::fitted ? "fitted" : "datasheet";
  }
  if (!run.warnings.empty()) json["warnings"] = run.warnings;  // also on stderr
  return json;
}

std::string band_origin(const RunContext& run) {
  switch (run.band_source) {
    case BandSource::none: break;
    case BandSource::fitted: return "the fitted profile's uncertainty and the model's residual";
    case BandSource::datasheet: {
      // As a factor on the datasheet's value: where the next cluster's lies on average,
      // and one predictive sigma around it (fit_runs.hpp, ClusterSpread).
      const auto spread = [](const ClusterSpread& c) {
        return fmt::format("x{:.2f} +/- x{:.2f}", std::exp(c.mean_ln), std::exp(c.predictive_sd()));
      };
      const std::string links = fmt::format("inter-node efficiency {}", spread(kDatasheetInterEfficiency));
      const std::string values = run.compute_source == ComputeSource::flops
                                     ? fmt::format("compute time from FLOPs {}, {}", spread(kDatasheetCompute), links)
                                     : links;
      return fmt::format("the datasheet's uncertainty ({} at one sigma: where fits put the next cluster's values, "
                         "from those they find on measured clusters) and the model's residual; dtperf fit --runs "
                         "narrows it",
                         values);
    }
  }
  return "";
}

}  // namespace dtperf::io
