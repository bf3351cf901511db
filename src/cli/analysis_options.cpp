#include "analysis_options.hpp"
#include "checks.hpp"

#include <iostream>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/topology.hpp"
#include "dtperf/units.hpp"

namespace dtperf::cli {

void GossipCliOptions::add_to(CLI::App& app) {
  app.add_option("--gossip-bucket-mib", bucket_cap_mib_, "Decent-DP bucket size (bucket_size_in_mb counts MiB)")
      ->type_name("MIB")->check(number_in(limits::kBucketMiB))->capture_default_str()->group("Decentralized");
  app.add_flag("--node-level", options.node_level,
                "Node-level gossip: the GPUs of a node all-reduce their gradients and keep one replica; the topology "
                "(or SGP, D-PSGD) runs over nodes")
      ->group("Decentralized");
}

void GossipCliOptions::resolve() { options.bucket_cap_bytes = bucket_cap_mib_ * units::MiB; }

void LocalSgdCliOptions::add_to(CLI::App& app) {
  const char* group = "Low-communication (local-sgd, diloco)";
  LocalSgdOptions& o = options;
  app.add_option("--inner-steps", o.inner_steps, "Inner steps H between synchronisations of the groups")
      ->type_name("H")->transform(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
  app.add_option("--group-nodes", o.group_nodes, "Nodes per group (the groups train apart with DDP inside)")
      ->type_name("NODES")->transform(count_up_to(kMaxNodes))->capture_default_str()->group(group);
  app.add_option("--outer", outer_, "How groups synchronise: an all-reduce, or gossip with one peer group per round")
      ->type_name("all-reduce|gossip")->check(CLI::IsMember({"all-reduce", "gossip"}))->capture_default_str()->group(group);
  one_of<OuterSync>(app.add_option("--outer-sync", sync_,
                                   "blocking; delayed (overlapped with the next inner phase, applied one round late); "
                                   "streaming (--fragments, each overlapped with --overlap-steps inner steps)"))
      ->capture_default_str()->group(group);
  app.add_option("--fragments", o.fragments, "Streaming: fragments P of the model, synchronised in turn")
      ->type_name("P")->transform(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
  app.add_option("--overlap-steps", o.overlap_steps, "Streaming: inner steps a fragment's synchronisation may overlap")
      ->type_name("TAU")->transform(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
  one_of<OuterCodec>(app.add_option("--outer-codec", codec_, "Outer gradients on the wire"))
      ->capture_default_str()->group(group);
  app.add_option("--top-k-fraction", o.top_k_fraction, "top-k: the share of the outer gradient's elements sent")
      ->type_name("FRACTION")->check(number_in(0.0, 1.0, true))->capture_default_str()->group(group);
}

void LocalSgdCliOptions::resolve() {
  options.outer_gossip = outer_ == "gossip";
  options.sync = *parse_name<OuterSync>(sync_);
  options.codec = *parse_name<OuterCodec>(codec_);
}

void AnchorOptions::add_to(CLI::App& app) {
  const char* group = "Anchor on a measurement";
  given = app.add_option("--measured-iteration-ms", measured_iteration_ms,
                         "A measured iteration time: the compute term is scaled so that the model reproduces it")
              ->type_name("MS")->check(number_in(limits::kTimeMs))->group(group);
  app.add_option("--measured-scheme", measured_scheme, "The scheme it was measured with (all-reduce, sgp or a topology)")
      ->type_name("SCHEME")->capture_default_str()->group(group);
  app.add_option("--measured-gpus", measured_gpus, "The GPU count it was measured at (default: the cluster's)")
      ->type_name("GPUS")->transform(count_up_to(kMaxGpus))->group(group);
}

void AnalysisCliOptions::add_to(CLI::App& app) {
  model.add_to(app);
  allreduce.add_to(app);
  gossip.add_to(app);
  local_sgd.add_to(app);
  anchor.add_to(app);
  variability.add_to(app);
  output.add_to(app);
}

void AnalysisCliOptions::resolve() {
  model.resolve();
  allreduce.resolve();
  gossip.resolve();
  local_sgd.resolve();
}

void add_scheme_option(CLI::App& app, std::string& scheme) {
  app.add_option("-s,--scheme", scheme,
                 "all-reduce, sgp, sgp-sync, d-psgd, zero-1, zero-2, fsdp (zero-3), hsdp, local-sgd, diloco, or a gossip "
                 "topology (dtperf topologies)")
      ->type_name("SCHEME")
      ->capture_default_str();
}

Scheme parse_scheme_option(const std::string& name) {
  if (const auto scheme = parse_scheme(name)) return *scheme;
  const std::vector<std::string> names = scheme_names();
  throw InputError::in_input("scheme", fmt::format("unknown scheme '{}'{}; expected one of: {}", name,
                                                   did_you_mean(name, names), join_names(names)));
}

AnalysisRequest AnalysisCliOptions::request(const Inputs& inputs) const {
  AnalysisRequest r;
  r.workload = model.workload;
  r.allreduce = allreduce.options;
  r.gossip = gossip.options;
  r.local_sgd = local_sgd.options;
  r.variability = variability.resolve(inputs.profile);
  if (anchor.given != nullptr && anchor.given->count() > 0) {
    r.anchor = AnchorRequest{anchor.measured_iteration_ms, anchor.measured_scheme, anchor.measured_gpus};
  }
  return r;
}

Session AnalysisCliOptions::start(const std::string& command) {
  resolve();
  auto inputs = std::make_unique<const Inputs>(load_inputs(model));
  Prepared prepared = prepare(command, *inputs, request(*inputs));
  for (const std::string& warning : prepared.run.warnings) std::cerr << "dtperf: warning: " << warning << "\n";
  return {std::move(inputs), std::move(prepared)};
}

}  // namespace dtperf::cli
