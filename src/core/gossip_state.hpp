#pragma once
// The gossip simulation's state (GossipPredictor::State), shared by its three parts:
// gossip_buckets.cpp (buckets, prices and traffic of one configuration), gossip_exchange.cpp
// (the compute phase and the exchanges: Decent-DP's groups, shared links, SGP and D-PSGD's
// directed pushes) and gossip.cpp (iterations, steady state, results). Private to the engine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "dtperf/contention.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/stats.hpp"
#include "gossip_schedule.hpp"

namespace dtperf {

namespace gossip_internal {

// Decent-DP's mixing per bucket: param.mul_ (2 passes) and add_ (3), then the send
// buffer's copy_ (2) and mul_ (2).
constexpr double kDecentMixPasses = 9.0;
// SGP between the wait and the next send, as its reference implementation does it (over
// one buffer): add the received residual (3 passes), mix (2), copy into the send buffer
// (2) and from there on the gossip stream (2).
constexpr double kSgpMixPasses = 9.0;
// SGP's push-sum weight on the compute chain only: de-bias before forward (2 passes) and
// back to numerators after backward (2). Charged with the optimizer step.
constexpr double kSgpWeightPasses = 4.0;
// D-PSGD's ring average x = (x_left + x + x_right) / 3: read three models, write one.
constexpr double kDpsgdMixPasses = 4.0;

// Simulated iterations: a warm-up of whole periods (at least 8 iterations), then a
// measuring window of two halves of whole periods (at least 4 iterations each); the
// window doubles until its halves give the same mean (1e-9 relative), at most 6 times.
constexpr int kMinWarmupIterations = 8;
constexpr int kMinHalfWindowIterations = 4;
constexpr int kMaxWindows = 7;
constexpr double kSteadyTolerance = 1e-9;

inline int whole_periods(int iterations, int period) { return std::max(1, (iterations + period - 1) / period); }

}  // namespace gossip_internal

struct GossipPredictor::State {
  const ModelSpec& model;
  std::shared_ptr<const CompiledSchedule> schedule;
  GossipAlgorithm algorithm;

