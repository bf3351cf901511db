#include "dtperf/gossip.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "dtperf/contention.hpp"
#include "dtperf/stats.hpp"
#include "gossip_schedule.hpp"

namespace dtperf {

namespace {

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

int whole_periods(int iterations, int period) { return std::max(1, (iterations + period - 1) / period); }

}  // namespace

struct GossipPredictor::State {
  const ModelSpec& model;
  std::shared_ptr<const CompiledSchedule> schedule;
  GossipAlgorithm algorithm;

  // Per tensor and per bucket (at most one bucket per tensor).
  std::vector<double> backward_s;
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
    const std::size_t cells = schedule->placements.size() * tensors;
    cost_s.resize(cells);
    latency_cell_s.resize(cells);
    host_share.resize(cells);
    intra_bytes_per_rank.resize(cells);
    inter_bytes_per_node.resize(cells);
    for (auto* v : {&compute_clock_s, &intra_free_s, &inter_free_s, &intra_share, &inter_share, &window_start_s,
                    &accumulation_sum_s, &forward_sum_s, &backward_sum_s, &wait_sum_s, &previous_clock_s,
                    &compute_end_s, &backward_iteration_s, &wait_iteration_s, &local_free_s}) {
      v->resize(classes);
    }
    factor.assign(classes, 1.0);
    received_s.assign(classes * static_cast<std::size_t>(std::max(schedule->peers, 1)), 0.0);
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
  void exchange_bucket_groups(int step, std::size_t b, const double* clock_end);
  void exchange_on_shared_links(const ClassGroup& group, std::size_t b, double start, double stretched_s);
  double lane_free_s(std::uint32_t process_group, double start) const;
  Flight& flight(std::uint64_t id);
  void settle_flight(Flight& f);
  void finish_iteration(bool overlap);
  void exchange_phase_directed(int step);
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

void GossipPredictor::State::make_buckets(const GossipScenario& s, const ComputeTimes& times) {
  const ComputeParams& c = s.compute;
  const double bytes_per_param = model.param_bytes;
  const auto close_bucket = [&](double bytes, double backward, std::size_t last_tensor) {
    bucket_bytes[buckets] = bytes;
    bucket_last_tensor[buckets] = last_tensor;
    bucket_backward_s[buckets] = backward;
    const double mix_passes = algorithm == GossipAlgorithm::sgp     ? kSgpMixPasses
                              : algorithm == GossipAlgorithm::dpsgd ? kDpsgdMixPasses
                                                                    : kDecentMixPasses;
    bucket_step_s[buckets] = optimizer_step_s(c, s.request.optimizer, bytes / bytes_per_param, model.param_bytes);
    if (algorithm == GossipAlgorithm::sgp) bucket_step_s[buckets] += kSgpWeightPasses * bytes / c.memory_bytes_per_s;
    bucket_mix_s[buckets] = c.kernel_overhead_s + mix_passes * bytes / c.memory_bytes_per_s;
    ++buckets;
  };
  buckets = 0;
  double bytes = 0.0;
  double backward = 0.0;
  const std::size_t n = model.tensors.size();
  for (std::size_t i = 0; i < n; ++i) {
    bytes += static_cast<double>(model.tensors[i].params) * bytes_per_param;
    backward += times.backward_s[i];
    // SGP and D-PSGD send the whole model as one message.
    const bool whole_model = algorithm != GossipAlgorithm::decent_dp;
    const bool close = whole_model ? i + 1 == n : (bytes >= s.options.bucket_cap_bytes || i + 1 == n);
    if (close) {
      close_bucket(bytes, backward, i);
      bytes = 0.0;
      backward = 0.0;
    }
  }
}

void GossipPredictor::State::make_local_units(const GossipScenario& s, const ComputeTimes& times) {
  local_units.clear();
  local_intra_bytes_per_gpu = 0.0;
  std::fill(bucket_gather_s.begin(), bucket_gather_s.end(), 0.0);
  if (s.replica_gpus <= 1) return;
  const GroupShape node{1, s.replica_gpus, 0};
  const std::size_t n = model.tensors.size();
  std::size_t bucket = 0;
  double into_bucket_s = 0.0;  // backward time since the gossip bucket began
  double unit_bytes = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    unit_bytes += static_cast<double>(model.tensors[i].params) * model.param_bytes;
    into_bucket_s += times.backward_s[i];
    const bool bucket_closes = i == bucket_last_tensor[bucket];
    if (unit_bytes >= s.options.bucket_cap_bytes || bucket_closes) {
      const CollectiveCost c = allreduce_cost(s.replica_network, node, unit_bytes, s.options.algorithm);
      local_units.push_back({bucket, into_bucket_s, c.time_s});
      local_intra_bytes_per_gpu += c.intra_bytes_per_rank;
      unit_bytes = 0.0;
    }
    if (bucket_closes && bucket + 1 < buckets) {
      ++bucket;
      into_bucket_s = 0.0;
    }
  }
  for (std::size_t b = 0; b < buckets; ++b) {
    const CollectiveCost c = collective_cost(s.replica_network, node, Collective::all_gather, bucket_bytes[b]);
    bucket_gather_s[b] = c.time_s;
    local_intra_bytes_per_gpu += c.intra_bytes_per_rank;
  }
}

void GossipPredictor::State::price_exchanges(const GossipScenario& s) {
  const NetworkParams& net = s.network;
  const std::size_t placements = schedule->placements.size();
  for (std::size_t p = 0; p < placements; ++p) {
    const GroupShape shape = schedule->placements[p].shape();
    // The shared link's latency: the part no other exchange slows, the group's cost for one byte.
    const double one_byte_s = lanes > 0 ? allreduce_cost(net, shape, 1.0, s.options.algorithm).time_s : 0.0;
    for (std::size_t b = 0; b < buckets; ++b) {
      const CollectiveCost cost = schedule->directed ? pair_send_cost(net, shape, bucket_bytes[b])
                                                     : allreduce_cost(net, shape, bucket_bytes[b], s.options.algorithm);
      const std::size_t cell = p * buckets + b;
      cost_s[cell] = cost.time_s + bucket_gather_s[b];
      if (lanes > 0) latency_cell_s[cell] = std::min(cost_s[cell], one_byte_s + bucket_gather_s[b]);
      host_share[cell] = contention.host_share(cost, shape.ranks_per_node, cost_s[cell]);
      intra_bytes_per_rank[cell] = cost.intra_bytes_per_rank;
      inter_bytes_per_node[cell] = cost.inter_bytes_per_node;
    }
  }
}

void GossipPredictor::State::account_traffic() {
  const CompiledSchedule& sc = *schedule;
  std::fill(traffic.begin(), traffic.end(), StepTraffic{});
  for (const PlacementCount& count : sc.counts) {
    const Placement& place = sc.placements[count.placement];
    // Directed transfers count once per sending rank; a group counts its members and
    // the nodes it spans.
    const double members = sc.directed ? 1.0 : place.size;
    const double nodes = sc.directed ? (place.nodes > 1 ? 1.0 : 0.0) : place.nodes;
    for (std::size_t b = 0; b < buckets; ++b) {
      const std::size_t cell = count.placement * buckets + b;
      traffic[count.step].intra_bytes_per_gpu += count.groups * members * intra_bytes_per_rank[cell];
      traffic[count.step].inter_bytes_per_node += count.groups * nodes * inter_bytes_per_node[cell];
    }
  }
  const double ranks = sc.ranks;
  const double node_count = static_cast<double>(sc.ranks) / sc.ranks_per_node;
  for (StepTraffic& t : traffic) {
    t.intra_bytes_per_gpu = t.intra_bytes_per_gpu / ranks + local_intra_bytes_per_gpu;
    t.inter_bytes_per_node /= node_count;
  }
}

void GossipPredictor::State::reset_clocks() {
  for (auto* v : {&compute_clock_s, &intra_free_s, &inter_free_s, &intra_share, &inter_share, &accumulation_sum_s,
                  &forward_sum_s, &backward_sum_s, &wait_sum_s, &local_free_s, &received_s}) {
    std::fill(v->begin(), v->end(), 0.0);
  }
  std::fill(done_s.begin(), done_s.end(), 0.0);
  std::fill(launch_s.begin(), launch_s.end(), 0.0);
  for (Link& l : links) {
    l.clock_s = 0.0;
    l.jobs.clear();
  }
  flights.clear();
  std::fill(done_flight.begin(), done_flight.end(), 0);
  next_flight = 1;
}

// Bucket by bucket, every class in turn: a class's own arithmetic is the same as rank by
// rank (so the values are too), but consecutive classes are independent, which keeps the
// processor busy instead of waiting on one class's chain of additions, and every array is
// walked in order.
//
// A group exchange of bucket b starts once every member has launched it, so it is priced
// as soon as every class has passed bucket b: the backward segments of the later buckets
// then see it in flight (a host transport's CPU share slows them, and the exchange itself
// runs x its comm factor beside them). Directed exchanges (SGP: one bucket) follow the phase.
void GossipPredictor::State::compute_phase(int step, bool measure) {
  // Beside exchanges over a host transport, compute also loses cores to them.
  const std::size_t classes = compute_clock_s.size();
  double* clock = compute_clock_s.data();
  double* backward = backward_iteration_s.data();
  double* wait = wait_iteration_s.data();
  const double* f = factor.data();
  for (std::size_t u = 0; u < classes; ++u) {
    // Gradient accumulation: the K - 1 micro-steps before the last only compute, beside
    // whatever exchange is still running (more time for it to hide behind).
    if (accumulation_s > 0.0) {
      const double accumulation = beside_s(u, f[u] * accumulation_s);
      clock[u] += accumulation;
      if (measure) accumulation_sum_s[u] += accumulation;
    }
    const double forward = beside_s(u, f[u] * forward_s);
    clock[u] += forward;
    if (measure) forward_sum_s[u] += forward;
    backward[u] = 0.0;
    wait[u] = 0.0;
  }
  // Decent-DP: wait, mix, step. SGP (one bucket, the whole model): step, wait, mix.
  const bool step_first = algorithm == GossipAlgorithm::sgp;
  std::size_t next_unit = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const double work_s = bucket_backward_s[b];
    const double step_s = bucket_step_s[b];
    const double mix_s = bucket_mix_s[b];
    const double* done = done_s.data() + b * classes;
    double* launch = launch_s.data() + b * classes;
    for (std::size_t u = 0; u < classes; ++u) {
      const double segment = beside_s(u, f[u] * work_s);
      double c = clock[u] + segment;
      backward[u] += segment;
      // Node-level: the node's gradient all-reduces of this bucket run on its own stream
      // from their ready times (scaled as the segment was stretched); the hook waits.
      for (std::size_t k = next_unit; k < local_units.size() && local_units[k].bucket == b; ++k) {
        const double ready = clock[u] + (work_s > 0.0 ? local_units[k].ready_s * segment / work_s : 0.0);
        local_free_s[u] = std::max(ready, local_free_s[u]) + local_units[k].cost_s;
      }
      if (!local_units.empty()) {
        const double reduced = std::max(c, local_free_s[u]);
        wait[u] += reduced - c;
        c = reduced;
      }
      if (step_first) c += step_s;
      // Branch-free (whether a rank waits is random under variable compute); the same
      // values as `if (done > c) { wait += done - c; c = done; }`.
      const double resumed = std::max(c, done[u]);
      wait[u] += resumed - c;
      c = resumed + mix_s;
      if (!step_first) c += step_s;
      clock[u] = launch[u] = c;
    }
    while (next_unit < local_units.size() && local_units[next_unit].bucket == b) ++next_unit;
    if (!schedule->directed) {
      // The compute an exchange overlaps ends, as estimated, after the unstretched rest of
      // this iteration (stretched_compute_s's rule).
      double* end = compute_end_s.data();
      for (std::size_t u = 0; u < classes; ++u) end[u] = clock[u] + f[u] * remaining_after_s[b] + overhead_s;
      exchange_bucket_groups(step, b, end);
    }
  }
  if (overhead_s > 0.0) {
    for (std::size_t u = 0; u < classes; ++u) clock[u] += overhead_s;
  }
  if (!measure) return;
  for (std::size_t u = 0; u < classes; ++u) {
    backward_sum_s[u] += backward[u];
    wait_sum_s[u] += wait[u];
  }
}

