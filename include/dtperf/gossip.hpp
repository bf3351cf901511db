#pragma once
// Decentralized (gossip) data parallelism as Decent-DP runs it ([DEC], MODELS.md section
// 5). Parameters, not gradients, are exchanged, per bucket (25 MiB: Decent-DP's
// bucket_size_in_mb counts MiB; a bucket closes once it holds >= the cap, in gradient-ready
// order). In the gradient hook of a bucket's last tensor, at iteration t:
//   1. wait for the bucket's exchange launched at t-1 (the compute stream stalls);
//   2. mix: the bucket's parameters become the group average (9 memory passes over the
//      bucket: scale and add into the parameters, copy and scale into the send buffer);
//   3. the bucket-local optimizer step;
//   4. launch the bucket's exchange on this step's group: an asynchronous all-reduce on
//      one FIFO communication stream, which completes when every group member has
//      launched it and the stream is free.
// So a bucket's exchange overlaps the rest of backward, the next forward and the next
// backward up to that bucket. Every rank waits only for its own groups: there is no
// global barrier.
//
// Two models of the link, by transport (NetworkParams::collectives_in_flight):
// - One stream per link level (NCCL; the default): exchanges inside a node and across
//   nodes do not queue behind each other (PyTorch gives every process group its own NCCL
//   stream), and the exchanges of one level are served one after another in launch order.
// - A shared link (gloo: 2): every process group runs its collectives on its own threads,
//   up to k at once in launch order, so a rank's link carries every exchange in flight on
//   it, each getting an equal share of the rate; a newcomer slows the exchanges already
//   running, so they end later (the last ends when it would on a stream: the link is as
//   busy either way). An exchange's latency (what it takes for one byte) is not shared.
//   This decides where step t+1's exchanges launch while step t's are in flight: AER on
//   4 ranks of one node each at 100 Mbit/s chains them (each step's pair shares a rank
//   with the next), and on a stream dtperf said 187 ms per iteration where settled runs
//   take 250-265 ms (harness, 2 ms: in a run of 24 untimed and 96 timed iterations the
//   ranks' phases drifted for about 50; runs timed after 3 untimed took 182-233 ms). A fluid
//   simulation of the harness's run (2 cores, fair-shared links, gloo's 2 threads per
//   group) gives 249 ms; the shared link here 261 ms. With one thread per group it gives
//   189 ms and one stream 177-183: it is both together.
//   But the run has two settled regimes, and the delay picks one: at 0.1 ms a run of 60
//   untimed and 48 timed iterations stayed at 190 ms per period throughout (a stream says
//   182, the shared link 263). And gloo's latency: two collectives of one group on a pair
//   at 1 Gbit/s and 2 ms do not hide each other's latency in training as this model has
//   them do (one-peer-exp on 2 x 1: 48.4 ms measured, 41.7 here, 50.1 on a stream). So the
//   validation harness's profiles keep the stream; the shared link is there to ask what a
//   run in the slow regime costs.

