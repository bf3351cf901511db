#pragma once
// One entry point that evaluates any training scheme (All-Reduce, a gossip topology, SGP)
// for a model on a cluster, for the analyses that compare schemes, fit a compute term
// to a measurement, attribute a speedup to its causes or search for break-even points.
// Pure: everything it needs comes in the Setup; compiled topology schedules are cached
// per (topology, ranks, node size) inside the Evaluator.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/cluster.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/local_sgd.hpp"
#include "dtperf/memory.hpp"
#include "dtperf/mixing.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/sharded.hpp"
#include "dtperf/variability.hpp"
#include "dtperf/workload.hpp"

namespace dtperf {

/// A training scheme: All-Reduce, Decent-DP over a topology, SGP, or sharded data
/// parallelism (sharded.hpp).
struct Scheme {
  // sgp: overlapped SGP (one-step stale); sgp_sync: SGP that awaits its push in the same
  // iteration; dpsgd: D-PSGD on its static ring (gossip.hpp has the timelines).
  // local_sgd, diloco: groups that synchronise every H steps (local_sgd.hpp), by plain
  // averaging or DiLoCo's Nesterov outer step; the options are the setup's.
  enum class Kind : std::uint8_t { allreduce, gossip, sgp, sgp_sync, dpsgd, sharded, local_sgd, diloco } kind = Kind::allreduce;
  std::string topology;  // for gossip
  Sharding sharding = Sharding::fsdp;  // for sharded
  std::string name() const;  // "all-reduce", "alternating-exp-ring", "sgp", "sgp-sync", "d-psgd", "fsdp"
  static Scheme allreduce() { return {Kind::allreduce, "", Sharding::fsdp}; }
  static Scheme gossip(std::string topology) { return {Kind::gossip, std::move(topology), Sharding::fsdp}; }
  static Scheme sgp() { return {Kind::sgp, "", Sharding::fsdp}; }
  static Scheme sgp_sync() { return {Kind::sgp_sync, "", Sharding::fsdp}; }
  static Scheme dpsgd() { return {Kind::dpsgd, "", Sharding::fsdp}; }
  /// SGP in either form, or D-PSGD: directed whole-model exchanges, not Decent-DP's.
  bool directed_gossip() const { return kind == Kind::sgp || kind == Kind::sgp_sync || kind == Kind::dpsgd; }
  static Scheme sharded(Sharding s) { return {Kind::sharded, "", s}; }
  static Scheme local_sgd() { return {Kind::local_sgd, "", Sharding::fsdp}; }
  static Scheme diloco() { return {Kind::diloco, "", Sharding::fsdp}; }
  bool low_communication() const { return kind == Kind::local_sgd || kind == Kind::diloco; }

  bool operator==(const Scheme&) const = default;
};

/// Parses "all-reduce" (or "allreduce"), "sgp", "sgp-sync", "d-psgd", "zero-1", "zero-2",
/// "fsdp" ("zero-3"), "hsdp", "local-sgd", "diloco", or a topology name; nullopt otherwise.
std::optional<Scheme> parse_scheme(const std::string& name);
/// Every scheme name parse_scheme accepts (aliases aside), All-Reduce first.
std::vector<std::string> scheme_names();

/// The factor switches of the advisor (each "on" is the real world).
struct Factors {
  bool overlap = true;                 // gossip exchanges may run into the next iteration
  bool heterogeneous_links = true;     // intra-node links are faster than the NICs (off:
                                       // as fast as the node's NICs together, with their latency)
  bool variable_compute = true;        // compute times vary between ranks (when modelled)
};

struct Setup {
  ClusterProfile cluster;  // overrides applied
  const ModelSpec* model = nullptr;
  DType dtype = DType::fp32;
  WorkloadOptions workload;
  AllReduceOptions allreduce;
  GossipOptions gossip;
  LocalSgdOptions local_sgd;
  std::span<const std::pair<double, double>> reduction;
  Variability variability;  // none: the deterministic engines
};

/// A prediction's P10-P90 band (fit_runs.hpp: from a fitted profile's uncertainty).
struct Band {
  double p10_s = 0.0;
  double p90_s = 0.0;
};

struct SchemeOutcome {
  Scheme scheme;
  bool available = true;
  std::string unavailable_reason;  // when the topology does not fit the cluster
  std::string unavailable_input = "scheme";  // the input to change (error.hpp's naming)
  IterationResult iteration;
  MemoryBreakdown memory;          // per GPU, against the GPU's memory (memory.hpp)
  std::vector<StepTraffic> steps;  // gossip: per step of the period
  // Gossip without variable compute: each step's iteration time (mean over the ranks) and
  // the p50 / p90 of the ranks' iteration times over a period (gossip.hpp). Every
  // iteration of All-Reduce and sharded schemes is alike: empty, and p50 = p90 = the mean.
  std::vector<double> step_iteration_s;
  double step_p50_s = 0.0;
  double step_p90_s = 0.0;
  std::optional<MixingQuality> mixing;
  std::optional<LocalSgdRound> local_sgd;  // local SGD and DiLoCo: the round
  LocalSgdOptions local_sgd_options;       // and the options it ran with
  int rank_classes = 0;
  // Gossip without variable compute: the iterations its timelines ran to a steady state
  // (warm-up and measured windows) and their places in exchanges per iteration
  // (GossipResult); 0 for schemes that simulate none. What the prediction cost.
  int iterations_simulated = 0;
  double exchange_slots_per_iteration = 0.0;
  // Gossip on a node link shared by more crossing ranks than it has rails: the iteration
  // its ranks approach when they take turns on it (GossipResult); 0 otherwise.
  double node_link_in_turns_s = 0.0;
  int node_link_crossing_ranks = 0;
  // With variable compute: quantiles, idle times (its idle_per_rank_s is left empty; the
  // values are in idle_per_rank_s below, which copies of the outcome keep).
  std::optional<VariabilityOutcome> variability;
  // The simulation of every rank variable compute runs (or, from Evaluator::plan, would
  // run); unset where none does.
  std::optional<SimulationWork> simulation_work;
  std::vector<double> idle_per_rank_s;
  // From a profile fitted to runs of this model: the iteration time's P10-P90 band.
  std::optional<Band> band;
};

class Evaluator {
 public:
  explicit Evaluator(Setup setup);

