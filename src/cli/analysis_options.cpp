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
      ->type_name("MIB")->check(number_in(0.0, kMaxMiB, true))->capture_default_str()->group("Decentralized");
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
      ->type_name("H")->check(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
  app.add_option("--group-nodes", o.group_nodes, "Nodes per group (the groups train apart with DDP inside)")
      ->type_name("NODES")->check(count_up_to(kMaxNodes))->capture_default_str()->group(group);
  app.add_option("--outer", outer_, "How groups synchronise: an all-reduce, or gossip with one peer group per round")
      ->type_name("all-reduce|gossip")->check(CLI::IsMember({"all-reduce", "gossip"}))->capture_default_str()->group(group);
  one_of<OuterSync>(app.add_option("--outer-sync", sync_,
                                   "blocking; delayed (overlapped with the next inner phase, applied one round late); "
                                   "streaming (--fragments, each overlapped with --overlap-steps inner steps)"))
      ->capture_default_str()->group(group);
  app.add_option("--fragments", o.fragments, "Streaming: fragments P of the model, synchronised in turn")
      ->type_name("P")->check(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
  app.add_option("--overlap-steps", o.overlap_steps, "Streaming: inner steps a fragment's synchronisation may overlap")
      ->type_name("TAU")->check(count_up_to(kMaxInnerSteps))->capture_default_str()->group(group);
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
              ->type_name("MS")->check(number_in(0.0, kMaxTimeMs, true))->group(group);
  app.add_option("--measured-scheme", measured_scheme, "The scheme it was measured with (all-reduce, sgp or a topology)")
      ->type_name("SCHEME")->capture_default_str()->group(group);
  app.add_option("--measured-gpus", measured_gpus, "The GPU count it was measured at (default: the cluster's)")
      ->type_name("GPUS")->check(count_up_to(kMaxGpus))->group(group);
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

Evaluator AnalysisCliOptions::make_evaluator(const Loaded& loaded, std::optional<AnchorResult>& anchored) const {
  Setup setup;
  setup.cluster = loaded.profile;
  setup.model = &loaded.model;
  setup.dtype = loaded.dtype;
  setup.workload = model.workload;
  setup.allreduce = allreduce.options;
  setup.gossip = gossip.options;
  setup.local_sgd = local_sgd.options;
  setup.reduction = loaded.reduction;
  Evaluator evaluator(std::move(setup));
  if (const auto& fit = loaded.profile.runs_fit) {
    if (fit->model == loaded.model.name) {
      evaluator.set_compute_scales(fit->forward_scale, fit->backward_scale);
    } else {
      std::cerr << fmt::format(
          "dtperf: warning: profile '{}' was fitted to runs of '{}'; its compute scales (forward x{:.4g}, backward "
          "x{:.4g}) are not applied to '{}'\n",
          loaded.profile.name, fit->model, fit->forward_scale, fit->backward_scale, loaded.model.name);
    }
  }
  const Variability resolved = variability.resolve(loaded.profile);
  if (anchor.given == nullptr || anchor.given->count() == 0) {
    evaluator.set_variability(resolved);
    return evaluator;
  }

  const auto scheme = parse_scheme(anchor.measured_scheme);
  if (!scheme) {
    const std::vector<std::string> names = scheme_names();
    throw InputError("--measured-scheme", "",
                     fmt::format("unknown scheme '{}'{}; expected one of: {}", anchor.measured_scheme,
                                 did_you_mean(anchor.measured_scheme, names), join_names(names)));
  }
  const int per_node = loaded.profile.gpus_per_node;
  const int gpus = anchor.measured_gpus > 0 ? anchor.measured_gpus : loaded.profile.ranks();
  if (gpus % per_node != 0) {
    throw InputError("--measured-gpus", "",
                     fmt::format("{} GPUs do not fill whole nodes of {} GPUs", gpus, per_node));
  }
  const double scale = checked(model, [&] {
    return evaluator.fit_compute_scale(*scheme, gpus / per_node, anchor.measured_iteration_ms * units::ms);
  });
  evaluator.set_compute_scale(scale);
  evaluator.set_variability(resolved);
  anchored = AnchorResult{scale, scheme->name(), gpus, anchor.measured_iteration_ms};
  return evaluator;
}

}  // namespace dtperf::cli