  // Per tensor and per bucket (at most one bucket per tensor).
  std::vector<double> backward_s;
  ComputeTimesCache compute_cache;  // fills backward_s
  std::vector<double> bucket_bytes;
  std::vector<double> bucket_backward_s;
  std::vector<double> bucket_step_s;  // bucket-local optimizer step
  std::vector<double> bucket_mix_s;   // mixing the received parameters in
  std::vector<std::size_t> bucket_last_tensor;
  std::size_t buckets = 0;
  // Node-level gossip: the node's gradient all-reduces (DDP buckets), each with the
  // gossip bucket whose hook waits for it, its ready time into that bucket's backward
  // segment (at compute factor 1) and its cost; and per gossip bucket the all-gather of
  // the mixed shards. Empty / 0 for one GPU per replica.
  struct LocalUnit {
    std::size_t bucket = 0;
    double ready_s = 0.0;
    double cost_s = 0.0;
  };
  std::vector<LocalUnit> local_units;
  std::vector<double> bucket_gather_s;
  std::vector<double> local_free_s;  // per class: the node's own stream
  double local_intra_bytes_per_gpu = 0.0;
  // Per placement x bucket: exchange cost, traffic, and the share of the cores a host
  // transport keeps busy while it runs (contention.hpp; 0 unless compute runs on the host).
  std::vector<double> cost_s;
  std::vector<double> host_share;
  std::vector<double> intra_bytes_per_rank;
  std::vector<double> inter_bytes_per_node;
  // Per class: clocks (compute, and one communication stream per link level: PyTorch
  // gives every process group its own NCCL stream, so exchanges inside a node do not
  // queue behind exchanges across nodes, while those crossing nodes share the NICs);
  // per class x bucket: exchange completion and launch times.
  std::vector<double> compute_clock_s;
  std::vector<double> intra_free_s;
  std::vector<double> inter_free_s;
  // Per class: the host share (contention.hpp) of the exchange each stream runs last.
  std::vector<double> intra_share;
  std::vector<double> inter_share;
  std::vector<double> done_s;
  std::vector<double> launch_s;
  // The shared link (NetworkParams::collectives_in_flight > 0): every process group runs
  // its exchanges on its own threads, up to `lanes` at once, so a rank's link carries
  // every exchange in flight on it, served fairly (each of n gets 1/n of the rate). Per
  // class and link level, the jobs on the link; per exchange in flight, its members and
  // latency, so that its end moves when a later exchange slows its transfer.
  struct LinkJob {
    std::uint64_t flight = 0;
    double left_s = 0.0;    // transfer left, at the link's whole rate
    double finish_s = 0.0;  // projected: nothing else arrives
  };
  struct Link {
    double clock_s = 0.0;
    std::vector<LinkJob> jobs;
  };
  struct Flight {
    std::uint64_t id = 0;
    std::size_t bucket = 0;
    std::uint32_t process_group = 0;         // ClassGroup's: whose threads it takes
    const std::uint32_t* members = nullptr;  // classes (ClassGroup's)
    std::uint32_t count = 0;
    bool crosses = false;
    double latency_s = 0.0;
    double settled_s = 0.0;  // the latest finish of its jobs already off their links
    double end_s = 0.0;      // projected
    int live = 0;            // its jobs still on a link
  };
  int lanes = 0;
  // Whether any exchange is slowed beside compute (a contention factor for communication,
  // or a host transport's share of the cores): only then do the ranks' estimated compute
  // ends (compute_end_s) enter an exchange's time.
  bool exchange_stretched = true;
  // Whether any exchange takes a share of the host's cores (then each stream records the
  // share of its last exchange, for the compute beside it).
  bool host_shared = true;
  std::vector<Link> links;                 // per class x level (0: inside, 1: across nodes)
  std::vector<Flight> flights;             // in flight
  std::vector<std::uint64_t> done_flight;  // per bucket x class: the flight done_s holds
  std::vector<double> latency_cell_s;      // per placement x bucket: an exchange's latency
  std::uint64_t next_flight = 1;
  std::vector<std::uint64_t> touched_flights;  // scratch
  std::vector<double> window_start_s;
  std::vector<double> accumulation_sum_s;  // gradient accumulation's compute-only micro-steps
  std::vector<double> forward_sum_s;
  std::vector<double> backward_sum_s;
  std::vector<double> wait_sum_s;
  std::vector<double> compute_end_s;         // per class, within compute_phase: estimated
  std::vector<double> remaining_after_s;     // per bucket: unstretched work after it
  std::vector<double> received_s;            // per class x peer: directed receives' ends
  std::vector<double> directed_done_s;       // per class, within a directed exchange
  std::vector<double> backward_iteration_s;  // per class, within compute_phase
  std::vector<double> wait_iteration_s;      // per class, within compute_phase
  std::vector<double> factor;          // per class: this iteration's compute factor
  std::vector<double> previous_clock_s;  // per class: end of the previous iteration
  std::vector<StepTraffic> traffic;
  // The last measured period, per step x class: how long each iteration took; then per
  // step the mean over ranks, and (duration, ranks) pairs sorted for the quantiles.
  std::vector<double> step_duration_s;
  std::vector<double> step_mean_s;
  std::vector<std::pair<double, double>> step_sorted;
  CanonicalMean mean;
  DurationHistogram durations;
  std::vector<double> idle_per_rank_s;
  GossipResult result;

