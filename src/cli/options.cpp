#include "options.hpp"
#include "checks.hpp"

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/units.hpp"

namespace dtperf::cli {

// Plain values bound to CLI11; `resolve()` keeps only those the user gave.
struct ModelOptions::Raw {
  int nodes = 0, gpus_per_node = 0, nics_per_node = 0;
  double nic_gbps = 0, inter_latency_us = 0, transport_efficiency = 0, host_gbps = 0;
  double intra_gb_per_s = 0, intra_latency_us = 0, intra_efficiency = 0;
  std::string dtype, grad_dtype;
  double interference = 0, comm_interference = 0, overhead_ms = 0, cross_node_overhead_ms = 0;
  double batch_per_gpu = 0, global_batch = 0;
  std::string optimizer, compute_source = name_of(WorkloadOptions{}.compute_source);
  double single_gpu_iteration_ms = 0, measured_batch_per_gpu = 0;
  double compression = 1.0;
  bool recompute = false;
  int accumulation_steps = 1;
  std::vector<CLI::Option*> given;
  CLI::Option *o_nodes{}, *o_gpn{}, *o_nics{}, *o_nic{}, *o_inter_lat{}, *o_eff{}, *o_host{}, *o_intra{},
      *o_intra_lat{}, *o_intra_eff{}, *o_dtype{}, *o_interf{}, *o_comm_interf{}, *o_overhead{}, *o_cross_overhead{}, *o_batch{}, *o_global{}, *o_opt{}, *o_iter{},
      *o_mbatch{};
};

void ModelOptions::add_to(CLI::App& app) {
  raw_ = std::make_shared<Raw>();
  Raw& r = *raw_;
  app.add_option("-p,--profile", profile, "Cluster profile: a built-in name (dtperf profiles) or a JSON file")
      ->capture_default_str();
  app.add_option("-m,--model", model,
                 "Model: a built-in name (dtperf models), a model by size (gpt:layers=24,d=2048,seq=2048; llama:...), a .json layer file or a .log per-layer timing log")
      ->capture_default_str();

  const char* cluster_group = "Cluster what-ifs (default: the profile's values)";
  r.o_nodes = app.add_option("--nodes", r.nodes, "Number of nodes")->type_name("N")->transform(count_up_to(kMaxNodes))->group(cluster_group);
  r.o_gpn = app.add_option("--gpus-per-node", r.gpus_per_node, "GPUs per node")->type_name("G")->transform(count_up_to(kMaxGpusPerNode))->group(cluster_group);
  r.o_nics = app.add_option("--nics-per-node", r.nics_per_node, "NICs per node")->type_name("K")->transform(count_up_to(kMaxGpusPerNode))->group(cluster_group);
  r.o_nic = app.add_option("--nic-gbps", r.nic_gbps, "Line rate of one NIC")->type_name("GBIT/S")->check(number_in(limits::kNicGbps))->group(cluster_group);
  r.o_inter_lat = app.add_option("--inter-latency-us", r.inter_latency_us, "Latency per inter-node hop")->type_name("US")->check(number_in(limits::kLatencyUs))->group(cluster_group);
  r.o_eff = app.add_option("--transport-efficiency", r.transport_efficiency, "Achieved / line rate between nodes")->type_name("FRACTION")->check(number_in(limits::kEfficiency))->group(cluster_group);
  r.o_host = app.add_option("--host-gbps", r.host_gbps, "Ceiling of a host-driven (TCP) transport per node; 0: none")->type_name("GBIT/S")->check(zero_or(limits::kNicGbps))->group(cluster_group);
  r.o_intra = app.add_option("--intra-gb-per-s", r.intra_gb_per_s, "Intra-node link rate per GPU and direction")->type_name("GB/S")->check(number_in(limits::kGBps))->group(cluster_group);
  r.o_intra_lat = app.add_option("--intra-latency-us", r.intra_latency_us, "Latency per intra-node ring step")->type_name("US")->check(number_in(limits::kLatencyUs))->group(cluster_group);
  r.o_intra_eff = app.add_option("--intra-efficiency", r.intra_efficiency, "Achieved / intra-node link rate")->type_name("FRACTION")->check(number_in(limits::kEfficiency))->group(cluster_group);
  r.o_dtype = one_of<DType>(app.add_option("--dtype", r.dtype, "Compute dtype"))->group(cluster_group);
  r.o_interf = app.add_option("--interference-factor", r.interference, "Compute slow-down while communication runs beside it (>= 1)")->type_name("FACTOR")->check(number_in(limits::kInterference))->group(cluster_group);
  r.o_comm_interf = app.add_option("--comm-interference-factor", r.comm_interference, "Communication slow-down while compute runs beside it (>= 1)")->type_name("FACTOR")->check(number_in(limits::kInterference))->group(cluster_group);
  r.o_overhead = app.add_option("--iteration-overhead-ms", r.overhead_ms, "Fixed time per distributed iteration outside the modelled kernels")->type_name("MS")->check(number_in(limits::kTimeOrZeroMs))->group(cluster_group);
  r.o_cross_overhead = app.add_option("--cross-node-overhead-ms", r.cross_node_overhead_ms, "Fixed time per iteration added once communication crosses nodes")->type_name("MS")->check(number_in(limits::kTimeOrZeroMs))->group(cluster_group);

  const char* workload_group = "Workload";
  r.o_batch = app.add_option("-b,--batch-per-gpu", r.batch_per_gpu, "Samples per GPU per iteration, per micro-step with --grad-accum-steps (default: the model's)")->type_name("SAMPLES")->check(number_in(limits::kSamples))->group(workload_group);
  r.o_global = app.add_option("--global-batch", r.global_batch, "Samples per iteration over all GPUs (strong scaling: each configuration splits it over its GPUs)")->type_name("SAMPLES")->check(number_in(limits::kSamples))->excludes(r.o_batch)->group(workload_group);
  r.o_opt = one_of<Optimizer>(app.add_option("--optimizer", r.optimizer, "Optimizer (default: the model's)"))->group(workload_group);
  one_of<ComputeSource>(app.add_option("--compute-source", r.compute_source, "Where compute times come from"))->capture_default_str()->group(workload_group);
  r.o_iter = app.add_option("--single-gpu-iteration-ms", r.single_gpu_iteration_ms, "Measured single-GPU iteration time")->type_name("MS")->check(number_in(limits::kTimeMs))->group(workload_group);
  r.o_mbatch = app.add_option("--measured-batch-per-gpu", r.measured_batch_per_gpu, "Batch the measurements were taken at (default: --batch-per-gpu)")->type_name("SAMPLES")->check(number_in(limits::kSamples))->group(workload_group);
  app.add_option("--compression", r.compression, "Gradient compression ratio: the wire carries bytes / ratio")->type_name("RATIO")->check(number_in(limits::kCompression))->capture_default_str()->group(workload_group);
  app.add_option("--grad-dtype", r.grad_dtype, "Gradient reduction dtype of all-reduce and sharded schemes (default: the model's parameter dtype)")->type_name("fp32|bf16|fp16")->check(CLI::IsMember({"fp32", "bf16", "fp16"}))->group(workload_group);
  app.add_option("--grad-accum-steps", r.accumulation_steps, "Gradient accumulation: micro-steps per optimizer step (the first K-1 only compute, as DDP's no_sync; --batch-per-gpu is one micro-step's, --global-batch one optimizer step's)")->type_name("K")->transform(count_up_to(limits::kMaxAccumulationSteps))->capture_default_str()->group(workload_group);
  app.add_flag("--recompute-activations", r.recompute, "Activation recomputation (gradient checkpointing): about sqrt(layers) of the activations kept, one more forward pass in backward")->group(workload_group);
  app.add_option("--reduction-log", reduction_log, "Measured GPU vector-add cost (bytes,seconds per line) charged per reduction step, as [NET] does")->type_name("FILE")->group(workload_group);
}

void ModelOptions::resolve() {
  const Raw& r = *raw_;
  const auto given = [](const CLI::Option* o) { return o != nullptr && o->count() > 0; };
  if (given(r.o_nodes)) cluster.nodes = r.nodes;
  if (given(r.o_gpn)) cluster.gpus_per_node = r.gpus_per_node;
  if (given(r.o_nics)) cluster.nics_per_node = r.nics_per_node;
  if (given(r.o_nic)) cluster.nic_gbps = r.nic_gbps;
  if (given(r.o_inter_lat)) cluster.inter_latency_s = r.inter_latency_us * units::us;
  if (given(r.o_eff)) cluster.transport_efficiency = r.transport_efficiency;
  if (given(r.o_host)) cluster.host_gbps = r.host_gbps;
  if (given(r.o_intra)) cluster.intra_bandwidth_bytes_per_s = r.intra_gb_per_s * units::GB;
  if (given(r.o_intra_lat)) cluster.intra_latency_s = r.intra_latency_us * units::us;
  if (given(r.o_intra_eff)) cluster.intra_efficiency = r.intra_efficiency;
  if (given(r.o_dtype)) cluster.dtype = parse_name<DType>(r.dtype);
  if (given(r.o_interf)) cluster.interference_factor = r.interference;
  if (given(r.o_comm_interf)) cluster.comm_interference_factor = r.comm_interference;
  if (given(r.o_overhead)) cluster.iteration_overhead_s = r.overhead_ms * units::ms;
  if (given(r.o_cross_overhead)) cluster.cross_node_overhead_s = r.cross_node_overhead_ms * units::ms;
  if (given(r.o_batch)) workload.batch_per_gpu = r.batch_per_gpu;
  if (given(r.o_global)) workload.global_batch = r.global_batch;
  if (given(r.o_opt)) workload.optimizer = parse_name<Optimizer>(r.optimizer);
  workload.compute_source = *parse_name<ComputeSource>(r.compute_source);
  if (given(r.o_iter)) workload.single_gpu_iteration_s = r.single_gpu_iteration_ms * units::ms;
  if (given(r.o_mbatch)) workload.measured_batch_per_gpu = r.measured_batch_per_gpu;
  workload.compression_ratio = r.compression;
  workload.recompute_activations = r.recompute;
  workload.accumulation_steps = r.accumulation_steps;
  if (!r.grad_dtype.empty()) workload.grad_bytes = r.grad_dtype == "fp32" ? 4 : 2;
}

void AllReduceCliOptions::add_to(CLI::App& app) {
  const char* group = "All-Reduce";
  one_of<Algorithm>(app.add_option("--algorithm", algorithm_, "All-reduce algorithm (auto: ring or tree per bucket as NCCL's tuner picks them: tree only where its "
                 "cost model says latency dominates, not always the faster)"))
      ->capture_default_str()->group(group);
  one_of<Bucketing>(app.add_option("--bucketing", bucketing_, "Gradient bucketing: PyTorch DDP buckets or Horovod tensor fusion"))
      ->capture_default_str()->group(group);
  app.add_option("--bucket-cap-mib", bucket_cap_mib_, "DDP bucket cap (PyTorch's bucket_cap_mb counts MiB)")
      ->type_name("MIB")->check(number_in(limits::kBucketMiB))->capture_default_str()->group(group);
  app.add_option("--first-bucket-mib", first_bucket_mib_, "DDP first bucket cap")
      ->type_name("MIB")->check(number_in(limits::kBucketMiB))->capture_default_str()->group(group);
  app.add_option("--fusion-cycle-ms", fusion_cycle_ms_, "Horovod cycle time")
      ->type_name("MS")->check(number_in(limits::kTimeMs))->capture_default_str()->group(group);
  app.add_option("--fusion-buffer-mib", fusion_buffer_mib_, "Horovod fusion buffer")
      ->type_name("MIB")->check(number_in(limits::kBucketMiB))->capture_default_str()->group(group);
}

void AllReduceCliOptions::resolve() {
  options.algorithm = *parse_name<Algorithm>(algorithm_);
  options.bucketing = *parse_name<Bucketing>(bucketing_);
  options.bucket_cap_bytes = bucket_cap_mib_ * units::MiB;
  options.first_bucket_cap_bytes = first_bucket_mib_ * units::MiB;
  options.fusion_cycle_s = fusion_cycle_ms_ * units::ms;
  options.fusion_buffer_bytes = fusion_buffer_mib_ * units::MiB;
}

void OutputOptions::add_plot_to(CLI::App& app) {
  app.add_option("--plot", plot_path, "Also draw the result as an SVG chart in FILE.svg (written whole or not at all)")
      ->type_name("FILE.svg")
      ->check(CLI::Validator([](const std::string& path) {
        return path.size() > 4 && path.ends_with(".svg") ? std::string() : "expected a file name ending in .svg";
      }, "FILE.svg"));
}

void OutputOptions::add_to(CLI::App& app) {
  app.add_flag("--json", json, "Print JSON instead of a table");
  app.add_option("-o,--output", output_path, "Write the report to FILE: JSON, or for FILE.csv one row per scheme, rate, size... (written whole or not at all)")
      ->type_name("FILE");
}

namespace {

// A measured iteration scaled from its batch to the run's (compute.cpp,
// unscaled_compute_times) is a product of inputs each in its range, so it is checked where
// every factor's source is known: a flag or the model file, in any mix. (A compute scale,
// from an anchor or a fitted profile, is applied later; the engine's last check holds it.)
void check_scaled_measurement(const ModelOptions& options, const ModelSpec& model) {
  const WorkloadOptions& w = options.workload;
  const std::optional<double> iteration_s = w.single_gpu_iteration_s ? w.single_gpu_iteration_s
                                                                     : model.measured_iteration_s;
  if (!iteration_s) return;
  const double batch = w.batch_per_gpu.value_or(model.default_batch_per_gpu);
  const double measured = w.measured_batch_per_gpu.value_or(model.measured_batch_per_gpu.value_or(batch));
  const double scaled_s = *iteration_s * (batch / measured);
  if (scaled_s <= limits::kMaxPredictedS) return;
  const auto source = [](bool flag, const char* option, const char* key) {
    return flag ? option : key;  // a key of the model file, which the message is located at
  };
  const bool from_file = !w.single_gpu_iteration_s || !w.batch_per_gpu ||
                         (!w.measured_batch_per_gpu && model.measured_batch_per_gpu);
  throw InputError(from_file ? options.model : "--single-gpu-iteration-ms", "",
                   fmt::format("a measured iteration of {:g} ms ({}) at {:g} samples per GPU ({}), scaled to {:g} "
                               "samples ({}), is {:.3g} s per iteration, beyond the "
                               "limit of {:g} s (docs/MANUAL.md, \"Limits\")",
                               *iteration_s * 1e3,
                               source(w.single_gpu_iteration_s.has_value(), "--single-gpu-iteration-ms",
                                      "/measured/single_gpu_iteration_ms"),
                               measured,
                               w.measured_batch_per_gpu      ? "--measured-batch-per-gpu"
                               : model.measured_batch_per_gpu ? "/measured/batch_per_gpu"
                                                              : "the run's batch",
                               batch, source(w.batch_per_gpu.has_value(), "--batch-per-gpu", "/batch_per_gpu"),
                               scaled_s, limits::kMaxPredictedS));
}

}  // namespace

Inputs load_inputs(const ModelOptions& options) {
  Inputs loaded;
  loaded.overrides = options.cluster;
  loaded.profile = apply_overrides(io::load_profile(options.profile), options.cluster);
  if (static_cast<double>(loaded.profile.nodes) * loaded.profile.gpus_per_node > kMaxGpus) {
    throw InputError(options.cluster.nodes || options.cluster.gpus_per_node ? "--nodes" : options.profile, "",
                     fmt::format("{} nodes x {} GPUs is over the limit of {:.0f} GPUs", loaded.profile.nodes,
                                 loaded.profile.gpus_per_node, kMaxGpus));
  }
  loaded.model = io::load_model(options.model);
  loaded.model_source = options.model;
  check_scaled_measurement(options, loaded.model);
  if (!options.reduction_log.empty()) loaded.reduction = io::read_reduction_log(options.reduction_log);
  loaded.dtype = compute_dtype(loaded.profile, options.cluster);
  (void)peak_flops_per_s(loaded.profile, loaded.dtype);  // refused now, not at the first evaluation
  return loaded;
}

}  // namespace dtperf::cli