// The engine simulates this as a max-plus recursion over whole periods of the topology
// until the mean iteration time is steady, per rank class: ranks the schedule cannot tell
// apart (same compute, same group shapes, group-mates of the same classes, recursively:
// colour refinement) share one timeline, so AER on 1,024 GPUs simulates a handful of
// timelines, not 1,024. The result is exactly what simulating every rank gives.
//
// SGP (stochastic gradient push, Assran et al. 2019), the baseline [DEC] compares against,
// is push-sum over the directed one-peer exponential graph (step k: send to i + 2^k, receive
// from i - 2^k) with one-step overlap: after forward, backward and the optimizer step, a
// rank waits for the message sent to it at the previous step, mixes (x + x_in) / 2 with the
// push-sum weight, and sends its whole model to its next peer.
//
// A directed topology (one-peer-exp-directed, topology.hpp) runs the same directed
// transfers under Decent-DP's semantics: per bucket, each rank sends to one peer and
// receives from another; a link level carries a rank's sends bucket after bucket, and a
// bucket's receive from a peer follows that peer's previous one.
//
// SGP's bookkeeping is charged as the memory passes of its reference implementation
// (GossipDataParallel, overlap mode), each once over the whole model as over one flat
// buffer: between the wait and the next send, add the received residual, mix, copy into
// the send buffer and from there on the gossip stream (9 passes, kSgpMixPasses in
// gossip.cpp); on the compute chain only, de-bias before forward and turn the parameters
// back into push-sum numerators after backward (4 passes, kSgpWeightPasses, charged with
// the optimizer step, which is where they sit in the steady state).
//
// The reference implementation walks the parameter tensors one at a time for each of
// these. Measured on one H100 with PyTorch 2.11 (`python3 validation/sgp_bookkeeping.py
// cuda`), transformer-base's 253 tensors: 10.3 ms per iteration, bound by the host issuing
// 1,518 launches (6.8 us each), against 1.0 ms for the main stream's five ops over one
// flat buffer. Where that time lands was measured in a training loop (`python3
// validation/sgp_timeline.py cuda`: transformer-base, fp16 autocast, AdamW, the network
// replaced by a kernel that holds the gossip stream for a set time, on an H100 whose host
// issued ~13 us per launch): with no transfer, the per-tensor loop made the iteration
// 16-31 ms (median 23) longer than the same loop over one flat buffer, at 781 to 25,000
// tokens; with a transfer 1.5x the plain iteration, the iteration was the transfer plus
// 13.5-17.3 ms (median 15.0) per tensor and plus -0.3-3.9 ms (median 2.4) over one
// buffer. So the flat form behaves as this timeline says (the larger of computation and
// transfer, plus the passes between wait and send), and the per-tensor form adds its
// launches to both chains: to the compute chain (its read of a device flag before forward
// drains the device, so nothing hides them) and to the transfer cycle (the send waits
// for the add, mix and copies issued after the wait).
//
// The per-tensor launches are not charged, because [DEC]'s SGP shows no sign of them: a
// cost of c ms on the compute chain and 2c/3 in the transfer cycle (the split measured
// above) moves dtperf's [DEC] SGP cells (-5.4, +0.6, +2.3 % at 8, 16 and 32 GPUs as
// charged here) by about +1.4, +1.6 and +1.6 % per ms, so the 10-23 ms the reference's
// launches cost would put them 9-40 % too slow. [DEC]'s SGP issues far fewer launches
// than the reference, or hides them.
//
// Non-overlapped SGP ("sgp-sync" among the schemes) is the same with `overlap = false`:
// the push is awaited in the iteration that sent it, so there is no staleness and no
// overlap: T = F + B + step + mix + X.
//
// D-PSGD (Lian et al. 2017) on its static ring: x_i <- (x_{i-1} + x_i + x_{i+1}) / 3 -
// lr * g_i(x_i). Each rank sends its whole model to both neighbours at the start of an
// iteration (right after the previous update), computes the gradient meanwhile, waits
// for both neighbours' models after backward, averages them in (4 memory passes) and
// steps. The two sends run at once where they use different link levels and one after
// another where they share one (both inside a node, or both across nodes with one rank
// per node). In the recursion this is SGP's timeline with the exchange launched at the
// end of an iteration and awaited at the end of the next one's backward, two peers,
// wait-mix-step order: L(t) = L(t-1) + max(F + B, X) + mix + step.
//
// Gradient accumulation (K micro-steps, compute.hpp): the exchange belongs to the optimizer
// step; the K - 1 compute-only micro-steps of the next step run before its forward, so an
// exchange has them to hide behind as well (and slows them by contention while it runs).
//
// For the advisor's factor attribution, `overlap = false` makes every exchange finish
// before its iteration ends (the All-Reduce semantics: overlap with the same backward
// only). (Homogeneous links are a change of the network, made by the Evaluator.)
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/result.hpp"
#include "dtperf/topology.hpp"
#include "dtperf/variability.hpp"
#include "dtperf/workload.hpp"