// Bucket b of step `step`: the rounds run one after the other; a group starts when every
// member has got there (launched the bucket, or finished its previous round: its progress,
// kept in `done`) and the stream of the link it uses is free. Groups of one round are
// disjoint. `clock_end`: per class, when its compute of this iteration ends (estimated).
void GossipPredictor::State::exchange_bucket_groups(int step, std::size_t b, const double* clock_end) {
  const CompiledSchedule& sc = *schedule;
  const std::size_t classes = compute_clock_s.size();
  const CompiledStep& st = sc.steps[static_cast<std::size_t>(step)];
  const ClassGroup* groups = sc.groups.data();
  const std::uint32_t* group_classes = sc.group_classes.data();
  const double* launch = launch_s.data() + b * classes;
  double* progress = done_s.data() + b * classes;
  std::copy(launch, launch + classes, progress);
  for (std::uint32_t r = st.first_round; r < st.first_round + st.round_count; ++r) {
    const CompiledRound& round = sc.rounds[r];
    for (std::uint32_t g = round.first_group; g < round.first_group + round.group_count; ++g) {
      const ClassGroup& group = groups[g];
      double* stream = group.crosses_nodes ? inter_free_s.data() : intra_free_s.data();
      const std::size_t cell = group.placement * buckets + b;
      const double share = host_share[cell];
      const double slowdown = contention.exchange_beside_compute(share);
      double* stream_share = group.crosses_nodes ? inter_share.data() : intra_share.data();
      const std::uint32_t* members = group_classes + group.first;
      const double cost = cost_s[cell];
      if (lanes > 0) {
        double start = 0.0;
        double last_end = 0.0;
        for (std::uint32_t m = 0; m < group.count; ++m) {
          start = std::max(start, progress[members[m]]);
          last_end = std::max(last_end, clock_end[members[m]]);
        }
        start = lane_free_s(group.process_group, start);
        const double stretched = slowdown == 1.0 ? cost : exchange_s(cost, start, last_end, slowdown);
        exchange_on_shared_links(group, b, start, stretched);
        for (std::uint32_t m = 0; m < group.count; ++m) stream_share[members[m]] = share;
        continue;
      }
      if (group.count == 2) {  // pairs: most groups of most topologies
        const std::uint32_t x = members[0];
        const std::uint32_t y = members[1];
        const double start = std::max(std::max(progress[x], stream[x]), std::max(progress[y], stream[y]));
        const double end =
            start + (slowdown == 1.0 ? cost : exchange_s(cost, start, std::max(clock_end[x], clock_end[y]), slowdown));
        progress[x] = stream[x] = progress[y] = stream[y] = end;
        stream_share[x] = stream_share[y] = share;
        continue;
      }
      double start = 0.0;
      double last_end = 0.0;
      for (std::uint32_t m = 0; m < group.count; ++m) {
        start = std::max({start, progress[members[m]], stream[members[m]]});
        last_end = std::max(last_end, clock_end[members[m]]);
      }
      const double end = start + (slowdown == 1.0 ? cost : exchange_s(cost, start, last_end, slowdown));
      for (std::uint32_t m = 0; m < group.count; ++m) {
        progress[members[m]] = stream[members[m]] = end;
        stream_share[members[m]] = share;
      }
    }
  }
}

