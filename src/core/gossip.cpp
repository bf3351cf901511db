// The gossip simulation's loop: iterations to a steady state, results, quantiles and the
// predictor's entry points (gossip.hpp documents the semantics).
#include "gossip_state.hpp"

namespace dtperf {

using namespace gossip_internal;

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

namespace {
constexpr double kInTurnsMargin = 0.05;
}  // namespace

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
  result.exchange_slots_per_iteration = sc.directed ? 2.0 * sc.classes * sc.peers
                                                   : static_cast<double>(sc.group_classes.size()) / sc.period;
  // A node's link shared by more crossing ranks than it has rails, each in its own group
  // (one member per node: independent exchanges that could take turns; a group with several
  // ranks on a node shares the link inside one collective): each gets less than its rank
  // cap (network.hpp) while all cross at once.
  result.node_link_in_turns_s = 0.0;
  result.node_link_crossing_ranks = 0;
  const double node_rate = s.network.node_nic_bytes_per_s();
  if (multi_node && !sc.directed && node_rate > 0.0) {
    const double rank_cap = s.network.rank_nic_cap_bytes_per_s();
    int crossing = 0;
    for (const PlacementCount& count : sc.counts) {
      const Placement& place = sc.placements[count.placement];
      if (place.nodes > 1 && place.ranks_per_node == 1 &&
          place.crossing_per_node * rank_cap > node_rate * (1.0 + 1e-9)) {
        crossing = std::max(crossing, place.crossing_per_node);
      }
    }
    // Reported only where the link bounds the iteration (its busy time is at least the
    // compute chain's) and taking turns would matter (more than 5 % below the in-phase
    // iteration: the margin advise needs to call a winner, advice.hpp).
    const double link_busy = r.inter_bytes_per_node / node_rate;
    const double compute_chain = r.accumulation_s + r.forward_s + r.backward_s + r.optimizer_s + r.overhead_s;
    if (crossing > 0 && link_busy >= compute_chain && link_busy < (1.0 - kInTurnsMargin) * r.iteration_s) {
      result.node_link_crossing_ranks = crossing;
      result.node_link_in_turns_s = link_busy;
    }
  }
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
                        &st.local_free_s, &st.latency_cell_s, &st.directed_done_s}) {
    total += bytes_of(*v);
  }
  total += bytes_of(st.done_flight) + bytes_of(st.links) + bytes_of(st.flights) + bytes_of(st.touched_flights);
  for (const auto& link : st.links) total += bytes_of(link.jobs);
  const CompiledSchedule& sc = *st.schedule;
  total += bytes_of(sc.class_of_rank) + bytes_of(sc.class_size) + bytes_of(sc.placements) + bytes_of(sc.steps) +
           bytes_of(sc.rounds) + bytes_of(sc.groups) + bytes_of(sc.group_classes) + bytes_of(sc.counts) +
           bytes_of(sc.send_to) + bytes_of(sc.receive_from) + bytes_of(sc.send_placement) +
           bytes_of(sc.receive_placement);
  total += bytes_of(st.step_sorted) + bytes_of(st.local_units) + bytes_of(st.plain_groups) +
           bytes_of(st.uniform_rounds) + bytes_of(st.directed_peers) +
           bytes_of(st.member_runs) + bytes_of(st.pair_runs) + bytes_of(st.round_first_run) +
           bytes_of(st.xor_chains) + bytes_of(st.chain_from_round) + bytes_of(st.coset_latest_s);
  return total + 32001 * sizeof(double);  // the duration histogram
}

int GossipPredictor::hypercube_chains() const { return static_cast<int>(state_->xor_chains.size()); }

void GossipPredictor::set_shortcuts(bool on) { state_->shortcuts = on; }

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

namespace {

// A variable-compute simulation's warm-up: at least the deterministic run's settling, in
// whole periods.
int variable_warmup_iterations(const Variability& v, int settle_iterations, int period) {
  return period * whole_periods(std::max({v.warmup_iterations, settle_iterations, 1}), period);
}

}  // namespace

SimulationWork GossipPredictor::variable_work(const Variability& v, const GossipResult& settled) const {
  const CompiledSchedule& sc = *state_->schedule;
  // Exchange rounds of the period, one per member of each rank group (the traffic
  // counts, as fill_result reads them: real groups, whatever the classes), or two per
  // peer of each directed push (its send and its receive, each priced on its own).
  double member_rounds = 0.0;
  for (const PlacementCount& count : sc.counts) {
    member_rounds += sc.directed ? 2.0 * count.groups : count.groups * sc.placements[count.placement].size;
  }
  SimulationWork w;
  w.ranks = sc.ranks;
  w.buckets = settled.iteration.buckets;
  w.rounds_per_bucket = member_rounds / (static_cast<double>(sc.ranks) * sc.period);
  w.period = sc.period;
  w.measured_iterations = sc.period * whole_periods(std::max(v.iterations, 1), sc.period);
  w.iterations = variable_warmup_iterations(v, settled.iterations_simulated, sc.period) + w.measured_iterations;
  return w;
}

const GossipResult& GossipPredictor::predict(const GossipScenario& s, const Variability& v) {
  // predict(s) returns this predictor's own result: the overload reads what it needs of
  // it before the run overwrites it.
  return predict(s, v, predict(s));
}

const GossipResult& GossipPredictor::predict(const GossipScenario& s, const Variability& v,
                                             const GossipResult& settled) {
  State& st = *state_;
  const CompiledSchedule& sc = *st.schedule;
  if (sc.classes != sc.ranks) {
    throw std::logic_error("variable compute needs a schedule compiled per rank");
  }
  // The deterministic run gives the reference for the histogram and how long this
  // topology takes to settle (a ring: about as many iterations as it has ranks); the
  // warm-up is at least that long. Read first: `settled` may be this predictor's result.
  const double reference_s = settled.iteration.iteration_s;
  const int settle_iterations = settled.iterations_simulated;
  std::fill(st.factor.begin(), st.factor.end(), 1.0);
  st.prepare(s);
  st.reset_clocks();
  if (st.idle_per_rank_s.size() != st.factor.size()) st.idle_per_rank_s.resize(st.factor.size());
  NoiseStream noise(v, sc.ranks, sc.ranks_per_node);

  const int period = sc.period;
  int iteration = 0;
  const int warmup = variable_warmup_iterations(v, settle_iterations, period);
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
