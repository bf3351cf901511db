#pragma once
// Low-communication training: local SGD and DiLoCo. Groups of GPUs train apart for H
// inner steps and synchronise their models once per round (Lin et al. 2020, "Don't use
// large mini-batches, use local SGD"; Douillard et al. 2023, "DiLoCo"; Douillard et al.
// 2025, "Streaming DiLoCo with overlapping communication"; Kale et al. 2025, "Eager
// updates for overlapped communication and computation in DiLoCo").
//
// The cluster's nodes form M groups of `group_nodes` nodes, g = group_nodes x G GPUs each.
// Inside a group: plain DDP, every inner step one All-Reduce iteration on the group
// (allreduce.hpp), T_in, during which the group's NICs carry its traffic for n_in (0 on one
// node). Each GPU computes on its own batch, as in All-Reduce: an inner step of the whole
// cluster processes the same global batch as one All-Reduce iteration.
//
// Every H inner steps the groups synchronise. The model's E elements are split into P
// fragments (P = 1 unless streaming), each synchronised once per round. For fragment f of
// E_f = E / P elements, the g GPUs of a group each take a shard of E_f / g elements:
//   prep_f   the outer gradient Delta = anchor - theta on the shard and its encoding, on
//            the compute stream: kernel + (8 + param bytes + encode) x E_f / g / memory rate
//   X_f      the communication, on its own stream:
//              all-reduce codecs (fp32, bf16): an all-reduce of the shard's encoding among
//              the M ranks that hold the same shard, one per group, while the G GPUs of
//              every node do the same for theirs on their rails (GroupShape{M, 1, G});
//              other codecs (int8, int4, top-k): a sum cannot be taken in the code, so the
//              M encodings are all-gathered and each rank folds all M into an fp32 sum;
//              gossip outer (--outer gossip): a pair exchange with this round's peer group,
//              one-peer exponential (group i and i XOR 2^(r mod log2 M): M a power of 2,
//              the exact average after log2 M rounds), one encoding folded;
//            then, with g > 1, an all-gather of the averaged fp32 shards inside the group,
//            so every GPU holds the fragment's averaged outer gradient whole.
//   fold_f   decoding the received encodings into the fp32 average, on the compute stream:
//              kernel + folds x fold bytes x E_f / g / memory rate
//   step_f   the outer optimizer on the whole fragment, every GPU: DiLoCo's Nesterov
//            momentum (read anchor, momentum, Delta; write momentum, anchor; theta = anchor:
//            20 + param bytes per element), local SGD's plain average (anchor, Delta read;
//            anchor, theta written: 12 + param bytes): kernel + bytes x E_f / memory rate
//   the cross-node overhead (compute.hpp), once per synchronisation.
//
// Codecs (bytes per element of the shard; the memory traffic of the plain kernels, not
// measured): wire / encode / fold one received encoding into the fp32 sum
//   fp32    4          / 0        / 12 (read sum and payload, write sum)
//   bf16    2          / 6        / 10
//   int8    1 + 4/256  / 9        / 9    (per-block absmax scale, one fp32 per 256)
//   int4    0.5 + 4/256 / 8.5     / 8.5
//   top-k   8 k        / 24 + 8 k / 16 k (fp32 value and int32 index per kept element;
//           encode: error-feedback residual added and kept, three radix-select passes)
// An NCCL all-reduce reduces fp32 and bf16 itself: their fold is the conversion back to
// fp32 (0 and 6 bytes), once.
//
// Variants, by how many inner steps tau the communication may overlap:
//   blocking   P = 1, tau = 0: compute waits for X (DiLoCo);
//   delayed    P = 1, tau = H: X runs beside the next inner phase and the averaged outer
//              gradient is applied one round late (one-step delayed / eager DiLoCo);
//   streaming  P fragments, one launched every H / P inner steps, each overlapping the
//              next tau inner steps (tau <= H / P; Streaming DiLoCo).
// While X runs beside inner steps it has the NICs when the inner steps leave them free,
// a window of w_f = tau (T_in - n_in), and runs x comm_interference_factor (contention,
// compute.hpp); compute beside it runs x interference_factor, which a group of g > 1
// already pays in every inner step (allreduce.hpp) and a group of one GPU pays for the
// overlapped span:
//   d_f    = stretched(X_f over w_f)                 (stretched_compute_s)
//   wait_f = max(0, d_f - w_f)
//   slow_f = min(d_f, w_f) (1 - 1 / interference)    (g = 1 only)
//   round  = H T_in + sum_f (prep_f + wait_f + slow_f + fold_f + step_f + overhead)
//   iteration (per inner step) = round / H
//   compute utilisation = H T_in / round  (inner time over round time, as the DiLoCo papers
//                                          report it)
// The fragments are equal in size (Streaming DiLoCo cuts by layers; equal shares are the
// same bytes). The outer state (anchor, and DiLoCo's momentum: fp32 each) is in memory.hpp.
#include <cstdint>
#include <optional>
#include <string>

