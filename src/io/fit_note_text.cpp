#include "dtperf/io/fit_note_text.hpp"

#include <fmt/format.h>

#include "dtperf/io/parameter_unit.hpp"
#include "dtperf/network.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

namespace {

std::string gb(double bytes_per_s) { return fmt::format("{:.1f} GB/s", bytes_per_s / units::GB); }
std::string us(double seconds) { return fmt::format("{:.2f} us", seconds / units::us); }

// A caveat for bandwidths from sweeps that stop early.
std::string reach(const FitNote& n) {
  if (!n.sweep_max_bytes) return "";
  return fmt::format(" (the sweep stops at {:.0f} MiB: the bandwidth may still be rising)",
                     *n.sweep_max_bytes / (1024.0 * 1024.0));
}

}  // namespace

std::string fit_note_text(const FitNote& n) {
  using K = FitNote::Kind;
  switch (n.kind) {
    case K::gemm_no_peak:
      return fmt::format("GEMM points of {} were left out: the profile has no {} peak.", name_of(n.dtype),
                         name_of(n.dtype));
    case K::gemm_above_peak:
      return fmt::format("{} GEMM point(s) of {} exceeded the {} peak of {:.1f} TFLOP/s (best {:.1f}) and count as "
                         "efficiency 1.",
                         n.points, name_of(n.dtype), name_of(n.dtype), n.peak_flops_per_s / 1e12,
                         n.best_flops_per_s / 1e12);
    case K::intra_bandwidth:
      return fmt::format("Intra-node: {} per GPU = busbw of the largest sizes of all_reduce on {} ranks of one node{}.",
                         gb(n.bytes_per_s), n.ranks, reach(n));
    case K::intra_latency:
      return fmt::format("Intra-node latency: {} per ring step = alpha {} / 2({}-1) of all_reduce on {} ranks of one "
                         "node.",
                         us(n.latency_s), us(n.alpha_s), n.ranks, n.ranks);
    case K::nic_from_sendrecv:
      return fmt::format("NICs of a node: {} = {} per pair x max({} concurrent pair(s), {} rail(s)) (sendrecv across "
                         "nodes, largest sizes, best concurrency){}.",
                         gb(n.bytes_per_s), gb(n.pair_bytes_per_s), n.concurrent, n.rails, reach(n));
    case K::nic_from_all_reduce:
      return fmt::format("NICs of a node: {} = busbw {} x max(1, {} rail(s) / {} rank(s) per node) of all_reduce on {} "
                         "ranks over {} nodes, largest sizes{}.",
                         gb(n.bytes_per_s), gb(n.pair_bytes_per_s), n.rails, n.ranks / n.nodes, n.ranks, n.nodes,
                         reach(n));
    case K::nic_intra_bound:
      return fmt::format("NICs not derived: all_reduce on {} ranks over {} nodes reached busbw {}, {:.0f} % of the "
                         "{} of one node's all_reduce: the ring was bound by the intra-node link, not the NICs "
                         "(the base profile's NIC values are kept). Measure sendrecv across nodes to see the NICs.",
                         n.ranks, n.nodes, gb(n.bytes_per_s), 100.0 * n.bytes_per_s / n.limit_bytes_per_s,
                         gb(n.limit_bytes_per_s));
    case K::inter_latency_sendrecv:
      return fmt::format("Inter-node latency: {} per hop = alpha of sendrecv across nodes.", us(n.latency_s));
    case K::inter_latency_pair_ring:
      return fmt::format("Inter-node latency: {} per hop = alpha {} / 2 of all_reduce on 2 ranks over 2 nodes (two "
                         "ring steps).",
                         us(n.latency_s), us(n.alpha_s));
    case K::inter_latency_ring:
    case K::inter_latency_not_derived: {
      // The engine's ring (network.hpp).
      const RingSteps steps = allreduce_ring_steps(n.nodes, n.ranks / n.nodes);
      if (n.kind == K::inter_latency_ring) {
        return fmt::format("Inter-node latency: {} per hop = (alpha {} - {} intra-node steps x {}) / {} steps across "
                           "nodes, the ring latency of all_reduce on {} ranks over {} nodes.",
                           us(n.latency_s), us(n.alpha_s), steps.intra, us(n.intra_latency_s), steps.inter, n.ranks,
                           n.nodes);
      }
      return fmt::format("Inter-node latency not derived: alpha {} of all_reduce on {} ranks over {} nodes is below its "
                         "{} intra-node steps of {}; the previous value is kept.",
                         us(n.alpha_s), n.ranks, n.nodes, steps.intra, us(n.intra_latency_s));
    }
    case K::intra_above_link_rate:
      return fmt::format("The measured intra-node {} exceeds the link rate {}: the rate is raised to it.",
                         gb(n.bytes_per_s), gb(n.limit_bytes_per_s));
    case K::intra_rate_unknown:
      return "Intra-node link rate unknown: bandwidth = measured, efficiency 1.";
    case K::nic_above_line_rate:
      return fmt::format("The measured NIC throughput {} exceeds {} x {:g} Gbit/s = {} (tree or NVLS all-reduce, or "
                         "more NICs than stated): transport efficiency set to 1.",
                         gb(n.bytes_per_s), n.nics, n.nic_gbps, gb(n.limit_bytes_per_s));
    case K::nic_rate_unknown:
      return fmt::format("NIC line rate unknown: nic_gbps = measured {} / {} NIC(s), transport efficiency 1.",
                         gb(n.bytes_per_s), n.nics);
    case K::intra_above_ring_ceiling:
      return fmt::format("Intra-node busbw {} is {:.0f} % of the link rate {}, where a ring reaches about 80 %: NVLS "
                         "(NVLink SHARP) reduced in the switches, or the link rate is wrong. Rings of a few GPUs "
                         "(gossip groups) will not reach it.",
                         gb(n.bytes_per_s), 100.0 * n.bytes_per_s / n.limit_bytes_per_s, gb(n.limit_bytes_per_s));
    case K::nic_above_ceiling:
      return fmt::format("The NICs of a node carried {}, more than {} x {:g} Gbit/s = {} can: NVLS or tree all-reduce, "
                         "or more NICs or a faster line than stated.",
                         gb(n.bytes_per_s), n.nics, n.nic_gbps, gb(n.limit_bytes_per_s));
    case K::nic_two_node_inflated:
      return fmt::format("The NIC rate {} comes from all_reduce on {} ranks over 2 nodes and exceeds the {} that {} x "
                         "{:g} Gbit/s carry: on 2 nodes NCCL's tree (or NVLS tree) sends each byte across once, a "
                         "ring 2(p-1)/p times, so busbw overstates the NICs by up to 2x. Measure sendrecv across nodes "
                         "(dtperf-calibrate does), or run the log with NCCL_ALGO=Ring.",
                         gb(n.bytes_per_s), n.ranks, gb(n.limit_bytes_per_s), n.nics, n.nic_gbps);
    case K::intra_far_below:
      return fmt::format("Intra-node busbw {} is less than half the ~{} a ring reaches on these links: peer-to-peer "
                         "disabled (NCCL_P2P_DISABLE, a VM without P2P), fewer links than stated, or a sweep that "
                         "stopped short.",
                         gb(n.bytes_per_s), gb(n.limit_bytes_per_s));
    case K::nic_far_below:
      return fmt::format("The NICs of a node carried {}, less than half the {} that {} x {:g} Gbit/s carry: "
                         "NCCL over sockets instead of RDMA (NCCL_NET, NCCL_IB_HCA), fewer NICs in use than stated, "
                         "or a sweep that stopped short{}.",
                         gb(n.bytes_per_s), gb(n.limit_bytes_per_s), n.nics, n.nic_gbps,
                         n.intra_measured ? ""
                                          : "; or the ring was bound inside the node (PCIe) and the NICs were never "
                                            "the limit: fit a one-node all_reduce log alongside to tell");
    case K::gemm_far_below:
      return fmt::format("{} GEMMs reached at best {:.1f} TFLOP/s, {:.0f} % of the {:.1f} TFLOP/s peak, less than "
                         "half the {:.0f} % the profile assumes for large GEMMs: tensor cores unused (TF32 off, "
                         "unaligned shapes), clocks held down, or another job on the GPU.",
                         name_of(n.dtype), n.best_flops_per_s / 1e12, 100.0 * n.best_flops_per_s / n.peak_flops_per_s,
                         n.peak_flops_per_s / 1e12, 100.0 * n.assumed_efficiency);
    case K::network_instead_of_compute:
      return "compute cannot explain these runs (their time does not follow the compute term: communication hides "
             "it); the network term is pinned instead and compute stays open, near the model's own estimate";
    case K::run_not_explained:
      return fmt::format("run '{}' is not explained within 10 % ({:+.1f} %): a term the model lacks, or a run that "
                         "differs from its description",
                         n.run_label, 100.0 * n.error);
    case K::wider_than_local: {
      const auto p = parse_name<RunParameter>(n.parameter);
      const ParameterUnit u = p ? parameter_unit(*p) : ParameterUnit{1.0, ""};
      const auto shown = [&](double x) { return fmt::format("{:.4g}{}{}", x * u.scale, *u.unit ? " " : "", u.unit); };
      return fmt::format("{} is held less tightly than the curvature at the fit says: the runs allow it as far as {} "
                         "(within two standard errors of the best fit, {}); its interval and the prediction bands "
                         "are widened to match",
                         n.parameter, shown(n.other_value), shown(n.value));
    }
    case K::profile_not_scanned:
      return fmt::format("{} pinned parameter{} not searched to the end of {} range{} for another value that fits "
                         "as well (the fit's time for it ran out): {} interval{} may be narrower than the runs allow",
                         n.points, n.points == 1 ? " was" : "s were", n.points == 1 ? "its" : "their",
                         n.points == 1 ? "" : "s", n.points == 1 ? "its" : "their", n.points == 1 ? "" : "s");
  }
  return "";
}

nlohmann::json fit_notes_json(std::span<const FitNote> notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const FitNote& n : notes) {
    nlohmann::json j = {{"kind", name_of(n.kind)}, {"text", fit_note_text(n)}};
    if (n.kind == FitNote::Kind::run_not_explained) {
      j["run"] = n.run_label;
      j["error"] = n.error;
    }
    if (n.kind == FitNote::Kind::wider_than_local) {
      j["parameter"] = n.parameter;
      j["value"] = n.value;
      j["other_value"] = n.other_value;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace dtperf
