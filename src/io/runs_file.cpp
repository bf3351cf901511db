#include "dtperf/io/runs_file.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/topology.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

namespace {

int count(ObjectReader& r, const std::string& key) {
  const bool steps = key == "inner_steps" || key == "fragments" || key == "overlap_steps";
  const std::int64_t most = key == "nodes" || key == "group_nodes" ? limits::kMaxNodes
                            : steps                                ? limits::kMaxInnerSteps
                            : key == "grad_accum_steps"            ? limits::kMaxAccumulationSteps
                                                                   : limits::kMaxGpusPerNode;
  return static_cast<int>(r.integer(key, 1, most));
}

std::optional<int> optional_count(ObjectReader& r, const std::string& key) {
  if (!r.has(key)) return std::nullopt;
  return count(r, key);
}

Scheme read_scheme(ObjectReader& r) {
  const std::string name = r.string("scheme");
  if (const auto scheme = parse_scheme(name)) return *scheme;
  const std::vector<std::string> names = scheme_names();
  r.fail("scheme", fmt::format("unknown scheme '{}'{}; expected one of: {}", name, did_you_mean(name, names),
                               join_names(names)));
}

// "iteration_ms" is the median as a number, or {"median", "p10", "p90"}.
void read_measurement(ObjectReader& r, const Json& run, RunMeasurement& m) {
  if (!r.has("iteration_ms")) r.fail("iteration_ms", "missing: the measured iteration time (ms) is required");
  if (run.at("iteration_ms").is_object()) {
    ObjectReader object = r.object("iteration_ms");
    m.iteration_s = object.number("median", limits::kTimeMs) * units::ms;
    if (auto p10 = object.optional_number("p10", limits::kTimeMs)) m.p10_s = *p10 * units::ms;
    if (auto p90 = object.optional_number("p90", limits::kTimeMs)) m.p90_s = *p90 * units::ms;
    if (m.p10_s && *m.p10_s > m.iteration_s) object.fail("p10", "p10 is above the median");
    if (m.p90_s && *m.p90_s < m.iteration_s) object.fail("p90", "p90 is below the median");
    object.finish();
  } else {
    m.iteration_s = r.number("iteration_ms", limits::kTimeMs) * units::ms;
  }
  if (auto b = r.optional_object("breakdown_ms")) {
    if (auto x = b->optional_number("forward", limits::kTimeMs)) m.forward_s = *x * units::ms;
    if (auto x = b->optional_number("backward", limits::kTimeMs)) m.backward_s = *x * units::ms;
    if (auto x = b->optional_number("exposed_comm", limits::kTimeOrZeroMs)) m.exposed_comm_s = *x * units::ms;
    if (auto x = b->optional_number("optimizer", limits::kTimeOrZeroMs)) m.optimizer_s = *x * units::ms;
    const double parts = m.forward_s.value_or(0) + m.backward_s.value_or(0) + m.exposed_comm_s.value_or(0) +
                         m.optimizer_s.value_or(0);
    if (parts > 1.5 * m.iteration_s) {
      throw InputError(b->file(), b->pointer(), fmt::format("the parts add up to {:.3f} ms, far more than the iteration ({:.3f} ms)",
                              parts / units::ms, m.iteration_s / units::ms));
    }
    b->finish();
  }
}

// The models the runs of one file name, each loaded once (runs of one model share it).
using LoadedModels = std::map<std::string, std::shared_ptr<const ModelSpec>>;

MeasuredRun read_run(const Json& json, const std::string& file, const std::string& pointer, std::size_t index,
                     LoadedModels& models) {
  ObjectReader r(json, file, pointer);
  MeasuredRun run;
  run.label = r.optional_string("label").value_or(fmt::format("run {}", index + 1));
  run.file = file;
  run.pointer = pointer;
  run.source = r.optional_string("source").value_or("");
  RunConfig& c = run.config;
  if (auto name = r.optional_string("model")) {
    try {
      auto& loaded = models[*name];
      if (!loaded) loaded = std::make_shared<const ModelSpec>(load_model(*name));
      c.model = loaded;
    } catch (const InputError& e) {
      if (!e.input().empty()) throw InputError(file, r.pointer_of("model"), e.reason());
      throw;  // an error inside the model's own file names that file
    }
    c.model_name = *name;
  }
  c.scheme = read_scheme(r);

  ClusterOverrides& o = c.cluster;
  o.nodes = count(r, "nodes");
  o.gpus_per_node = optional_count(r, "gpus_per_node");
  if (o.gpus_per_node && static_cast<std::int64_t>(*o.nodes) * *o.gpus_per_node > limits::kMaxGpus) {
    r.fail("gpus_per_node", fmt::format("{} nodes x {} GPUs is over the limit of {} GPUs", *o.nodes, *o.gpus_per_node,
                                        limits::kMaxGpus));
  }
  o.nics_per_node = optional_count(r, "nics_per_node");
  o.nic_gbps = r.optional_number("nic_gbps", limits::kNicGbps);
  if (auto x = r.optional_number("inter_latency_us", limits::kLatencyUs)) o.inter_latency_s = *x * units::us;
  o.transport_efficiency = r.optional_number("transport_efficiency", limits::kEfficiency);
  // 0 lifts the profile's host ceiling; any other value is a per-node rate like a NIC's.
  o.host_gbps = r.optional_number("host_gbps", Range::non_negative);
  if (o.host_gbps && *o.host_gbps != 0.0 && !limits::kNicGbps.contains(*o.host_gbps)) {
    r.fail("host_gbps", fmt::format("expected 0 (no ceiling) or a number from {:g} to {:g}, got {:g}",
                                    limits::kNicGbps.low, limits::kNicGbps.high, *o.host_gbps));
  }
  if (auto x = r.optional_number("intra_gb_per_s", limits::kGBps)) o.intra_bandwidth_bytes_per_s = *x * units::GB;
  if (auto x = r.optional_number("intra_latency_us", limits::kLatencyUs)) o.intra_latency_s = *x * units::us;
  o.intra_efficiency = r.optional_number("intra_efficiency", limits::kEfficiency);
  if (r.has("dtype")) o.dtype = parse_name<DType>(r.choice("dtype", names_of<DType>()));

  WorkloadOptions& w = c.workload;
  w.batch_per_gpu = r.optional_number("batch_per_gpu", limits::kSamples);
  w.global_batch = r.optional_number("global_batch", limits::kSamples);
  if (w.batch_per_gpu && w.global_batch) r.fail("global_batch", "give batch_per_gpu or global_batch, not both");
  if (r.has("optimizer")) w.optimizer = parse_name<Optimizer>(r.choice("optimizer", names_of<Optimizer>()));
  if (r.has("compute_source")) {
    w.compute_source = *parse_name<ComputeSource>(
        r.choice("compute_source", names_of<ComputeSource>()));
  }
  if (auto x = r.optional_number("single_gpu_iteration_ms", limits::kTimeMs)) w.single_gpu_iteration_s = *x * units::ms;
  w.measured_batch_per_gpu = r.optional_number("measured_batch_per_gpu", limits::kSamples);
  w.compression_ratio = r.optional_number("compression", limits::kCompression).value_or(1.0);
  if (r.has("recompute_activations")) w.recompute_activations = r.boolean("recompute_activations");
  if (auto x = optional_count(r, "grad_accum_steps")) w.accumulation_steps = *x;
  if (r.has("grad_dtype")) w.grad_bytes = r.choice("grad_dtype", {"fp32", "bf16", "fp16"}) == "fp32" ? 4 : 2;

  AllReduceOptions& a = c.allreduce;
  if (r.has("algorithm")) a.algorithm = *parse_name<Algorithm>(r.choice("algorithm", names_of<Algorithm>()));
  if (r.has("bucketing")) a.bucketing = *parse_name<Bucketing>(r.choice("bucketing", names_of<Bucketing>()));
  // PyTorch's own spelling is read too: DDP's bucket_cap_mb counts MiB (x 1024 x 1024).
  if (r.has("bucket_cap_mib") && r.has("bucket_cap_mb")) {
    r.fail("bucket_cap_mb", "bucket_cap_mb is PyTorch's name for bucket_cap_mib: give one of them");
  }
  if (auto x = r.optional_number("bucket_cap_mib", limits::kBucketMiB)) a.bucket_cap_bytes = *x * units::MiB;
  if (auto x = r.optional_number("bucket_cap_mb", limits::kBucketMiB)) a.bucket_cap_bytes = *x * units::MiB;
  if (auto x = r.optional_number("first_bucket_mib", limits::kBucketMiB)) a.first_bucket_cap_bytes = *x * units::MiB;
  if (auto x = r.optional_number("fusion_cycle_ms", limits::kTimeMs)) a.fusion_cycle_s = *x * units::ms;
  if (auto x = r.optional_number("fusion_buffer_mib", limits::kBucketMiB)) a.fusion_buffer_bytes = *x * units::MiB;
  if (auto x = r.optional_number("gossip_bucket_mib", limits::kBucketMiB)) c.gossip.bucket_cap_bytes = *x * units::MiB;
  if (r.has("node_level")) c.gossip.node_level = r.boolean("node_level");
  LocalSgdOptions& l = c.local_sgd;
  if (auto x = optional_count(r, "inner_steps")) l.inner_steps = *x;
  if (auto x = optional_count(r, "group_nodes")) l.group_nodes = *x;
  if (r.has("outer")) l.outer_gossip = r.choice("outer", {"all-reduce", "gossip"}) == "gossip";
  if (r.has("outer_sync")) l.sync = *parse_name<OuterSync>(r.choice("outer_sync", names_of<OuterSync>()));
  if (auto x = optional_count(r, "fragments")) l.fragments = *x;
  if (auto x = optional_count(r, "overlap_steps")) l.overlap_steps = *x;
  if (r.has("outer_codec")) l.codec = *parse_name<OuterCodec>(r.choice("outer_codec", names_of<OuterCodec>()));
  if (auto x = r.optional_number("top_k_fraction", Range::fraction)) l.top_k_fraction = *x;

  read_measurement(r, json, run.measured);
  r.finish();
  return run;
}

void check_schema(ObjectReader& r) {
  r.expect_schema(kRunsSchema);
  r.optional_string("description");
}

// JSON lines: a first line that is a whole JSON object, and more non-empty lines.
bool is_json_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int non_empty = 0;
  while (std::getline(in, line) && non_empty < 2) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++non_empty;
  }
  if (non_empty < 2) return false;
  in.clear();
  in.str(text);
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Json first = Json::parse(line, nullptr, false);
    return !first.is_discarded() && first.is_object() && first.contains("schema");
  }
  return false;
}