  const Setup& setup() const { return setup_; }

  /// Evaluates a scheme; `cluster` overrides the setup's cluster (for what-ifs). An
  /// available outcome is finite and non-negative in every number a report prints, or
  /// this throws an InputError naming the scheme and the quantity.
  SchemeOutcome evaluate(const Scheme& scheme, const Factors& factors = {}, bool with_mixing = false);
  SchemeOutcome evaluate_on(const ClusterProfile& cluster, const Scheme& scheme, const Factors& factors = {},
                            bool with_mixing = false);

  /// The outcome up to the simulation of every rank under variable compute: whether the
  /// scheme applies, its memory, and the work that simulation would do
  /// (SchemeOutcome::simulation_work); without one, the whole outcome. For a command's
  /// budget before anything long runs.
  SchemeOutcome plan(const Scheme& scheme, const Factors& factors = {});

  /// How many schemes this evaluator has evaluated (evaluate and evaluate_on calls): what
  /// a search costs, for its tests.
  std::uint64_t evaluations() const { return evaluations_; }

  /// Mixing quality of a topology on `ranks` ranks (cached).
  const MixingQuality& mixing(const std::string& topology, int ranks, int ranks_per_node);
  /// The same as the setup runs the topology: over its ranks, or over its nodes with
  /// node-level gossip (one replica per node).
  const MixingQuality& setup_mixing(const std::string& topology);

  /// The compute scale that makes `scheme` on `nodes` nodes take `measured_iteration_s`
  /// (bisection; the iteration time grows with the scale). Throws InputError when no
  /// scale in [1e-3, 1e3] reaches the measurement.
  double fit_compute_scale(const Scheme& scheme, int nodes, double measured_iteration_s, int gpus_per_node = 0);
  void set_compute_scale(double scale) { setup_.workload.compute_scale = scale; }
  /// Separate forward and backward scales (on top of the compute scale), from a fit.
  void set_compute_scales(double forward, double backward) {
    setup_.workload.forward_scale = forward;
    setup_.workload.backward_scale = backward;
  }
  void set_variability(const Variability& variability) { setup_.variability = variability; }
  void set_local_sgd(const LocalSgdOptions& options) { setup_.local_sgd = options; }
  /// Batch, compression and the rest of the workload (sweeps change them point by point).
  void set_workload(const WorkloadOptions& workload) { setup_.workload = workload; }

 private:
  std::shared_ptr<const CompiledSchedule> schedule(const std::string& topology, int ranks, int ranks_per_node,
                                                   bool per_rank);
  SchemeOutcome evaluate_unchecked(const ClusterProfile& cluster, const Scheme& scheme, const Factors& factors,
                                   bool with_mixing);

  MemoryBreakdown memory(const ClusterProfile& cluster, const ComputeRequest& request, ReplicaScheme scheme,
                         Sharding sharding);

  Setup setup_;
  std::unique_ptr<AllReducePredictor> allreduce_;  // its buffers, reused evaluation after evaluation
  // The last memory estimate with what it was computed from (a fit or a search asks for
  // the same one evaluation after evaluation, with other network parameters).
  struct MemoryKey {
    const ModelSpec* model = nullptr;
    double memory_gib = 0.0;
    int ranks = 0;
    int gpus_per_node = 0;
    DType dtype = DType::fp32;
    ComputeRequest request;
    ReplicaScheme scheme = ReplicaScheme::allreduce;
    AllReduceOptions allreduce;
    Sharding sharding = Sharding::zero1;
    bool operator==(const MemoryKey&) const = default;
  };
  std::uint64_t evaluations_ = 0;
  bool planning_ = false;  // evaluate_unchecked stops before simulating every rank (plan)
  std::optional<std::pair<MemoryKey, MemoryBreakdown>> memory_;
  std::map<std::tuple<std::string, int, int, bool>, std::shared_ptr<const CompiledSchedule>> schedules_;
  // A predictor per schedule merged into rank classes and algorithm, its buffers and
  // compute times reused evaluation after evaluation (a fit or a search predicts the same
  // configuration hundreds of times with other parameters). Per-rank schedules get a
  // predictor per evaluation: their state grows with the ranks, their simulation dwarfs
  // its allocation.
  GossipPredictor& merged_predictor(const std::shared_ptr<const CompiledSchedule>& schedule, GossipAlgorithm algorithm);
  std::map<std::pair<const CompiledSchedule*, GossipAlgorithm>, std::unique_ptr<GossipPredictor>> merged_predictors_;
  std::map<std::tuple<std::string, int, int>, MixingQuality> mixing_;
};

}  // namespace dtperf