namespace {

// Serves a link's jobs fairly from its clock to `t` (each of n gets 1/n of the rate);
// `finished(job)` for each job done on the way. A time before the clock leaves it (a
// later exchange is then served from the clock).
template <typename Job, typename Finished>
void serve_until(std::vector<Job>& jobs, double& clock_s, double t, Finished&& finished) {
  double elapsed = t - clock_s;
  if (elapsed <= 0.0) return;
  clock_s = t;
  while (elapsed > 0.0 && !jobs.empty()) {
    double least = jobs.front().left_s;
    for (const Job& j : jobs) least = std::min(least, j.left_s);
    const double n = static_cast<double>(jobs.size());
    const double served = std::min(least, elapsed / n);
    elapsed -= served * n;
    for (Job& j : jobs) j.left_s -= served;
    if (served < least) break;
    std::erase_if(jobs, [&](const Job& j) {
      if (j.left_s > least * 1e-12) return false;
      finished(j);
      return true;
    });
  }
}

// When each job ends if nothing else arrives: by then every job has been served as much
// as it, or all it needed: finish = clock + sum over jobs of min(left, own left).
template <typename Job>
void project(std::vector<Job>& jobs, double clock_s) {
  for (Job& j : jobs) {
    double served = 0.0;
    for (const Job& k : jobs) served += std::min(k.left_s, j.left_s);
    j.finish_s = clock_s + served;
  }
}

}  // namespace