  State(const ModelSpec& m, std::shared_ptr<const CompiledSchedule> s, GossipAlgorithm a)
      : model(m), schedule(std::move(s)), algorithm(a) {
    const std::size_t tensors = model.tensors.size();
    const auto classes = static_cast<std::size_t>(schedule->classes);
    backward_s.resize(tensors);
    bucket_bytes.resize(tensors);
    bucket_backward_s.resize(tensors);
    bucket_step_s.resize(tensors);
    bucket_mix_s.resize(tensors);
    bucket_last_tensor.resize(tensors);
    bucket_gather_s.resize(tensors);
    remaining_after_s.resize(tensors);
    local_units.reserve(tensors);
    for (auto* v : {&compute_clock_s, &intra_free_s, &inter_free_s, &intra_share, &inter_share, &window_start_s,
                    &accumulation_sum_s, &forward_sum_s, &backward_sum_s, &wait_sum_s, &previous_clock_s,
                    &compute_end_s, &backward_iteration_s, &wait_iteration_s, &local_free_s}) {
      v->resize(classes);
    }
    factor.assign(classes, 1.0);
    plain_groups.reserve(schedule->groups.size());
    std::vector<std::uint32_t> sorted;
    for (const ClassGroup& g : schedule->groups) {
      PlainGroup p;
      p.count = g.count;
      p.placement = g.placement;
      p.level = g.crosses_nodes != 0 ? 1 : 0;
      if (g.count == 2) {
        p.x = schedule->group_classes[g.first];
        p.y = schedule->group_classes[g.first + 1];
      } else {
        // A larger group as runs of consecutive classes (a node's GPUs are consecutive
        // ranks): the exchange reads the latest of each run and writes its end over it.
        const auto* members = schedule->group_classes.data() + g.first;
        sorted.assign(members, members + g.count);
        std::sort(sorted.begin(), sorted.end());
        p.x = static_cast<std::uint32_t>(member_runs.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
          if (i > 0 && sorted[i] == sorted[i - 1] + 1) {
            ++member_runs.back().count;
          } else {
            member_runs.push_back({sorted[i], 1});
          }
        }
        p.y = static_cast<std::uint32_t>(member_runs.size()) - p.x;
      }
      plain_groups.push_back(p);
    }
    // Rounds of pairs on one stream and one placement (every round of most topologies),
    // for exchange_groups_as's tight loop, as runs of pairs (x + i, y + i).
    uniform_rounds.resize(schedule->rounds.size());
    round_first_run.resize(schedule->rounds.size() + 1);
    for (std::size_t r = 0; r < schedule->rounds.size(); ++r) {
      const CompiledRound& round = schedule->rounds[r];
      const PlainGroup* first = plain_groups.data() + round.first_group;
      uniform_rounds[r] = round.group_count > 0 && std::all_of(first, first + round.group_count, [&](const PlainGroup& g) {
                            return g.count == 2 && g.level == first->level && g.placement == first->placement;
                          });
      round_first_run[r] = static_cast<std::uint32_t>(pair_runs.size());
      if (!uniform_rounds[r]) continue;
      for (const PlainGroup* g = first; g != first + round.group_count; ++g) {
        const PairRun* last = pair_runs.size() > round_first_run[r] ? &pair_runs.back() : nullptr;
        if (last != nullptr && g->x == last->x + last->count && g->y == last->y + last->count) {
          ++pair_runs.back().count;
        } else {
          pair_runs.push_back({g->x, g->y, 1});
        }
      }
    }
    round_first_run.back() = static_cast<std::uint32_t>(pair_runs.size());
    find_xor_chains();
    received_s.assign(classes * static_cast<std::size_t>(std::max(schedule->peers, 1)), 0.0);
    directed_peers.resize(classes * static_cast<std::size_t>(std::max(schedule->peers, 1)));
    directed_done_s.resize(classes);
    mean.reserve(classes);
    // done_s and launch_s are per class x bucket: sized once the buckets are known.
    traffic.resize(static_cast<std::size_t>(schedule->period));
    step_duration_s.resize(static_cast<std::size_t>(schedule->period) * classes);
    step_mean_s.resize(static_cast<std::size_t>(schedule->period));
    step_sorted.resize(static_cast<std::size_t>(schedule->period) * classes);
  }