namespace dtperf {

enum class GossipAlgorithm : std::uint8_t { decent_dp, sgp, dpsgd };

struct GossipOptions {
  double bucket_cap_bytes = kDefaultBucketCapBytes;
  Algorithm algorithm = Algorithm::automatic;  // for the group all-reduces
  bool overlap = true;
  // Node-level (hierarchical) gossip: the GPUs of a node form one replica. The Evaluator
  // then builds the topology over nodes and fills GossipScenario's replica fields.
  bool node_level = false;

  bool operator==(const GossipOptions&) const = default;
};

struct GossipScenario {
  NetworkParams network;
  ComputeParams compute;
  ComputeRequest request;
  GossipOptions options;
  // Node-level gossip (SGP as SlowMo ran it; BlueFog's hierarchical neighbour
  // all-reduce): each rank of the schedule is a node of `replica_gpus` GPUs that keep one
  // replica, and `network` has one rank per node using all of the node's NICs.
  // `replica_network` is one such node. Per iteration, on top of the timeline above:
  //   - the node's GPUs all-reduce their gradients in DDP buckets (`bucket_cap_bytes`),
  //     each launched on the node's own stream as its gradients are ready, so it overlaps
  //     the rest of backward; a gossip bucket's hook waits for the all-reduces of the
  //     gradients it holds (Decent-DP: the same bucket, nothing left to hide behind; SGP:
  //     the whole model after backward, only the tail);
  //   - the exchange between nodes carries each bucket once per node: its G GPUs send
  //     1/G of it each on their own rails, as the node-rank with all NICs does; then
  //     they all-gather the mixed shards inside the node, which the exchange's completion
  //     includes.
  // Throughput and bytes per GPU count the G GPUs of each replica.
  int replica_gpus = 1;
  NetworkParams replica_network;
};

/// Traffic of one step of the period, per direction.
struct StepTraffic {
  double intra_bytes_per_gpu = 0.0;
  double inter_bytes_per_node = 0.0;
};

struct GossipResult {
  IterationResult iteration;
  std::span<const StepTraffic> steps;  // one per step of the period
  int period = 0;
  int rank_classes = 0;           // timelines simulated
  int iterations_simulated = 0;
  // What the timelines compute per simulated iteration, for the price of a prediction
  // (limits.hpp, kMaxFitS): the rank classes' places in the period's exchanges, per
  // iteration (a class in two groups of a step: two; a directed push: a send and a
  // receive per peer).
  double exchange_slots_per_iteration = 0.0;
  bool steady = true;             // the mean iteration time settled
  // Deterministic runs, in the steady state: each step's iteration time (mean over the
  // ranks) and the nearest-rank p50 and p90 of the ranks' iteration times over a period
  // (every rank and step counted once). Periodic schedules alternate fast and slow steps
  // (one-peer-exp crosses nodes only on some), which the mean hides. Empty and 0 with
  // variable compute, whose `variability` holds the distribution.
  std::span<const double> step_iteration_s;
  double step_p50_s = 0.0;
  double step_p90_s = 0.0;
  bool variable = false;          // compute varied: `variability` holds its outcome
  VariabilityOutcome variability;
  // Where some step has more ranks of a node crossing nodes at once than the node has
  // rails (each at its share of the node's link, as the model has them: in phase), the
  // node link's busy time per iteration (its bytes per node over its rate); 0 otherwise.
  // Ranks that take turns on the link instead keep it busy, and where the link is what
  // bounds the iteration, the iteration then approaches this time: a second settled
  // regime that the in-phase timeline cannot reach (docs/VALIDATION.md, the end-to-end
  // grid: one-peer-exp and ring on 2 nodes x 2 ranks at 100 Mbit/s ran 308-314 ms with
  // the link busy throughout, or 327-335 ms in phase).
  double node_link_in_turns_s = 0.0;
  int node_link_crossing_ranks = 0;  // the most ranks of a node crossing at once (when shared)
};

/// The topology compiled for simulation: rank classes, their groups per step and round,
/// and the placement (shape) of every group. Depends only on the topology and node size.
/// `merge_equivalent_ranks = false` keeps one timeline per rank (what the classes must
/// reproduce exactly; also the form variable compute needs).
struct CompiledSchedule;
std::shared_ptr<const CompiledSchedule> compile_schedule(const Topology& topology, bool merge_equivalent_ranks = true);
std::shared_ptr<const CompiledSchedule> compile_sgp_schedule(int ranks, int ranks_per_node,
                                                             bool merge_equivalent_ranks = true);
/// D-PSGD's static ring: every step each rank sends its model to i + 1 and i - 1 (one
/// neighbour with two ranks); period 1.
std::shared_ptr<const CompiledSchedule> compile_dpsgd_schedule(int ranks, int ranks_per_node,
                                                               bool merge_equivalent_ranks = true);
int schedule_classes(const CompiledSchedule& schedule);

/// Evaluates gossip scenarios for one model and topology. Construction compiles the
/// schedule (or takes a compiled one) and sizes the scratch buffers; `predict` then
/// allocates nothing.
class GossipPredictor {
 public:
  GossipPredictor(const ModelSpec& model, std::shared_ptr<const CompiledSchedule> schedule,
                  GossipAlgorithm algorithm = GossipAlgorithm::decent_dp);
  ~GossipPredictor();
  GossipPredictor(const GossipPredictor&) = delete;
  GossipPredictor& operator=(const GossipPredictor&) = delete;