GossipPredictor::State::Flight& GossipPredictor::State::flight(std::uint64_t id) {
  for (Flight& f : flights) {
    if (f.id == id) return f;
  }
  throw std::logic_error("gossip: an exchange in flight was lost");
}

// A flight's end: its jobs' latest projected finish, plus its latency; written where
// done_s still holds it (a member's later exchange of the bucket has replaced it there).
void GossipPredictor::State::settle_flight(Flight& f) {
  const std::uint64_t id = f.id;
  const std::size_t classes = compute_clock_s.size();
  double finish = f.settled_s;
  for (std::uint32_t m = 0; m < f.count; ++m) {
    for (const LinkJob& j : links[2 * f.members[m] + (f.crosses ? 1 : 0)].jobs) {
      if (j.flight == id) finish = std::max(finish, j.finish_s);
    }
  }
  const double end = finish + f.latency_s;
  f.end_s = end;
  double* stream = f.crosses ? inter_free_s.data() : intra_free_s.data();
  for (std::uint32_t m = 0; m < f.count; ++m) {
    const std::size_t cell = f.bucket * classes + f.members[m];
    if (done_flight[cell] == id) done_s[cell] = end;
    stream[f.members[m]] = std::max(stream[f.members[m]], end);
  }
}

// The earliest time from `start` when a process group has a lane free: it runs at most
// `lanes` collectives at once, in launch order (its earlier ones, of this step's buckets
// or a previous step's, take lanes until their projected ends).
double GossipPredictor::State::lane_free_s(std::uint32_t process_group, double start) const {
  for (;;) {
    int busy = 0;
    double first_free = 0.0;
    for (const Flight& f : flights) {
      if (f.process_group == process_group && f.end_s > start) {
        first_free = busy == 0 ? f.end_s : std::min(first_free, f.end_s);
        ++busy;
      }
    }
    if (busy < lanes) return start;
    start = first_free;
  }
}