  void make_buckets(const GossipScenario& s, const ComputeTimes& times);
  void make_local_units(const GossipScenario& s, const ComputeTimes& times);
  void price_exchanges(const GossipScenario& s);
  void account_traffic();
  void reset_clocks();
  void iterate(const GossipScenario& s, int iteration, bool measure);
  void compute_phase(int step, bool measure);
  template <bool kStretched>
  void compute_phase_as(int step, bool measure);
  /// Bucket b's compute, wait, mix and step for every class where nothing stretches
  /// compute and no node-level all-reduce runs; fills compute_end_s too.
  /// Undirected schedules start the bucket's exchange progress from the launch in place
  /// (`kInPlace`: `progress` is read as the last iteration's and written as the launch);
  /// directed ones write `launch_s`.
  template <bool kInPlace>
  void bucket_pass(std::size_t b, std::size_t classes, double work_s, double step_s, double mix_s, bool step_first,
                   double* progress, double* launch);
  /// `launched`: the bucket's progress already holds its launch times (bucket_pass did it
  /// in place); otherwise they are copied from launch_s.
  void exchange_bucket_groups(int step, std::size_t b, const double* clock_end, bool launched = false);
  /// exchange_bucket_groups with one stream per link level; `kStretched`: whether an
  /// exchange can be slowed beside compute or take host cores.
  template <bool kStretched>
  void exchange_groups_as(const CompiledStep& st, std::size_t b, const double* clock_end, double* progress);
  /// exchange_bucket_groups on links shared by the exchanges in flight (lanes > 0).
  void exchange_on_lanes(const CompiledStep& st, std::size_t b, const double* clock_end, const double* progress);
  // The schedule's groups as exchange_groups_as reads them, one per ClassGroup in its order:
  // a pair's two classes in place (x, y), a larger group's runs of members (x: the first
  // in member_runs, y: how many); the placement and the stream (0: inside nodes, 1: across).
  struct PlainGroup {
    std::uint32_t x = 0;
    std::uint32_t y = 0;
    std::uint32_t placement = 0;
    std::uint32_t level = 0;
    std::uint32_t count = 0;
  };
  std::vector<PlainGroup> plain_groups;
  std::vector<char> uniform_rounds;  // per round: all pairs, one stream and one placement
  // A larger group's members as runs of consecutive classes [first, first + count).
  struct MemberRun {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
  };
  std::vector<MemberRun> member_runs;  // PlainGroup x: its first run, y: how many
  // A uniform round's pairs as runs: pairs (x + i, y + i) for i < count. In a
  // hypercube-like step (exponential graphs, a torus's columns) a run is a whole block
  // of ranks, which the exchange treats as whole arrays.
  struct PairRun {
    std::uint32_t x = 0;
    std::uint32_t y = 0;
    std::uint32_t count = 0;
  };
  std::vector<PairRun> pair_runs;
  std::vector<std::uint32_t> round_first_run;  // per round (+ 1): its first PairRun
  // Consecutive uniform rounds of one step on one stream, each pairing every class x with
  // x XOR d for its own power of two d (a hypercube's rounds: the static exponential
  // graph). On one stream a pair's members leave a round with their progress and stream
  // both at its end, and a round's end is max(...) + price; rounding is monotone, so
  // max(fl(a + c), fl(b + c)) = fl(max(a, b) + c), and by induction every class leaves the
  // chain at the latest of max(progress, stream) over its coset x XOR span{d} followed by
  // the rounds' prices added in order: the same value, bit for bit, in two passes over
  // the classes instead of one per round (exchange_xor_chain). Chains whose distances'
  // bits are contiguous: their cosets tile blocks of classes.
  struct XorChain {
    std::uint32_t first_round = 0;
    std::uint32_t rounds = 0;
    std::uint32_t mask = 0;   // the OR of the rounds' distances
    std::uint32_t level = 0;  // 0: inside nodes, 1: across
  };
  bool shortcuts = true;  // hypercube chains and pushes as blocks (set_shortcuts)
  std::vector<XorChain> xor_chains;
  std::vector<std::int32_t> chain_from_round;  // per round: the chain it starts, or -1
  std::vector<double> coset_latest_s;          // per coset of a block: exchange_xor_chain's
  void find_xor_chains();
  void exchange_xor_chain(const XorChain& chain, std::size_t b, double* progress);
  void exchange_on_shared_links(const ClassGroup& group, std::size_t b, double start, double stretched_s);
  double lane_free_s(std::uint32_t process_group, double start) const;
  Flight& flight(std::uint64_t id);
  void settle_flight(Flight& f);
  void finish_iteration(bool overlap);
  void exchange_phase_directed(int step);
  /// exchange_phase_directed's pass over the classes; `kStretched`: whether a transfer
  /// can be slowed beside compute or take host cores. `row`: the step's first entry in
  /// the schedule's per-peer arrays.
  template <bool kStretched>
  void exchange_directed_as(std::size_t row);
  // Scratch for exchange_directed_as, per peer of one class.
  struct DirectedPeer {  // 20 bytes: one per class x peer
    std::uint32_t to = 0;
    std::uint32_t from = 0;
    std::uint32_t send_placement = 0;
    std::uint32_t receive_placement = 0;
    bool crosses = false;
  };
  std::vector<DirectedPeer> directed_peers;  // per class x peer, within a directed exchange
  double mean_clock_advance();
  double mean_over_ranks(const std::vector<double>& per_class);
  void prepare(const GossipScenario& s);
  void fill_variability(int iterations);
  void record_step(int step);
  void fill_step_times();
  double forward_s = 0.0;     // one forward pass at compute factor 1 (set by prepare)
  double accumulation_s = 0.0;  // the K - 1 compute-only micro-steps before it
  double compute_work_s = 0.0;  // one iteration's compute at factor 1 (set by prepare)
  // How compute and exchanges slow each other while they overlap (set by prepare; a host
  // transport's CPU time takes cores from compute: contention.hpp).
  Contention contention;
  double overhead_s = 0.0;      // fixed per-iteration overhead (distributed runs)
  /// How long compute work `work_s` of class u takes from its clock beside the exchanges
  /// its streams still run: each stream in flight adds its share (a host transport's CPU
  /// time takes cores) until that stream's last exchange ends (contention.hpp).
  double beside_s(std::size_t u, double work_s) const {
    const double clock = compute_clock_s[u];
    const double intra_until = intra_free_s[u];
    const double inter_until = inter_free_s[u];
    const bool intra_busy = intra_until > clock;
    const bool inter_busy = inter_until > clock;
    if (intra_busy && inter_busy) {
      const bool intra_first = intra_until <= inter_until;
      return stretched_compute_s(work_s, clock, intra_first ? intra_until : inter_until,
                                 contention.compute_beside(intra_share[u] + inter_share[u]),
                                 intra_first ? inter_until : intra_until,
                                 contention.compute_beside(intra_first ? inter_share[u] : intra_share[u]));
    }
    if (intra_busy) return stretched_compute_s(work_s, clock, intra_until, contention.compute_beside(intra_share[u]));
    if (inter_busy) return stretched_compute_s(work_s, clock, inter_until, contention.compute_beside(inter_share[u]));
    return work_s;
  }
  /// How long an exchange of cost `cost` starting at `start` takes when the compute of
  /// the members ends its current iteration at `clock_end` and then runs one more.
  double exchange_s(double cost, double start, double clock_end, double slowdown) const {
    return stretched_compute_s(cost, start, clock_end + compute_work_s, slowdown);
  }
  double single_gpu_s = 0.0;
  void fill_result(const GossipScenario& s, int measured_iterations);
};

}  // namespace dtperf