#include "dtperf/allreduce.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/result.hpp"
#include "dtperf/workload.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class OuterSync : std::uint8_t { blocking, delayed, streaming };
template <>
struct EnumNames<OuterSync> {
  static constexpr Named<OuterSync> table[] = {
      {OuterSync::blocking, "blocking"},
      {OuterSync::delayed, "delayed"},
      {OuterSync::streaming, "streaming"},
  };
};
enum class OuterCodec : std::uint8_t { fp32, bf16, int8, int4, top_k };
template <>
struct EnumNames<OuterCodec> {
  static constexpr Named<OuterCodec> table[] = {
      {OuterCodec::fp32, "fp32"},
      {OuterCodec::bf16, "bf16"},
      {OuterCodec::int8, "int8"},
      {OuterCodec::int4, "int4"},
      {OuterCodec::top_k, "top-k"},
  };
};
enum class OuterOptimizer : std::uint8_t { average, nesterov };  // local SGD, DiLoCo


struct LocalSgdOptions {
  int inner_steps = 100;        // H (Streaming DiLoCo's setting; DiLoCo used 500)
  int group_nodes = 1;          // nodes per group
  bool outer_gossip = false;    // one-peer exponential pairs of groups instead of all-reduce
  OuterSync sync = OuterSync::blocking;
  int fragments = 4;            // streaming: P
  int overlap_steps = 1;        // streaming: tau
  OuterCodec codec = OuterCodec::fp32;
  double top_k_fraction = 0.01;  // top-k: kept share of the elements

  bool operator==(const LocalSgdOptions&) const = default;
};

/// Why these options cannot run on `nodes` nodes (groups, powers of two, fragments), or
/// nullopt.
std::optional<std::string> local_sgd_unavailable(const LocalSgdOptions& options, int nodes);

struct LocalSgdScenario {
  NetworkParams network;    // the whole cluster, uncompressed (the codec sets the outer bytes)
  NetworkParams inner_network;  // the network for the inner All-Reduce (gradient bytes and compression applied)
  ComputeParams compute;
  ComputeRequest request;
  AllReduceOptions inner;   // the groups' DDP
  LocalSgdOptions options;
  OuterOptimizer optimizer = OuterOptimizer::nesterov;
};

/// One round, per synchronisation and in total (seconds).
struct LocalSgdRound {
  int groups = 0;
  int gpus_per_group = 0;
  int fragments = 1;
  int overlap_steps = 0;      // tau
  double inner_step_s = 0.0;  // T_in
  double round_s = 0.0;
  double prep_s = 0.0;        // per synchronisation
  double comm_s = 0.0;        // X_f, as it runs (stretched when overlapped)
  double window_s = 0.0;      // w_f
  double wait_s = 0.0;
  double slow_s = 0.0;
  double fold_s = 0.0;
  double step_s = 0.0;
  double wire_bytes_per_gpu = 0.0;  // one synchronisation, sent across groups
  double compute_utilization = 0.0;
};

struct LocalSgdResult {
  IterationResult iteration;  // per inner step, the round spread over its H steps
  IterationResult inner;      // one inner step on its own
  LocalSgdRound round;
};

/// Deterministic: every group alike. The options must be available
/// (local_sgd_unavailable) on the network's nodes. `inner` times the groups' DDP step
/// (its buffers reused, as the Evaluator keeps one per model); the two-argument form makes
/// its own.
LocalSgdResult predict_local_sgd(const ModelSpec& model, const LocalSgdScenario& scenario, AllReducePredictor& inner);
LocalSgdResult predict_local_sgd(const ModelSpec& model, const LocalSgdScenario& scenario);

}  // namespace dtperf