// Puts one exchange on its members' links from `start`: its transfer (what it takes
// alone, less its latency) joins the jobs on each member's link, every link's jobs are
// projected again, and every exchange on those links gets its end again: a newcomer
// slows the exchanges already in flight, which one-at-a-time streams never do.
void GossipPredictor::State::exchange_on_shared_links(const ClassGroup& group, std::size_t b, double start,
                                                      double stretched_s) {
  const std::size_t classes = compute_clock_s.size();
  const std::size_t cell = group.placement * buckets + b;
  const std::uint32_t* members = schedule->group_classes.data() + group.first;
  const bool crosses = group.crosses_nodes != 0;
  const double latency = latency_cell_s[cell];
  const std::uint64_t id = next_flight++;
  Flight f;
  f.id = id;
  f.bucket = b;
  f.process_group = group.process_group;
  f.members = members;
  f.count = group.count;
  f.crosses = crosses;
  f.latency_s = latency;
  f.settled_s = start;
  const double transfer = std::max(0.0, stretched_s - latency);
  for (std::uint32_t m = 0; m < group.count; ++m) done_flight[b * classes + members[m]] = id;
  if (schedule->placements[group.placement].size < 2 || transfer <= 0.0) {
    settle_flight(f);  // no transfer: its latency from the start
    return;
  }
  std::vector<std::uint64_t>& touched = touched_flights;
  touched.clear();
  for (std::uint32_t m = 0; m < group.count; ++m) {  // the members' classes, each once
    const std::uint32_t u = members[m];
    Link& link = links[2 * u + (crosses ? 1 : 0)];
    serve_until(link.jobs, link.clock_s, start, [&](const LinkJob& j) {
      Flight& done = flight(j.flight);
      done.settled_s = std::max(done.settled_s, j.finish_s);
      --done.live;
    });
    link.jobs.push_back({id, transfer, 0.0});
    ++f.live;
    project(link.jobs, link.clock_s);
    for (const LinkJob& j : link.jobs) touched.push_back(j.flight);
  }
  // Done exchanges leave once their latency has passed too (they no longer hold a lane).
  std::erase_if(flights, [&](const Flight& x) { return x.live == 0 && x.end_s <= start; });
  flights.push_back(f);
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (const std::uint64_t t : touched) settle_flight(flight(t));
}

void GossipPredictor::State::exchange_phase_directed(int step) {
  const CompiledSchedule& sc = *schedule;
  const std::size_t classes = compute_clock_s.size();
  const auto peers = static_cast<std::size_t>(sc.peers);
  const std::size_t row = static_cast<std::size_t>(step) * classes * peers;
  for (std::size_t u = 0; u < classes; ++u) {
    // A transfer starts once the sender has launched it and the receiver has posted its
    // receive (at its own launch); sends and receives run at once (full duplex). A rank's
    // sends over one link level (inside the node, across nodes) go one after another: its
    // link carries them all, bucket after bucket; different levels run side by side. A
    // bucket's receive from a peer follows that peer's previous bucket.
    // The link levels carry on from the previous iteration's buckets.
    double intra_free = std::max(launch_s[u], intra_free_s[u]);
    double inter_free = std::max(launch_s[u], inter_free_s[u]);
    double done = launch_s[u];
    double* received = received_s.data() + u * peers;  // per peer, the last receive's end
    for (std::size_t b = 0; b < buckets; ++b) {
      const double* launch = launch_s.data() + b * classes;
      intra_free = std::max(intra_free, launch[u]);
      inter_free = std::max(inter_free, launch[u]);
      double bucket_done = launch[u];
      for (std::size_t j = 0; j < peers; ++j) {
        const std::size_t i = row + u * peers + j;
        const auto to = static_cast<std::size_t>(sc.send_to[i]);
        const auto from = static_cast<std::size_t>(sc.receive_from[i]);
        const std::uint32_t out = sc.send_placement[i];
        const bool send_crosses = sc.placements[out].nodes > 1;
        double& level = send_crosses ? inter_free : intra_free;
        const double send_start = std::max(level, launch[to]);
        const double receive_start = std::max({launch[from], launch[u], received[j]});
        const std::size_t send_cell = out * buckets + b;
        const std::size_t receive_cell = sc.receive_placement[i] * buckets + b;
        const double send_cost = cost_s[send_cell];
        const double receive_cost = cost_s[receive_cell];
        const double send_factor = contention.exchange_beside_compute(host_share[send_cell]);
        const double receive_factor = contention.exchange_beside_compute(host_share[receive_cell]);
        (send_crosses ? inter_share : intra_share)[u] = host_share[send_cell];
        level = send_start +
                exchange_s(send_cost, send_start, std::max(compute_clock_s[u], compute_clock_s[to]), send_factor);
        received[j] = receive_start + exchange_s(receive_cost, receive_start,
                                                 std::max(compute_clock_s[from], compute_clock_s[u]), receive_factor);
        bucket_done = std::max({bucket_done, level, received[j]});
      }
      done_s[b * classes + u] = bucket_done;
      done = std::max(done, bucket_done);
    }
    intra_free_s[u] = intra_free;
    inter_free_s[u] = done;
  }
}

// Without overlap across iterations, an iteration ends only when all of its exchanges
// are done (what All-Reduce does).
void GossipPredictor::State::finish_iteration(bool overlap) {
  if (overlap) return;
  const std::size_t classes = compute_clock_s.size();
  for (std::size_t u = 0; u < classes; ++u) {
    const double all_done = done_s[(buckets - 1) * classes + u];
    if (all_done > compute_clock_s[u]) {
      wait_sum_s[u] += all_done - compute_clock_s[u];
      compute_clock_s[u] = all_done;
    }
  }
}

