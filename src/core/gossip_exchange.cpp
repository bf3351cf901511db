// The gossip simulation's phases inside one iteration: compute per bucket, Decent-DP's
// group exchanges (alone or on links shared by several collectives in flight), and the
// directed whole-model pushes of SGP and D-PSGD.
#include <bit>

#include "gossip_state.hpp"

namespace dtperf {

using namespace gossip_internal;

namespace {

// The latest of a[i] and b[i] over i < count, in four independent chains (the latest of a
// set of times does not depend on the order it is read in; times are never NaN).
[[gnu::always_inline]] inline double latest_of(const double* a, const double* b, std::uint32_t count) {
  double m0 = 0.0;
  double m1 = 0.0;
  double m2 = 0.0;
  double m3 = 0.0;
  std::uint32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    m0 = std::max(m0, std::max(a[i], b[i]));
    m1 = std::max(m1, std::max(a[i + 1], b[i + 1]));
    m2 = std::max(m2, std::max(a[i + 2], b[i + 2]));
    m3 = std::max(m3, std::max(a[i + 3], b[i + 3]));
  }
  for (; i < count; ++i) m0 = std::max(m0, std::max(a[i], b[i]));
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

// Pairs (x + i, y + i), i < count, each on its own: both members start when both have got
// there and their stream is free, and end `cost_s` later. The four blocks are disjoint.
void exchange_pairs(double* __restrict progress_x, double* __restrict stream_x, double* __restrict progress_y,
                    double* __restrict stream_y, std::uint32_t count, double cost_s) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const double end =
        std::max(std::max(progress_x[i], stream_x[i]), std::max(progress_y[i], stream_y[i])) + cost_s;
    progress_x[i] = stream_x[i] = progress_y[i] = stream_y[i] = end;
  }
}

// One bucket of one-peer pushes over `count` classes, each sending to the class
// `launch_to` points at and receiving from the one `launch_from` points at, every send
// at `send_cost_s` over one link level (`kCrosses`: across nodes) and every receive at
// `receive_cost_s`: exchange_directed_as's one-peer loop (the same operations in the
// same order) over arrays, which the compiler vectorises. The launch rows are only read.
template <bool kCrosses>
void push_block(std::size_t count, const double* __restrict launch, const double* __restrict launch_to,
                const double* __restrict launch_from, double* __restrict intra_free, double* __restrict inter_free,
                double* __restrict received, double* __restrict bucket_done, double* __restrict done,
                double send_cost_s, double receive_cost_s) {
  for (std::size_t i = 0; i < count; ++i) {
    const double launched = launch[i];
    const double intra = std::max(intra_free[i], launched);
    const double inter = std::max(inter_free[i], launched);
    const double send_start = std::max(kCrosses ? inter : intra, launch_to[i]);
    const double receive_start = std::max(std::max(launch_from[i], launched), received[i]);
    const double sent = send_start + send_cost_s;
    const double got = receive_start + receive_cost_s;
    received[i] = got;
    intra_free[i] = kCrosses ? intra : sent;
    inter_free[i] = kCrosses ? sent : inter;
    const double end = std::max(std::max(launched, sent), got);
    bucket_done[i] = end;
    done[i] = std::max(done[i], end);
  }
}

}  // namespace

void GossipPredictor::State::compute_phase(int step, bool measure) {
  // Where nothing slows compute beside an exchange (a contention factor of 1 and no host
  // transport competing for cores: every built-in profile), beside_s returns the work
  // itself (beside two streams, the work split at a window and summed back: equal to
  // rounding). The loop without its per-rank checks takes about a quarter less time.
  if (contention.compute == 1.0 && contention.host_cpu_s_per_byte == 0.0) {
    compute_phase_as<false>(step, measure);
  } else {
    compute_phase_as<true>(step, measure);
  }
}