  /// The result stays valid until the next call.
  const GossipResult& predict(const GossipScenario& scenario);

  /// With variable compute: every rank gets its own factor each iteration; only a
  /// step's group waits for its members. Needs a schedule compiled per rank
  /// (`merge_equivalent_ranks = false`). The warm-up lasts at least as long as the
  /// deterministic simulation took to settle; warm-up and measured iterations are rounded
  /// up to whole periods. The result's `iteration` holds the means, `variability` the rest.
  /// With no variability the means equal `predict(scenario)`'s within 1e-9 (the
  /// steadiness tolerance of the deterministic simulation).
  const GossipResult& predict(const GossipScenario& scenario, const Variability& variability);
  /// The same, given `settled`: the deterministic result of this scenario on this
  /// topology (from any schedule of it: rank classes give bit for bit what every rank
  /// gives, stats.hpp), whose iteration time and settling the warm-up reads. A schedule
  /// merged into classes settles at the cost of its few classes instead of every rank.
  const GossipResult& predict(const GossipScenario& scenario, const Variability& variability,
                              const GossipResult& settled);

  /// The work predict(scenario, variability, settled) will do on this topology's per-rank
  /// schedule (variability.hpp), read before it runs, from any schedule of the topology:
  /// the iterations it simulates, warm-up included, and the exchange rounds each rank
  /// takes part in per bucket (a directed push: two per peer, its send and its receive).
  SimulationWork variable_work(const Variability& variability, const GossipResult& settled) const;

  /// Chains of consecutive hypercube rounds (every rank paired with rank XOR 2^k, on one
  /// link level) that the exchange runs as one pass each, with the same values as round by
  /// round: the static exponential graph has two per step, inside nodes and across them.
  int hypercube_chains() const;
  /// Off: every exchange round by round and every push class by class, without the
  /// shortcuts that give the same values in fewer passes (hypercube chains, pushes at one
  /// distance run as blocks). For tests, which compare the two bit for bit.
  void set_shortcuts(bool on);

  /// Bytes held by the simulation state and the compiled schedule (buffer capacities).
  std::size_t memory_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dtperf