void GossipPredictor::State::iterate(const GossipScenario& s, int iteration, bool measure) {
  const int step = iteration % schedule->period;
  compute_phase(step, measure);
  if (schedule->directed) exchange_phase_directed(step);
  finish_iteration(s.options.overlap);
}

// Means over ranks are canonical (equal values merged, summed in order), so a class of
// ranks and the same ranks simulated one by one give the same mean.
double GossipPredictor::State::mean_clock_advance() {
  mean.clear();
  for (std::size_t u = 0; u < compute_clock_s.size(); ++u) {
    mean.add(compute_clock_s[u] - window_start_s[u], schedule->class_size[u]);
  }
  return mean.mean();
}

double GossipPredictor::State::mean_over_ranks(const std::vector<double>& per_class) {
  mean.clear();
  for (std::size_t u = 0; u < per_class.size(); ++u) mean.add(per_class[u], schedule->class_size[u]);
  return mean.mean();
}

void GossipPredictor::State::fill_result(const GossipScenario& s, int measured) {
  const CompiledSchedule& sc = *schedule;
  IterationResult& r = result.iteration;
  r = IterationResult{};
  const double per_iteration = 1.0 / measured;
  r.iteration_s = mean_clock_advance() * per_iteration;
  r.accumulation_s = mean_over_ranks(accumulation_sum_s) * per_iteration;
  r.forward_s = mean_over_ranks(forward_sum_s) * per_iteration;
  r.backward_s = mean_over_ranks(backward_sum_s) * per_iteration;
  r.exposed_comm_s = mean_over_ranks(wait_sum_s) * per_iteration;
  r.overhead_s = overhead_s;
  for (std::size_t b = 0; b < buckets; ++b) r.optimizer_s += bucket_step_s[b] + bucket_mix_s[b];

  // Busy times from the schedule: what each rank's stream (and crossing NICs) carry,
  // averaged over the period and the ranks.
  double busy = 0.0;
  double nic_busy = 0.0;
  for (const PlacementCount& count : sc.counts) {
    const Placement& place = sc.placements[count.placement];
    const double ranks_in = sc.directed ? count.groups : count.groups * place.size;
    for (std::size_t b = 0; b < buckets; ++b) {
      const double t = cost_s[count.placement * buckets + b] * ranks_in;
      busy += t;
      if (place.nodes > 1) nic_busy += t;
    }
  }
  r.comm_busy_s = busy / (sc.ranks * sc.period);
  r.nic_busy_s = nic_busy / (sc.ranks * sc.period);
  for (const StepTraffic& t : traffic) {
    r.intra_bytes_per_gpu += t.intra_bytes_per_gpu / sc.period;
    r.inter_bytes_per_node += t.inter_bytes_per_node / sc.period;
  }
  const int gpus_per_node = sc.ranks_per_node * s.replica_gpus;
  r.inter_bytes_per_gpu = r.inter_bytes_per_node / gpus_per_node;
  const bool multi_node = sc.ranks > sc.ranks_per_node;
  r.nic_utilization = multi_node ? r.inter_bytes_per_node / (s.network.nics_per_node * s.network.nic_line_bytes_per_s *
                                                               r.iteration_s)
                                 : 0.0;
  r.single_gpu_iteration_s = single_gpu_s;
  r.throughput_samples_per_s = sc.ranks * s.replica_gpus * s.request.samples_per_gpu_per_step() / r.iteration_s;
  r.scaling_factor = r.single_gpu_iteration_s / r.iteration_s;
  r.buckets = static_cast<int>(buckets);
  result.steps = traffic;
  result.period = sc.period;
  result.rank_classes = sc.classes;
}


void GossipPredictor::State::prepare(const GossipScenario& s) {
  ComputeTimes times;
  times.backward_s = backward_s;
  compute_times(model, s.compute, s.request, times);
  forward_s = times.forward_s;
  accumulation_s = times.accumulation_s;
  single_gpu_s = times.iteration_s();
  make_buckets(s, times);
  make_local_units(s, times);
  const bool distributed = s.network.ranks() > 1;
  contention = contention_beside_compute(s.compute, s.network);
  overhead_s = distributed ? s.compute.iteration_overhead_s +
                                 (s.network.nodes > 1 ? s.compute.cross_node_overhead_s : 0.0)
                           : 0.0;
  compute_work_s = times.accumulation_s + times.forward_s;
  for (std::size_t b = 0; b < buckets; ++b) compute_work_s += bucket_backward_s[b] + bucket_step_s[b] + bucket_mix_s[b];
  double after = 0.0;
  for (std::size_t b = buckets; b-- > 0;) {
    remaining_after_s[b] = after;
    after += bucket_backward_s[b] + bucket_step_s[b] + bucket_mix_s[b];
  }
  const std::size_t cells = compute_clock_s.size() * buckets;
  if (done_s.size() != cells) {  // allocates only when the bucket count changes
    done_s.assign(cells, 0.0);
    launch_s.assign(cells, 0.0);
  }
  lanes = schedule->directed ? 0 : s.network.collectives_in_flight;
  if (lanes > 0) {
    links.resize(2 * compute_clock_s.size());
    done_flight.resize(cells);
  }
  price_exchanges(s);
  account_traffic();
  reset_clocks();
}