template <bool kInPlace>
void GossipPredictor::State::bucket_pass(std::size_t b, std::size_t classes, double work_s, double step_s,
                                         double mix_s, bool step_first, double* progress, double* launch) {
  double* __restrict clock = compute_clock_s.data();
  double* __restrict backward = backward_iteration_s.data();
  double* __restrict wait = wait_iteration_s.data();
  double* __restrict end = compute_end_s.data();
  const double* __restrict f = factor.data();
  // In place, `progress` is read and written at the same index, so neither pointer to it
  // is restrict; otherwise the launch goes to `launch`.
  double* const written = kInPlace ? progress : launch;
  const double before_wait_s = step_first ? step_s : 0.0;
  const double after_mix_s = step_first ? 0.0 : step_s;
  for (std::size_t u = 0; u < classes; ++u) {
    const double segment = f[u] * work_s;
    backward[u] += segment;
    const double c = clock[u] + segment + before_wait_s;
    const double resumed = std::max(c, progress[u]);
    wait[u] += resumed - c;
    const double next = resumed + mix_s + after_mix_s;
    clock[u] = next;
    written[u] = next;
  }
  if (!exchange_stretched) return;
  // The compute an exchange overlaps ends, as estimated, after the unstretched rest of
  // this iteration (stretched_compute_s's rule).
  const double remaining_s = remaining_after_s[b];
  const double overhead = overhead_s;
  for (std::size_t u = 0; u < classes; ++u) end[u] = clock[u] + f[u] * remaining_s + overhead;
}

