// The evaluator of the commands that predict, and the context their reports start with.
#include <stdexcept>

#include <fmt/format.h>

#include "dtperf/analysis/report.hpp"
#include "dtperf/error.hpp"
#include "dtperf/units.hpp"
#include "report_checked.hpp"

namespace dtperf {

std::vector<std::string> what_if_names(const ClusterOverrides& o) {
  std::vector<std::string> changed;
  if (o.nic_gbps) changed.emplace_back("NIC rate");
  if (o.nics_per_node) changed.emplace_back("NIC count");
  if (o.transport_efficiency) changed.emplace_back("efficiency");
  if (o.inter_latency_s) changed.emplace_back("latency");
  if (o.host_gbps) changed.emplace_back("host ceiling");
  if (o.intra_bandwidth_bytes_per_s || o.intra_latency_s || o.intra_efficiency) changed.emplace_back("intra-node link");
  return changed;
}

namespace {

const std::string& model_source(const Inputs& in) { return in.model_source.empty() ? in.model.name : in.model_source; }

Evaluator make_evaluator(const Inputs& in, const AnalysisRequest& request) {
  Setup setup;
  setup.cluster = in.profile;
  setup.model = &in.model;
  setup.dtype = in.dtype;
  setup.workload = request.workload;
  setup.allreduce = request.allreduce;
  setup.gossip = request.gossip;
  setup.local_sgd = request.local_sgd;
  setup.reduction = in.reduction;
  return Evaluator(std::move(setup));
}

std::optional<AnchorResult> fit_anchor(Evaluator& evaluator, const Inputs& in, const AnchorRequest& anchor) {
  const auto scheme = parse_scheme(anchor.scheme);
  if (!scheme) {
    const std::vector<std::string> names = scheme_names();
    throw InputError::in_input("measured-scheme", fmt::format("unknown scheme '{}'{}; expected one of: {}", anchor.scheme,
                                                              did_you_mean(anchor.scheme, names), join_names(names)));
  }
  const int per_node = in.profile.gpus_per_node;
  const int gpus = anchor.gpus > 0 ? anchor.gpus : in.profile.ranks();
  // Whole nodes, or part of one node (a single-GPU measurement on an 8-GPU node).
  const bool part_of_node = gpus < per_node && per_node % gpus == 0;
  if (gpus % per_node != 0 && !part_of_node) {
    throw InputError::in_input("measured-gpus", fmt::format("{} GPUs neither fill whole nodes of {} GPUs nor divide one",
                                                            gpus, per_node));
  }
  const double scale = checked_model(model_source(in), [&] {
    return part_of_node ? evaluator.fit_compute_scale(*scheme, 1, anchor.measured_iteration_ms * units::ms, gpus)
                        : evaluator.fit_compute_scale(*scheme, gpus / per_node, anchor.measured_iteration_ms * units::ms);
  });
  evaluator.set_compute_scale(scale);
  return AnchorResult{scale, scheme->name(), gpus, anchor.measured_iteration_ms};
}

}  // namespace

Prepared prepare(const std::string& command, const Inputs& in, const AnalysisRequest& request) {
  Prepared p{make_evaluator(in, request), {}, model_source(in), in.overrides};
  RunContext& run = p.run;
  run.command = command;
  run.cluster = in.profile;
  run.dtype = in.dtype;
  run.model = {in.model.name, in.model.total_params(), in.model.total_bytes(), in.model.tensors.size(),
               in.model.sample_unit};
  run.request = compute_request(in.model, request.workload, in.profile.ranks());
  run.compute_source = resolve_compute_source(in.model, run.request);
  run.compression_ratio = request.workload.compression_ratio;
  run.what_if = what_if_names(in.overrides);
  run.gossip = request.gossip;
  // The model file's own times, not rescaled to a single-GPU iteration the user gave.
  const bool measured_source = !run.request.single_gpu_iteration_s &&
                               (run.compute_source == ComputeSource::measured_layers ||
                                run.compute_source == ComputeSource::measured_iteration);
  if (measured_source) run.measured_device = in.model.measured_device;
  if (measured_source && run.measured_device.starts_with("cpu") && !in.profile.compute.runs_on_host) {
    run.warnings.push_back(fmt::format(
        "model '{}' was measured on the CPU (its file's measured.device), but the profile's GPUs are {}: these are "
        "CPU times. Measure on the GPU (python3 -m dtperf_collect --device cuda), give --single-gpu-iteration-ms "
        "from a GPU, or use --compute-source flops",
        in.model.name, in.profile.gpu.model));
  }
  if (run.compute_source == ComputeSource::flops && !run.request.single_gpu_iteration_s &&
      in.model.forward_flops_per_sample() <= 0.0) {
    run.warnings.push_back(fmt::format(
        "model '{}' gives no FLOPs (no layer has forward_gflop_per_sample): its compute from FLOPs is only "
        "its memory traffic. Collect it again (python3 -m dtperf_collect records FLOPs per layer), use its "
        "measured times, or give --single-gpu-iteration-ms",
        in.model.name));
  }
  if (const auto& fit = in.profile.runs_fit) {
    if (fit->applies_to(in.model.name)) {
      p.evaluator.set_compute_scales(fit->forward_scale, fit->backward_scale);
      run.runs_fit_applied = true;
    } else {
      run.warnings.push_back(fmt::format(
          "profile '{}' was fitted to runs of '{}'; its compute scales (forward x{:.4g}, backward x{:.4g}) are not "
          "applied to '{}'",
          in.profile.name, fit->models.front(), fit->forward_scale, fit->backward_scale, in.model.name));
    }
  }
  if (request.anchor) run.anchor = fit_anchor(p.evaluator, in, *request.anchor);
  run.band_source = band_source(in.profile, in.model.name, run.anchor.has_value());
  p.evaluator.set_variability(request.variability);
  run.variability = request.variability;
  return p;
}

}  // namespace dtperf