void GossipPredictor::State::record_step(int step) {
  const std::size_t classes = compute_clock_s.size();
  double* row = step_duration_s.data() + static_cast<std::size_t>(step) * classes;
  for (std::size_t u = 0; u < classes; ++u) row[u] = compute_clock_s[u] - previous_clock_s[u];
}

// Per step the mean over ranks; over the period the nearest-rank quantiles of the ranks'
// iteration times, every rank and step counted once (a class counts its ranks).
void GossipPredictor::State::fill_step_times() {
  const std::size_t classes = compute_clock_s.size();
  const auto period = static_cast<std::size_t>(schedule->period);
  double total = 0.0;
  for (std::size_t k = 0; k < period; ++k) {
    mean.clear();
    for (std::size_t u = 0; u < classes; ++u) {
      const double d = step_duration_s[k * classes + u];
      mean.add(d, schedule->class_size[u]);
      step_sorted[k * classes + u] = {d, schedule->class_size[u]};
      total += schedule->class_size[u];
    }
    step_mean_s[k] = mean.mean();
  }
  std::sort(step_sorted.begin(), step_sorted.end());
  const auto quantile = [&](double q) {
    double below = 0.0;
    for (const auto& [duration, ranks] : step_sorted) {
      below += ranks;
      if (below >= q * total * (1.0 - 1e-12)) return duration;
    }
    return step_sorted.back().first;
  };
  result.step_iteration_s = step_mean_s;
  result.step_p50_s = quantile(0.50);
  result.step_p90_s = quantile(0.90);
}

void GossipPredictor::State::fill_variability(int iterations) {
  VariabilityOutcome& out = result.variability;
  out.iteration = result.iteration;
  out.iteration_p50_s = durations.quantile(0.50);
  out.iteration_p99_s = durations.quantile(0.99);
  out.iterations = iterations;
  const double per_iteration = 1.0 / iterations;
  for (std::size_t u = 0; u < wait_sum_s.size(); ++u) idle_per_rank_s[u] = wait_sum_s[u] * per_iteration;
  const auto least = std::min_element(idle_per_rank_s.begin(), idle_per_rank_s.end());
  out.idle_min_s = *least;
  out.straggler_rank = static_cast<int>(least - idle_per_rank_s.begin());
  out.idle_max_s = *std::max_element(idle_per_rank_s.begin(), idle_per_rank_s.end());
  out.idle_mean_s = result.iteration.exposed_comm_s;
  out.idle_per_rank_s = idle_per_rank_s;
}

GossipPredictor::GossipPredictor(const ModelSpec& model, std::shared_ptr<const CompiledSchedule> schedule,
                                 GossipAlgorithm algorithm)
    : state_(std::make_unique<State>(model, std::move(schedule), algorithm)) {}

GossipPredictor::~GossipPredictor() = default;

