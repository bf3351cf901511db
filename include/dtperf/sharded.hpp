#pragma once
// Sharded data parallelism: ZeRO stages 1-3 (DeepSpeed) and FSDP (PyTorch), fully sharded
// or hybrid (sharded inside a node, replicated across nodes). Every rank still computes a
// full forward and backward on its own batch; what changes is which state each rank keeps
// (memory.hpp) and which collectives replace the all-reduce.
//
// Units are the DDP buckets of the model (allreduce.hpp: gradient-ready order, 25 MiB by
// default), standing for FSDP's wrapped modules and DeepSpeed's reduce buckets; P_u is a
// unit's parameter bytes. One FIFO communication stream, as one NCCL communicator runs its
// collectives in issue order. On a group of n ranks (collective_cost in network.hpp):
// RS(u) a reduce-scatter of the unit's gradients, AG(u) an all-gather of its parameters,
// both of P_u bytes in nccl-tests' convention.
//
//   zero-1, zero-2 (DeepSpeed): backward as DDP, each unit reduce-scattered when its
//       gradients are ready (overlapping the rest of backward); the optimizer steps on the
//       rank's 1/n shard; then the updated parameters are all-gathered, unit by unit, with
//       nothing to overlap:
//         iteration = forward + max(backward end, last RS end) + optimizer / n + sum_u AG(u)
//       The two stages move the same bytes; zero-2 also shards the gradients (memory).
//   fsdp (FULL_SHARD, ZeRO-3): parameters live sharded. Forward all-gathers each unit
//       before it runs, one unit ahead (AG(u+1) is issued when unit u starts); backward
//       gathers each unit again (all but the first, which forward leaves gathered), again
//       one ahead (BACKWARD_PRE prefetch), and reduce-scatters each unit's gradients when
//       they are ready. On the stream, in issue order:
//         forward:  AG(u) issued at max(stream free, start of unit u-1's forward);
//                   unit u's forward starts at max(previous end, AG(u) end)
//         backward: unit u's backward starts at max(previous end, AG(u) end); AG(u+1) is
//                   issued then, RS(u) at its end
//         iteration = max(backward end, last RS end) + optimizer / n
//   hsdp (HYBRID_SHARD): fsdp inside each node (n = GPUs per node, over the intra-node
//       links); after each RS(u), an all-reduce of the rank's P_u / G shard across nodes
//       among the ranks holding the same shard (G of them per node cross at once).
//
// Gradient accumulation (K micro-steps per optimizer step, compute.hpp): zero-1 keeps
// whole gradients and reduces them once, in the last micro-step's backward (the K - 1
// before it only compute); zero-2 keeps only its gradient shard, so every micro-step
// reduce-scatters (DeepSpeed's stage 2); fsdp and hsdp gather the parameters and
// reduce-scatter the gradients in every micro-step (FSDP without no_sync, which would keep
// whole gradients). The optimizer step and ZeRO's all-gathers run once per K.
//
// Gradients are reduced at `--grad-dtype` bytes per element (the wire carries
// P_u x grad_bytes / param_bytes), parameters gathered at the model's parameter bytes.
// Contention (compute.hpp) applies as in All-Reduce: every compute phase of a distributed
// run is taken to overlap communication (x interference_factor), every collective to
// overlap compute (x comm_interference_factor). Modelled without variable compute.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/result.hpp"
#include "dtperf/workload.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class Sharding : std::uint8_t { zero1, zero2, fsdp, hsdp };
template <>
struct EnumNames<Sharding> {
  static constexpr Named<Sharding> table[] = {
      {Sharding::zero1, "zero-1"},
      {Sharding::zero2, "zero-2"},
      {Sharding::fsdp, "fsdp"},
      {Sharding::hsdp, "hsdp"},
      {Sharding::fsdp, "zero-3", true},
  };
};
inline constexpr Sharding kShardings[] = {Sharding::zero1, Sharding::zero2, Sharding::fsdp, Sharding::hsdp};
/// Ranks one copy of the state is sharded over: all of them, or one node's for hsdp.
int shard_ranks(Sharding sharding, int ranks, int gpus_per_node);

struct ShardedScenario {
  Sharding sharding = Sharding::fsdp;
  NetworkParams network;      // gradients' bytes scaled by grad_bytes / param_bytes already
  NetworkParams param_network;  // parameters' all-gathers (the model's parameter bytes)
  ComputeParams compute;
  ComputeRequest request;
  AllReduceOptions options;   // the units (bucket caps) and the cross-node algorithm
};

/// Deterministic timeline of one iteration (every rank alike).
IterationResult predict_sharded(const ModelSpec& model, const ShardedScenario& scenario);

}  // namespace dtperf