template <bool kStretched>
void GossipPredictor::State::compute_phase_as(int step, bool measure) {
  // Beside exchanges over a host transport, compute also loses cores to them.
  const auto beside = [this](std::size_t u, double work_s) { return kStretched ? beside_s(u, work_s) : work_s; };
  const std::size_t classes = compute_clock_s.size();
  double* clock = compute_clock_s.data();
  double* backward = backward_iteration_s.data();
  double* wait = wait_iteration_s.data();
  const double* f = factor.data();
  for (std::size_t u = 0; u < classes; ++u) {
    // Gradient accumulation: the K - 1 micro-steps before the last only compute, beside
    // whatever exchange is still running (more time for it to hide behind).
    if (accumulation_s > 0.0) {
      const double accumulation = beside(u, f[u] * accumulation_s);
      clock[u] += accumulation;
      if (measure) accumulation_sum_s[u] += accumulation;
    }
    const double forward = beside(u, f[u] * forward_s);
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
    if (!kStretched && local_units.empty()) {
      // The common case (nothing stretches compute, no node-level all-reduce) as one
      // branch-free pass the compiler vectorises: the same operations in the same order
      // as the general loop below, so the same values.
      if (schedule->directed) {
        bucket_pass<false>(b, classes, work_s, step_s, mix_s, step_first, done_s.data() + b * classes, launch);
      } else {
        bucket_pass<true>(b, classes, work_s, step_s, mix_s, step_first, done_s.data() + b * classes, nullptr);
        exchange_bucket_groups(step, b, compute_end_s.data(), true);
      }
      continue;
    }
    for (std::size_t u = 0; u < classes; ++u) {
      const double segment = beside(u, f[u] * work_s);
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
void GossipPredictor::State::exchange_bucket_groups(int step, std::size_t b, const double* clock_end, bool launched) {
  const std::size_t classes = compute_clock_s.size();
  const CompiledStep& st = schedule->steps[static_cast<std::size_t>(step)];
  const double* launch = launch_s.data() + b * classes;
  double* progress = done_s.data() + b * classes;
  if (!launched) std::copy(launch, launch + classes, progress);
  if (lanes > 0) {
    exchange_on_lanes(st, b, clock_end, progress);
  } else if (exchange_stretched || host_shared) {
    exchange_groups_as<true>(st, b, clock_end, progress);
  } else {
    // Every exchange takes its price (no contention factor, no host transport: every
    // built-in profile): the same operations without the contention reads and the
    // host-share writes (1 and 0 there).
    exchange_groups_as<false>(st, b, clock_end, progress);
  }
}

// One stream per link level: a group starts when its members and their streams are free.
template <bool kStretched>
void GossipPredictor::State::exchange_groups_as(const CompiledStep& st, std::size_t b, const double* clock_end,
                                                double* progress) {
  const CompiledSchedule& sc = *schedule;
  double* streams[2] = {intra_free_s.data(), inter_free_s.data()};
  double* stream_shares[2] = {intra_share.data(), inter_share.data()};
  for (std::uint32_t r = st.first_round; r < st.first_round + st.round_count; ++r) {
    const CompiledRound& round = sc.rounds[r];
    if (!kStretched && shortcuts && chain_from_round[r] >= 0) {
      const XorChain& chain = xor_chains[static_cast<std::size_t>(chain_from_round[r])];
      exchange_xor_chain(chain, b, progress);
      r += chain.rounds - 1;
      continue;
    }
    if (!kStretched && uniform_rounds[r]) {
      // Pairs on one stream at one price: the loop below without the per-group reads of
      // count, stream and price (the same operations on the same values), run by run. The
      // four blocks of a run are disjoint (the pairs of a round are), so the compiler may
      // process several pairs at once.
      const PlainGroup& shape = plain_groups[round.first_group];
      double* const stream = streams[shape.level];
      const double cost = cost_s[shape.placement * buckets + b];
      for (std::uint32_t k = round_first_run[r]; k < round_first_run[r + 1]; ++k) {
        const PairRun& run = pair_runs[k];
        exchange_pairs(progress + run.x, stream + run.x, progress + run.y, stream + run.y, run.count, cost);
      }
      continue;
    }
    const PlainGroup* const last = plain_groups.data() + round.first_group + round.group_count;
    for (const PlainGroup* g = plain_groups.data() + round.first_group; g != last; ++g) {
      double* stream = streams[g->level];
      const std::size_t cell = g->placement * buckets + b;
      const double cost = cost_s[cell];
      const double share = kStretched ? host_share[cell] : 0.0;
      const double slowdown = kStretched ? contention.exchange_beside_compute(share) : 1.0;
      if (g->count == 2) {  // pairs: most groups of most topologies
        const std::uint32_t x = g->x;
        const std::uint32_t y = g->y;
        const double start = std::max(std::max(progress[x], stream[x]), std::max(progress[y], stream[y]));
        const double end =
            start + (slowdown == 1.0 ? cost : exchange_s(cost, start, std::max(clock_end[x], clock_end[y]), slowdown));
        progress[x] = stream[x] = progress[y] = stream[y] = end;
        if (kStretched) stream_shares[g->level][x] = stream_shares[g->level][y] = share;
        continue;
      }
      // A larger group, run by run of consecutive members (the latest of a set does not
      // depend on the order it is read in).
      const MemberRun* const runs = member_runs.data() + g->x;
      const MemberRun* const runs_end = runs + g->y;
      double start = 0.0;
      for (const MemberRun* m = runs; m != runs_end; ++m) {
        start = std::max(start, latest_of(progress + m->first, stream + m->first, m->count));
      }
      double end = start + cost;
      if (slowdown != 1.0) {  // the members' compute ends matter only to a stretched exchange
        double last_end = 0.0;
        for (const MemberRun* m = runs; m != runs_end; ++m) {
          last_end = std::max(last_end, latest_of(clock_end + m->first, clock_end + m->first, m->count));
        }
        end = start + exchange_s(cost, start, last_end, slowdown);
      }
      for (const MemberRun* m = runs; m != runs_end; ++m) {
        std::fill_n(progress + m->first, m->count, end);
        std::fill_n(stream + m->first, m->count, end);
        if (kStretched) std::fill_n(stream_shares[g->level] + m->first, m->count, share);
      }
    }
  }
}

void GossipPredictor::State::find_xor_chains() {
  const CompiledSchedule& sc = *schedule;
  const auto classes = static_cast<std::uint32_t>(sc.classes);
  chain_from_round.assign(sc.rounds.size(), -1);
  // The distance d of a uniform round that pairs every class x with x XOR d, or 0.
  const auto xor_distance = [&](std::size_t r) -> std::uint32_t {
    const CompiledRound& round = sc.rounds[r];
    if (!uniform_rounds[r] || 2 * static_cast<std::uint64_t>(round.group_count) != classes) return 0;
    const PlainGroup& first = plain_groups[round.first_group];
    const std::uint32_t d = first.x ^ first.y;
    if (!std::has_single_bit(d)) return 0;
    for (std::uint32_t g = round.first_group; g < round.first_group + round.group_count; ++g) {
      if ((plain_groups[g].x ^ plain_groups[g].y) != d) return 0;
    }
    return d;  // every class is in one of the round's disjoint pairs, each at distance d
  };
  for (const CompiledStep& st : sc.steps) {
    std::uint32_t r = st.first_round;
    const std::uint32_t end = st.first_round + st.round_count;
    while (r < end) {
      if (xor_distance(r) == 0) {
        ++r;
        continue;
      }
      XorChain chain{r, 0, 0, plain_groups[sc.rounds[r].first_group].level};
      for (std::uint32_t k = r; k < end; ++k) {
        const std::uint32_t d = xor_distance(k);
        if (d == 0 || (chain.mask & d) != 0 || plain_groups[sc.rounds[k].first_group].level != chain.level) break;
        // The distances' bits contiguous, so that the cosets tile blocks of classes.
        const std::uint32_t mask = chain.mask | d;
        const std::uint32_t lowest = mask & (~mask + 1);
        if (!std::has_single_bit(mask / lowest + 1) || classes % (mask + lowest) != 0) break;
        chain.mask = mask;
        ++chain.rounds;
      }
      if (chain.rounds >= 2) {
        chain_from_round[r] = static_cast<std::int32_t>(xor_chains.size());
        xor_chains.push_back(chain);
        r += chain.rounds;
      } else {
        ++r;
      }
    }
  }
  std::uint32_t widest = 0;  // the most cosets a block of a chain holds
  for (const XorChain& c : xor_chains) widest = std::max(widest, c.mask & (~c.mask + 1));
  coset_latest_s.assign(widest, 0.0);
}

void GossipPredictor::State::exchange_xor_chain(const XorChain& chain, std::size_t b, double* progress) {
  const CompiledSchedule& sc = *schedule;
  const auto classes = static_cast<std::uint32_t>(compute_clock_s.size());
  double* const stream = chain.level == 0 ? intra_free_s.data() : inter_free_s.data();
  double price_s[32];
  for (std::uint32_t k = 0; k < chain.rounds; ++k) {
    const PlainGroup& shape = plain_groups[sc.rounds[chain.first_round + k].first_group];
    price_s[k] = cost_s[shape.placement * buckets + b];
  }
  const auto end_of = [&](double start) {
    for (std::uint32_t k = 0; k < chain.rounds; ++k) start += price_s[k];
    return start;
  };
  // The mask's bits are contiguous (find_xor_chains): a block of `span` classes holds
  // `stride` cosets, class base + j * stride + low in coset `low`.
  const std::uint32_t stride = chain.mask & (~chain.mask + 1);
  const std::uint32_t span = chain.mask + stride;
  double* const latest = coset_latest_s.data();
  for (std::uint32_t base = 0; base < classes; base += span) {
    double* p = progress + base;
    double* s = stream + base;
    if (stride == 1) {
      const double end = end_of(latest_of(p, s, span));
      for (std::uint32_t j = 0; j < span; ++j) p[j] = s[j] = end;
      continue;
    }
    for (std::uint32_t low = 0; low < stride; ++low) latest[low] = std::max(p[low], s[low]);
    for (std::uint32_t j = stride; j < span; j += stride) {
      for (std::uint32_t low = 0; low < stride; ++low) latest[low] = std::max(latest[low], std::max(p[j + low], s[j + low]));
    }
    for (std::uint32_t low = 0; low < stride; ++low) latest[low] = end_of(latest[low]);
    for (std::uint32_t j = 0; j < span; j += stride) {
      for (std::uint32_t low = 0; low < stride; ++low) p[j + low] = s[j + low] = latest[low];
    }
  }
}

// Each process group's collectives on its own threads, up to `lanes` at once, sharing the
// ranks' links (exchange_on_shared_links).
void GossipPredictor::State::exchange_on_lanes(const CompiledStep& st, std::size_t b, const double* clock_end,
                                               const double* progress) {
  const CompiledSchedule& sc = *schedule;
  for (std::uint32_t r = st.first_round; r < st.first_round + st.round_count; ++r) {
    const CompiledRound& round = sc.rounds[r];
    for (std::uint32_t g = round.first_group; g < round.first_group + round.group_count; ++g) {
      const ClassGroup& group = sc.groups[g];
      const std::size_t cell = group.placement * buckets + b;
      const double share = host_share[cell];
      const double slowdown = contention.exchange_beside_compute(share);
      double* stream_share = group.crosses_nodes ? inter_share.data() : intra_share.data();
      const std::uint32_t* members = sc.group_classes.data() + group.first;
      const double cost = cost_s[cell];
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
  const auto row = static_cast<std::size_t>(step) * compute_clock_s.size() * static_cast<std::size_t>(schedule->peers);
  // Where every transfer takes its price (no contention factor, no host transport: every
  // built-in profile), the same operations without the stretch arithmetic (exchange_s
  // returns the cost at a factor of 1) and the host-share writes (all 0 there).
  if (!exchange_stretched && !host_shared) {
    exchange_directed_as<false>(row);
  } else {
    exchange_directed_as<true>(row);
  }
}

// Bucket by bucket, every class in turn: each class's own operations run in the same
// order as class by class (so the same values), but consecutive classes are independent,
// so the processor overlaps them instead of waiting on one class's chain of maxima and
// sums bucket after bucket, and the per-bucket rows are read in order.
template <bool kStretched>
void GossipPredictor::State::exchange_directed_as(std::size_t row) {
  const CompiledSchedule& sc = *schedule;
  const std::size_t classes = compute_clock_s.size();
  const auto peers = static_cast<std::size_t>(sc.peers);
  // Each (class, peer)'s classes, link level and placements, read once per call.
  for (std::size_t i = 0; i < classes * peers; ++i) {
    DirectedPeer& p = directed_peers[i];
    p.to = static_cast<std::uint32_t>(sc.send_to[row + i]);
    p.from = static_cast<std::uint32_t>(sc.receive_from[row + i]);
    p.send_placement = sc.send_placement[row + i];
    p.receive_placement = sc.receive_placement[row + i];
    p.crosses = sc.placements[p.send_placement].nodes > 1;
  }
  // A transfer starts once the sender has launched it and the receiver has posted its
  // receive (at its own launch); sends and receives run at once (full duplex). A rank's
  // sends over one link level (inside the node, across nodes) go one after another: its
  // link carries them all, bucket after bucket; different levels run side by side. A
  // bucket's receive from a peer follows that peer's previous bucket. The link levels
  // carry on from the previous iteration's buckets: intra_free_s and inter_free_s hold
  // each class's levels while the buckets run, directed_done_s when its buckets are done.
  double* intra_free = intra_free_s.data();
  double* inter_free = inter_free_s.data();
  double* done = directed_done_s.data();
  for (std::size_t u = 0; u < classes; ++u) {
    intra_free[u] = std::max(launch_s[u], intra_free[u]);
    inter_free[u] = std::max(launch_s[u], inter_free[u]);
    done[u] = launch_s[u];
  }
  // One peer at one distance, every send at one placement and every receive at one (SGP's
  // graph at a distance of a node or more): class u sends to u + to_shift and receives
  // from u + from_shift (mod classes), run as blocks of consecutive classes between the
  // wrap-arounds (push_block).
  bool shifted = !kStretched && shortcuts && peers == 1 && classes > 0;
  const auto n = static_cast<std::uint32_t>(classes);
  const DirectedPeer first = shifted ? directed_peers[0] : DirectedPeer{};
  const std::uint32_t to_shift = shifted ? first.to : 0;
  const std::uint32_t from_shift = shifted ? first.from : 0;
  for (std::uint32_t u = 0; shifted && u < n; ++u) {
    const DirectedPeer& p = directed_peers[u];
    shifted = p.to == (u + to_shift) % n && p.from == (u + from_shift) % n &&
              p.send_placement == first.send_placement && p.receive_placement == first.receive_placement &&
              p.crosses == first.crosses;
  }
  // The blocks: [0, n) split where u + to_shift and u + from_shift wrap past n.
  std::uint32_t cuts[4] = {0, n - to_shift, n - from_shift, n};
  std::sort(cuts, cuts + 4);
  for (std::size_t b = 0; b < buckets; ++b) {
    const double* launch = launch_s.data() + b * classes;
    double* bucket_done_s = done_s.data() + b * classes;
    if (shifted) {
      const double send_cost = cost_s[std::size_t{first.send_placement} * buckets + b];
      const double receive_cost = cost_s[std::size_t{first.receive_placement} * buckets + b];
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t lo = cuts[k];
        const std::uint32_t count = cuts[k + 1] - lo;
        if (count == 0) continue;
        const double* to = launch + (lo + to_shift) % n;
        const double* from = launch + (lo + from_shift) % n;
        (first.crosses ? push_block<true> : push_block<false>)(count, launch + lo, to, from, intra_free + lo,
                                                                inter_free + lo, received_s.data() + lo,
                                                                bucket_done_s + lo, done + lo, send_cost, receive_cost);
      }
      continue;
    }
    if (!kStretched && peers == 1) {
      // One peer (SGP's one-peer exponential graph): the loop below for j = 0, without
      // the loop over peers (the same operations in the same order).
      double* received = received_s.data();
      for (std::size_t u = 0; u < classes; ++u) {
        const DirectedPeer& p = directed_peers[u];
        const double launched = launch[u];
        const double intra = std::max(intra_free[u], launched);
        const double inter = std::max(inter_free[u], launched);
        const double send_start = std::max(p.crosses ? inter : intra, launch[p.to]);
        const double receive_start = std::max(std::max(launch[p.from], launched), received[u]);
        const double sent = send_start + cost_s[std::size_t{p.send_placement} * buckets + b];
        received[u] = receive_start + cost_s[std::size_t{p.receive_placement} * buckets + b];
        intra_free[u] = p.crosses ? intra : sent;
        inter_free[u] = p.crosses ? sent : inter;
        const double bucket_done = std::max(std::max(launched, sent), received[u]);
        bucket_done_s[u] = bucket_done;
        done[u] = std::max(done[u], bucket_done);
      }
      continue;
    }
    for (std::size_t u = 0; u < classes; ++u) {
      // The class's two link levels in registers while its peers are served.
      const double launched = launch[u];
      double intra = std::max(intra_free[u], launched);
      double inter = std::max(inter_free[u], launched);
      double bucket_done = launched;
      double* received = received_s.data() + u * peers;  // per peer, the last receive's end
      const DirectedPeer* peer = directed_peers.data() + u * peers;
      for (std::size_t j = 0; j < peers; ++j) {
        const DirectedPeer& p = peer[j];
        const double level = p.crosses ? inter : intra;
        const double send_start = std::max(level, launch[p.to]);
        const double receive_start = std::max(std::max(launch[p.from], launched), received[j]);
        const std::size_t send_cell = std::size_t{p.send_placement} * buckets + b;
        const std::size_t receive_cell = std::size_t{p.receive_placement} * buckets + b;
        double sent = 0.0;
        if constexpr (kStretched) {
          const double send_factor = contention.exchange_beside_compute(host_share[send_cell]);
          const double receive_factor = contention.exchange_beside_compute(host_share[receive_cell]);
          (p.crosses ? inter_share : intra_share)[u] = host_share[send_cell];
          sent = send_start + exchange_s(cost_s[send_cell], send_start,
                                         std::max(compute_clock_s[u], compute_clock_s[p.to]), send_factor);
          received[j] = receive_start + exchange_s(cost_s[receive_cell], receive_start,
                                                   std::max(compute_clock_s[p.from], compute_clock_s[u]),
                                                   receive_factor);
        } else {
          sent = send_start + cost_s[send_cell];
          received[j] = receive_start + cost_s[receive_cell];
        }
        intra = p.crosses ? intra : sent;
        inter = p.crosses ? sent : inter;
        bucket_done = std::max(std::max(bucket_done, sent), received[j]);
      }
      intra_free[u] = intra;
      inter_free[u] = inter;
      bucket_done_s[u] = bucket_done;
      done[u] = std::max(done[u], bucket_done);
    }
  }
  std::copy(done, done + classes, inter_free);
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

}  // namespace dtperf
