#pragma once
// GPU memory per rank for data-parallel training (All-Reduce and gossip alike: every rank
// holds a full replica), checked against the GPU's memory.
//
//   weights      P x 4 bytes: fp32 master weights (mixed precision keeps them too);
//                P x param_bytes when the model trains in half precision throughout
//   gradients    P x param_bytes
//   optimizer    SGD 0, SGD with momentum 4 bytes per parameter, Adam 8 (two fp32 moments)
//   activations  what autograd keeps from forward for backward, batch x per sample: the
//                operators' saved bytes (workload.hpp, derived for the zoo's models in
//                zoo/builder.hpp from PyTorch's eager operators and checked against PyTorch
//                in validation/activation_memory.py), activations at 2 bytes per element
//                when compute is fp16/bf16, masks and indices as they are; or, for a layer
//                file, the total the collector measured. With recomputation the tensors are
//                cut into ceil(sqrt(n)) segments of consecutive operators (Chen et al.
//                2016): forward keeps each segment's input (the saved bytes of its first
//                operator in forward order) and backward holds one segment's at a time:
//                  kept = sum over segments of saved(first) + max over segments of saved(segment)
//   comm buffers All-Reduce with DDP: the gradient buckets (PyTorch's default
//                gradient_as_bucket_view=False copies gradients into them: P x param_bytes);
//                Horovod: one fusion buffer; gossip: the parameters being exchanged
//                (P x param_bytes), as Decent-DP's per-bucket exchange keeps a copy
//   sharded      over n ranks (sharded.hpp): zero-1 divides the optimizer state by n and
//                keeps one reduce bucket; zero-2 also the gradients; fsdp/hsdp also the
//                fp32 weights, plus two gathered units (the one running and the one
//                prefetched) and one unit's full gradients before its reduce-scatter. A
//                unit is a bucket: max(bucket cap, largest tensor), at most the model.
//   outer state  local SGD keeps the anchor (the model as of the last synchronisation,
//                fp32: P x 4 bytes) and DiLoCo also its outer momentum (P x 4), counted
//                with the optimizer state (local_sgd.hpp); the groups' DDP as All-Reduce
//   reserve      1 GiB for the CUDA context, library workspaces and NCCL's buffers: an
//                allowance typical of PyTorch jobs, not a measurement
//
// A model file with neither saved bytes nor a measured total (a timing log) has
// activations of 0, and the breakdown says so (activations_known).
#include <cstdint>

#include "dtperf/allreduce.hpp"
#include "dtperf/cluster.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/sharded.hpp"
#include "dtperf/units.hpp"
#include "dtperf/workload.hpp"

namespace dtperf {

inline constexpr double kRuntimeReserveBytes = units::GiB;

struct MemoryBreakdown {
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;
  double comm_buffers_bytes = 0.0;
  double reserve_bytes = kRuntimeReserveBytes;
  bool activations_known = true;
  double capacity_bytes = 0.0;  // the GPU's memory; 0: unknown (nothing is checked)

  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + comm_buffers_bytes + reserve_bytes;
  }
  bool fits() const { return capacity_bytes <= 0.0 || total_bytes() <= capacity_bytes; }
};

/// Bytes forward keeps for backward per sample, activations scaled by
/// `activation_scale` (0.5 for 16-bit compute); with `recompute`, the peak under segment
/// checkpointing (see above). 0 when the model's operators carry no saved bytes.
double saved_bytes_per_sample(const ModelSpec& model, double activation_scale, bool recompute);

enum class ReplicaScheme : std::uint8_t { allreduce, gossip, sharded };

/// GiB rounded to 0.1, as reports print them: schemes whose needs round alike are listed
/// together.
double gib_to_a_tenth(double bytes);

/// Bytes per GPU of local SGD's outer state: the fp32 anchor, and DiLoCo's fp32 momentum.
double outer_state_bytes(const ModelSpec& model, bool with_momentum);

/// `sharding` applies to ReplicaScheme::sharded only. One GPU has no data-parallel
/// wrapper: no communication buffers.
MemoryBreakdown memory_per_gpu(const ModelSpec& model, const ClusterProfile& cluster, DType dtype,
                               const ComputeRequest& request, ReplicaScheme scheme, const AllReduceOptions& allreduce,
                               Sharding sharding = Sharding::fsdp);

}  // namespace dtperf