namespace {
template <typename T>
std::size_t bytes_of(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
}  // namespace

std::size_t GossipPredictor::memory_bytes() const {
  const State& st = *state_;
  std::size_t total = 0;
  total += bytes_of(st.bucket_last_tensor);
  for (const auto* v : {&st.backward_s, &st.bucket_bytes, &st.bucket_backward_s, &st.bucket_step_s, &st.bucket_mix_s,
                        &st.cost_s, &st.host_share, &st.intra_bytes_per_rank, &st.inter_bytes_per_node,
                        &st.compute_clock_s, &st.intra_free_s, &st.inter_free_s, &st.intra_share, &st.inter_share,
                        &st.done_s, &st.launch_s,
                        &st.window_start_s, &st.accumulation_sum_s, &st.forward_sum_s, &st.backward_sum_s, &st.wait_sum_s, &st.factor,
                        &st.previous_clock_s, &st.idle_per_rank_s, &st.compute_end_s, &st.backward_iteration_s,
                        &st.wait_iteration_s, &st.step_duration_s, &st.step_mean_s, &st.bucket_gather_s, &st.remaining_after_s,
                        &st.local_free_s, &st.latency_cell_s}) {
    total += bytes_of(*v);
  }
  total += bytes_of(st.done_flight) + bytes_of(st.links) + bytes_of(st.flights) + bytes_of(st.touched_flights);
  for (const auto& link : st.links) total += bytes_of(link.jobs);
  const CompiledSchedule& sc = *st.schedule;
  total += bytes_of(sc.class_of_rank) + bytes_of(sc.class_size) + bytes_of(sc.placements) + bytes_of(sc.steps) +
           bytes_of(sc.rounds) + bytes_of(sc.groups) + bytes_of(sc.group_classes) + bytes_of(sc.counts) +
           bytes_of(sc.send_to) + bytes_of(sc.receive_from) + bytes_of(sc.send_placement) +
           bytes_of(sc.receive_placement);
  total += bytes_of(st.step_sorted) + bytes_of(st.local_units);
  return total + 32001 * sizeof(double);  // the duration histogram
}

const GossipResult& GossipPredictor::predict(const GossipScenario& s) {
  State& st = *state_;
  std::fill(st.factor.begin(), st.factor.end(), 1.0);
  st.prepare(s);

  const int period = st.schedule->period;
  int iteration = 0;
  const int warmup = period * whole_periods(kMinWarmupIterations, period);
  for (; iteration < warmup; ++iteration) st.iterate(s, iteration, false);

  int half = period * whole_periods(kMinHalfWindowIterations, period);
  st.result.steady = false;
  int measured = 0;
  for (int attempt = 0; attempt < kMaxWindows && !st.result.steady; ++attempt, half *= 2) {
    std::copy(st.compute_clock_s.begin(), st.compute_clock_s.end(), st.window_start_s.begin());
    for (auto* v : {&st.accumulation_sum_s, &st.forward_sum_s, &st.backward_sum_s, &st.wait_sum_s}) std::fill(v->begin(), v->end(), 0.0);
    for (int i = 0; i < half; ++i, ++iteration) st.iterate(s, iteration, true);
    const double first = st.mean_clock_advance();
    for (int i = 0; i < half; ++i, ++iteration) {
      // The window ends on a whole period: its last one gives the per-step times.
      const bool last_period = i >= half - period;
      if (last_period) std::copy(st.compute_clock_s.begin(), st.compute_clock_s.end(), st.previous_clock_s.begin());
      st.iterate(s, iteration, true);
      if (last_period) st.record_step(iteration % period);
    }
    const double second = st.mean_clock_advance() - first;
    measured = 2 * half;
    st.result.steady = std::abs(second - first) <= kSteadyTolerance * std::max(first, second);
  }
  st.fill_result(s, measured);
  st.fill_step_times();
  st.result.iterations_simulated = iteration;
  st.result.variable = false;
  return st.result;
}

const GossipResult& GossipPredictor::predict(const GossipScenario& s, const Variability& v) {
  State& st = *state_;
  const CompiledSchedule& sc = *st.schedule;
  if (sc.classes != sc.ranks) {
    throw std::logic_error("variable compute needs a schedule compiled per rank");
  }
  // The deterministic run gives the reference for the histogram and how long this
  // topology takes to settle (a ring: about as many iterations as it has ranks); the
  // warm-up is at least that long.
  const GossipResult& deterministic = predict(s);
  const double reference_s = deterministic.iteration.iteration_s;
  const int settle_iterations = deterministic.iterations_simulated;
  st.reset_clocks();
  if (st.idle_per_rank_s.size() != st.factor.size()) st.idle_per_rank_s.resize(st.factor.size());
  NoiseStream noise(v, sc.ranks, sc.ranks_per_node);

  const int period = sc.period;
  int iteration = 0;
  const int warmup = period * whole_periods(std::max({v.warmup_iterations, settle_iterations, 1}), period);
  for (; iteration < warmup; ++iteration) {
    noise.next(st.factor);
    st.iterate(s, iteration, false);
  }
  std::copy(st.compute_clock_s.begin(), st.compute_clock_s.end(), st.window_start_s.begin());
  std::copy(st.compute_clock_s.begin(), st.compute_clock_s.end(), st.previous_clock_s.begin());
  for (auto* vec : {&st.accumulation_sum_s, &st.forward_sum_s, &st.backward_sum_s, &st.wait_sum_s}) std::fill(vec->begin(), vec->end(), 0.0);
  st.durations.reset(reference_s);
  const int measured = period * whole_periods(std::max(v.iterations, 1), period);
  for (int k = 0; k < measured; ++k, ++iteration) {
    noise.next(st.factor);
    st.iterate(s, iteration, true);
    for (std::size_t u = 0; u < st.factor.size(); ++u) {
      st.durations.add(st.compute_clock_s[u] - st.previous_clock_s[u]);
      st.previous_clock_s[u] = st.compute_clock_s[u];
    }
  }
  st.fill_result(s, measured);
  st.result.iterations_simulated = iteration;
  st.result.steady = true;
  st.result.variable = true;
  // The distribution of iteration times is the variability's (iteration_p50_s and on).
  st.result.step_iteration_s = {};
  st.result.step_p50_s = st.result.step_p90_s = 0.0;
  st.fill_variability(measured);
  std::fill(st.factor.begin(), st.factor.end(), 1.0);
  return st.result;
}

}  // namespace dtperf