void check_labels(const std::vector<MeasuredRun>& runs, const std::string& file) {
  std::set<std::string> seen;
  for (const MeasuredRun& run : runs) {
    if (!seen.insert(run.label).second) {
      throw InputError(run.file, pointer_append(run.pointer, "label"),
                       fmt::format("label '{}' is used by an earlier run of {}", run.label, file));
    }
  }
}

}  // namespace

std::vector<MeasuredRun> parse_runs(const std::string& text, const std::string& file) {
  std::vector<MeasuredRun> runs;
  LoadedModels models;
  if (is_json_lines(text)) {
    std::istringstream in(text);
    std::string line;
    std::size_t number = 0;
    bool header = true;
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{}:{}", file, number);
      const Json json = parse_json_text(line, where);
      if (header) {
        ObjectReader r(json, where, "");
        check_schema(r);
        r.finish();
        header = false;
        continue;
      }
      runs.push_back(read_run(json, where, "", runs.size(), models));
    }
  } else {
    const Json json = parse_json_text(text, file);
    ObjectReader r(json, file, "");
    check_schema(r);
    const Json& list = r.array("runs");
    for (std::size_t i = 0; i < list.size(); ++i) {
      runs.push_back(read_run(list[i], file, pointer_append(r.pointer_of("runs"), i), i, models));
    }
    r.finish();
  }
  if (runs.empty()) throw InputError(file, "", "no runs: a runs file needs at least one measured run");
  check_labels(runs, file);
  return runs;
}

std::vector<MeasuredRun> read_runs_file(const std::string& path) { return parse_runs(read_text_file(path), path); }

}  // namespace dtperf::io
