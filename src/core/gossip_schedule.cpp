#include "gossip_schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>

#include "splitmix.hpp"

namespace dtperf {

bool Placement::operator<(const Placement& o) const {
  return std::tie(nodes, ranks_per_node, crossing_per_node, size) <
         std::tie(o.nodes, o.ranks_per_node, o.crossing_per_node, o.size);
}

namespace {

/// Dense ids for equal keys, in order of first appearance.
/// Placements repeat in long runs (every pair of a ring crosses alike), so the last key
/// is remembered and a repeat costs one comparison instead of a tree search.
template <typename Key>
class Interner {
 public:
  std::uint32_t id(const Key& key) {
    if (last_ != ids_.end() && !(last_->first < key) && !(key < last_->first)) return last_->second;
    last_ = ids_.emplace(key, static_cast<std::uint32_t>(ids_.size())).first;
    return last_->second;
  }
  std::size_t size() const { return ids_.size(); }

 private:
  std::map<Key, std::uint32_t> ids_;
  typename std::map<Key, std::uint32_t>::const_iterator last_ = ids_.end();
};

/// Dense ids for equal sequences of integers, in order of first appearance, as
/// Interner<std::vector<std::int64_t>> numbers them, without a heap block per key: the
/// keys lie end to end in one buffer, found through an open-addressing table. Colour
/// refinement interns a signature per rank and pass (a million ranks at 1,048,576 GPUs),
/// so a block and a tree node per key were most of its time.
class SequenceInterner {
 public:
  std::uint32_t id(std::span<const std::int64_t> key) {
    if (2 * (start_.size() + 1) > table_.size()) grow();
    const std::uint64_t h = hash(key);
    for (std::size_t slot = h & (table_.size() - 1);; slot = (slot + 1) & (table_.size() - 1)) {
      const std::uint32_t found = table_[slot];
      if (found == kEmpty) {
        const auto next = static_cast<std::uint32_t>(start_.size());
        table_[slot] = next;
        hash_.push_back(h);
        start_.push_back(keys_.size());
        keys_.insert(keys_.end(), key.begin(), key.end());
        return next;
      }
      if (hash_[found] == h && std::ranges::equal(stored(found), key)) return found;
    }
  }
  std::size_t size() const { return start_.size(); }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  // A multiply-xorshift mix per element (equal keys are then compared in full, so the
  // hash needs only spread keys over the table), finished with splitmix64's.
  static std::uint64_t hash(std::span<const std::int64_t> key) {
    std::uint64_t h = key.size();
    for (const std::int64_t x : key) {
      h = (h ^ static_cast<std::uint64_t>(x)) * 0x9E3779B97F4A7C15ULL;
      h ^= h >> 29;
    }
    return splitmix64(h);
  }
  std::span<const std::int64_t> stored(std::uint32_t id) const {
    const std::size_t end = id + 1 < start_.size() ? start_[id + 1] : keys_.size();
    return {keys_.data() + start_[id], end - start_[id]};
  }
  void grow() {
    table_.assign(std::max<std::size_t>(64, 2 * table_.size()), kEmpty);
    for (std::uint32_t id = 0; id < start_.size(); ++id) {
      std::size_t slot = hash_[id] & (table_.size() - 1);
      while (table_[slot] != kEmpty) slot = (slot + 1) & (table_.size() - 1);
      table_[slot] = id;
    }
  }
  std::vector<std::int64_t> keys_;
  std::vector<std::size_t> start_;   // per id: where its key begins in keys_
  std::vector<std::uint64_t> hash_;  // per id
  std::vector<std::uint32_t> table_;  // a power of two of slots, at most half full
};

/// Colour refinement: repeatedly split classes by the ranks' signatures (after
/// `prepare(colour)` at the start of each pass) until the number of classes stops
/// growing. Returns the final colour of each rank. Every signature of a pass has the same
/// `width`; `signatures(first, last, colour, out)` writes those of ranks [first, last),
/// one row of `width` each. Asking for a block of ranks at a time lets the caller read
/// each of its per-step arrays in order for the block (tens of steps are tens of streams
/// through arrays of a million ranks: one rank at a time, each read missed the cache).
template <typename Prepare, typename Signatures>
std::vector<std::int32_t> refine(int ranks, bool merge, std::size_t width, Prepare&& prepare,
                                 Signatures&& signatures) {
  std::vector<std::int32_t> colour(static_cast<std::size_t>(ranks), 0);
  if (!merge) {
    for (int r = 0; r < ranks; ++r) colour[static_cast<std::size_t>(r)] = r;
    return colour;
  }
  constexpr int kBlock = 1024;
  std::size_t classes = 1;
  std::vector<std::int64_t> block(kBlock * width);
  for (;;) {
    prepare(colour);
    SequenceInterner ids;
    std::vector<std::int32_t> next(colour.size());
    for (int first = 0; first < ranks; first += kBlock) {
      const int last = std::min(ranks, first + kBlock);
      signatures(first, last, colour, block);
      for (int r = first; r < last; ++r) {
        const std::span<const std::int64_t> row(block.data() + static_cast<std::size_t>(r - first) * width, width);
        next[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(ids.id(row));
      }
    }
    colour.swap(next);
    if (ids.size() == classes) return colour;
    classes = ids.size();
  }
}

void finish_classes(CompiledSchedule& s, const std::vector<std::int32_t>& colour) {
  s.class_of_rank = colour;
  s.classes = 1 + *std::max_element(colour.begin(), colour.end());
  s.class_size.assign(static_cast<std::size_t>(s.classes), 0.0);
  for (const auto c : colour) s.class_size[static_cast<std::size_t>(c)] += 1.0;
}

std::vector<int> representatives(const CompiledSchedule& s) {
  std::vector<int> rep(static_cast<std::size_t>(s.classes), -1);
  for (int r = s.ranks - 1; r >= 0; --r) rep[static_cast<std::size_t>(s.class_of_rank[static_cast<std::size_t>(r)])] = r;
  return rep;
}

// A directed topology (push_average steps), compiled as SGP's graph is (defined below).
std::shared_ptr<const CompiledSchedule> compile_push_schedule(const Topology& t, bool merge_equivalent_ranks);

}  // namespace

std::shared_ptr<const CompiledSchedule> compile_schedule(const Topology& t, bool merge_equivalent_ranks) {
  if (t.directed()) return compile_push_schedule(t, merge_equivalent_ranks);
  auto s = std::make_shared<CompiledSchedule>();
  s->ranks = t.ranks;
  s->ranks_per_node = t.ranks_per_node;
  s->period = t.period();
  const int n = t.ranks;
  const int per_node = t.ranks_per_node;

  // Every round, flattened: the group of each rank and each group's placement.
  struct FlatRound {
    const Round* round;
    std::vector<std::int32_t> group_of_rank;
    std::vector<std::uint32_t> placement_of_group;
  };
  std::vector<FlatRound> flat;
  Interner<Placement> placement_ids;
  std::vector<int> member_nodes;  // scratch: one group's nodes
  std::vector<std::uint32_t> first_flat_of_step;
  for (int k = 0; k < t.period(); ++k) {
    first_flat_of_step.push_back(static_cast<std::uint32_t>(flat.size()));
    for (const Round& round : t.steps[static_cast<std::size_t>(k)].rounds) {
      FlatRound f{&round, std::vector<std::int32_t>(static_cast<std::size_t>(n), -1), {}};
      std::vector<int> crossing(static_cast<std::size_t>(t.nodes()), 0);
      std::vector<Placement> placement(round.groups());
      for (std::size_t g = 0; g < round.groups(); ++g) {
        // The group's nodes, sorted: each run of one node is that node's members.
        member_nodes.clear();
        for (const auto r : round.group(g)) {
          f.group_of_rank[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(g);
          member_nodes.push_back(r / per_node);
        }
        std::sort(member_nodes.begin(), member_nodes.end());
        const auto for_each_node = [&](auto&& visit) {
          for (auto run = member_nodes.begin(); run != member_nodes.end();) {
            const auto end = std::upper_bound(run, member_nodes.end(), *run);
            visit(*run, static_cast<int>(end - run));
            run = end;
          }
        };
        Placement& p = placement[g];
        p.size = static_cast<int>(member_nodes.size());
        p.nodes = 0;
        for_each_node([&](int, int count) {
          ++p.nodes;
          p.ranks_per_node = std::max(p.ranks_per_node, count);
        });
        if (p.nodes > 1) for_each_node([&](int node, int count) { crossing[static_cast<std::size_t>(node)] += count; });
      }
      for (std::size_t g = 0; g < round.groups(); ++g) {
        Placement& p = placement[g];
        if (p.nodes > 1) {
          for (const auto r : round.group(g)) {
            p.crossing_per_node = std::max(p.crossing_per_node, crossing[static_cast<std::size_t>(r / per_node)]);
          }
        }
        const std::uint32_t id = placement_ids.id(p);
        if (id == s->placements.size()) s->placements.push_back(p);
        f.placement_of_group.push_back(id);
      }
      flat.push_back(std::move(f));
    }
  }

  // Classes: a rank's signature is its colour and, per round, the key of its group: the
  // group's placement and the sorted colours of its members. Group keys are interned
  // once per group and pass, so a pass costs O(ranks x rounds) however large the groups.
  std::vector<std::vector<std::uint32_t>> group_key(flat.size());
  const auto intern_group_keys = [&](const std::vector<std::int32_t>& c) {
    SequenceInterner keys;
    std::vector<std::int64_t> key;
    for (std::size_t fi = 0; fi < flat.size(); ++fi) {
      const FlatRound& f = flat[fi];
      group_key[fi].resize(f.round->groups());
      for (std::size_t g = 0; g < f.round->groups(); ++g) {
        key.assign(1, f.placement_of_group[g]);
        for (const auto m : f.round->group(g)) key.push_back(c[static_cast<std::size_t>(m)]);
        std::sort(key.begin() + 1, key.end());
        group_key[fi][g] = keys.id(key);
      }
    }
  };
  const std::size_t width = 1 + flat.size();
  const auto colour = refine(n, merge_equivalent_ranks, width, intern_group_keys,
                             [&](int first, int last, const std::vector<std::int32_t>& c, std::vector<std::int64_t>& out) {
    for (int r = first; r < last; ++r) out[static_cast<std::size_t>(r - first) * width] = c[static_cast<std::size_t>(r)];
    for (std::size_t fi = 0; fi < flat.size(); ++fi) {
      const std::int32_t* group_of = flat[fi].group_of_rank.data();
      const std::uint32_t* key = group_key[fi].data();
      for (int r = first; r < last; ++r) {
        const std::int32_t g = group_of[r];
        out[static_cast<std::size_t>(r - first) * width + 1 + fi] = g < 0 ? -1 : static_cast<std::int64_t>(key[g]);
      }
    }
  });
  finish_classes(*s, colour);
  const std::vector<int> rep = representatives(*s);

  // Class groups per round: the classes of the representative's group.
  std::map<std::vector<int>, std::uint32_t> process_groups;
  for (int k = 0; k < t.period(); ++k) {
    CompiledStep step{static_cast<std::uint32_t>(s->rounds.size()), 0};
    const std::uint32_t end = k + 1 < t.period() ? first_flat_of_step[static_cast<std::size_t>(k + 1)]
                                                 : static_cast<std::uint32_t>(flat.size());
    for (std::uint32_t fi = first_flat_of_step[static_cast<std::size_t>(k)]; fi < end; ++fi) {
      const FlatRound& f = flat[fi];
      CompiledRound round{static_cast<std::uint32_t>(s->groups.size()), 0};
      std::vector<bool> done(static_cast<std::size_t>(s->classes), false);
      for (int c = 0; c < s->classes; ++c) {
        if (done[static_cast<std::size_t>(c)]) continue;
        const std::int32_t g = f.group_of_rank[static_cast<std::size_t>(rep[static_cast<std::size_t>(c)])];
        if (g < 0) continue;  // not in this round: nothing to exchange
        std::vector<std::uint32_t> members;
        std::vector<int> ranks;
        for (const auto m : f.round->group(static_cast<std::size_t>(g))) {
          members.push_back(static_cast<std::uint32_t>(s->class_of_rank[static_cast<std::size_t>(m)]));
          ranks.push_back(static_cast<int>(m));
        }
        std::sort(ranks.begin(), ranks.end());
        const auto pg = process_groups.try_emplace(std::move(ranks), static_cast<std::uint32_t>(process_groups.size()));
        std::sort(members.begin(), members.end());
        members.erase(std::unique(members.begin(), members.end()), members.end());
        ClassGroup cg{f.placement_of_group[static_cast<std::size_t>(g)], static_cast<std::uint32_t>(s->group_classes.size()),
                      static_cast<std::uint32_t>(members.size()),
                      s->placements[f.placement_of_group[static_cast<std::size_t>(g)]].nodes > 1 ? 1u : 0u,
                      pg.first->second};
        for (const auto m : members) {
          done[m] = true;
          s->group_classes.push_back(m);
        }
        s->groups.push_back(cg);
        ++round.group_count;
      }
      s->rounds.push_back(round);
      ++step.round_count;
      // Traffic accounting counts real rank groups.
      std::map<std::uint32_t, double> per_placement;
      for (const auto p : f.placement_of_group) per_placement[p] += 1.0;
      for (const auto& [p, count] : per_placement) s->counts.push_back({static_cast<std::uint32_t>(k), p, count});
    }
    s->steps.push_back(step);
  }
  return s;
}

namespace {

// A directed schedule: at step k every rank sends to each of `peers` ranks
// to(rank, k, j), j = 0..peers-1. For each j and k, `to` is a permutation, so every rank
// receives one message per j, in its receive slot j (the same slot whatever the rank,
// which keeps ranks of equal position alike for the rank classes). A transfer's
// placement is a pair; crossing counts the ranks of the sender's node whose transfers
// leave it at that step (they share its NICs).
template <typename To>
std::shared_ptr<const CompiledSchedule> compile_directed(int n, int per_node, int period, int peers, To&& to,
                                                         bool merge_equivalent_ranks) {
  auto s = std::make_shared<CompiledSchedule>();
  s->ranks = n;
  s->ranks_per_node = per_node;
  s->directed = true;
  s->period = period;
  s->peers = peers;
  const int nodes = n / per_node;
  const auto at = [&](int k, int rank, int j) {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(n) + static_cast<std::size_t>(rank)) *
               static_cast<std::size_t>(peers) + static_cast<std::size_t>(j);
  };

  // Per step, rank and peer: destination, placement of the transfer; and who sends to
  // each rank in slot j.
  Interner<Placement> placement_ids;
  const std::size_t cells = static_cast<std::size_t>(period) * static_cast<std::size_t>(n) * static_cast<std::size_t>(peers);
  std::vector<std::int32_t> dest(cells);
  std::vector<std::uint32_t> placement(cells);
  std::vector<std::int32_t> source(cells);
  for (int k = 0; k < period; ++k) {
    std::vector<int> crossing(static_cast<std::size_t>(nodes), 0);
    for (int r = 0; r < n; ++r) {
      bool crosses = false;
      for (int j = 0; j < peers; ++j) crosses = crosses || r / per_node != to(r, k, j) / per_node;
      if (crosses) ++crossing[static_cast<std::size_t>(r / per_node)];
    }
    std::map<std::uint32_t, double> per_placement;
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < peers; ++j) {
        const int d = to(r, k, j);
        const bool crosses = r / per_node != d / per_node;
        const Placement p{crosses ? 2 : 1, 1, crosses ? crossing[static_cast<std::size_t>(r / per_node)] : 0,
                          n == 1 ? 1 : 2};
        const std::uint32_t id = placement_ids.id(p);
        if (id == s->placements.size()) s->placements.push_back(p);
        dest[at(k, r, j)] = d;
        placement[at(k, r, j)] = id;
        per_placement[id] += 1.0;
        source[at(k, d, j)] = r;
      }
    }
    for (const auto& [p, count] : per_placement) s->counts.push_back({static_cast<std::uint32_t>(k), p, count});
  }

  // Classes: own colour, and per step and peer the placements and colours of both ends.
  const std::size_t width = 1 + 4 * static_cast<std::size_t>(period) * static_cast<std::size_t>(peers);
  const auto colour = refine(n, merge_equivalent_ranks, width, [](const std::vector<std::int32_t>&) {},
                             [&](int first, int last, const std::vector<std::int32_t>& c, std::vector<std::int64_t>& out) {
    for (int r = first; r < last; ++r) out[static_cast<std::size_t>(r - first) * width] = c[static_cast<std::size_t>(r)];
    for (int k = 0; k < period; ++k) {
      for (int j = 0; j < peers; ++j) {
        const std::size_t column = 1 + 4 * (static_cast<std::size_t>(k) * static_cast<std::size_t>(peers) + static_cast<std::size_t>(j));
        for (int r = first; r < last; ++r) {
          const std::size_t i = at(k, r, j);
          const int from = source[i];
          std::int64_t* row = out.data() + static_cast<std::size_t>(r - first) * width + column;
          row[0] = placement[i];
          row[1] = c[static_cast<std::size_t>(dest[i])];
          row[2] = placement[at(k, from, j)];
          row[3] = c[static_cast<std::size_t>(from)];
        }
      }
    }
  });
  finish_classes(*s, colour);
  const std::vector<int> rep = representatives(*s);
  for (int k = 0; k < period; ++k) {
    for (int c = 0; c < s->classes; ++c) {
      const int r = rep[static_cast<std::size_t>(c)];
      for (int j = 0; j < peers; ++j) {
        const std::size_t i = at(k, r, j);
        const int from = source[i];
        s->send_to.push_back(s->class_of_rank[static_cast<std::size_t>(dest[i])]);
        s->receive_from.push_back(s->class_of_rank[static_cast<std::size_t>(from)]);
        s->send_placement.push_back(placement[i]);
        s->receive_placement.push_back(placement[at(k, from, j)]);
      }
    }
  }
  return s;
}

std::shared_ptr<const CompiledSchedule> compile_push_schedule(const Topology& t, bool merge_equivalent_ranks) {
  const int n = t.ranks;
  return compile_directed(
      n, t.ranks_per_node, t.period(), 1,
      [&t, n](int rank, int k, int) { return (rank + t.steps[static_cast<std::size_t>(k)].shift) % n; },
      merge_equivalent_ranks);
}

}  // namespace

std::shared_ptr<const CompiledSchedule> compile_sgp_schedule(int n, int per_node, bool merge_equivalent_ranks) {
  int period = 0;
  while ((1 << period) < n) ++period;
  return compile_directed(
      n, per_node, std::max(period, 1), 1, [n](int rank, int k, int) { return n == 1 ? rank : (rank + (1 << k)) % n; },
      merge_equivalent_ranks);
}

std::shared_ptr<const CompiledSchedule> compile_dpsgd_schedule(int n, int per_node, bool merge_equivalent_ranks) {
  // Two ranks have one neighbour; more have two, i + 1 and i - 1.
  const int peers = n > 2 ? 2 : 1;
  return compile_directed(
      n, per_node, 1, peers, [n](int rank, int, int j) { return n == 1 ? rank : (rank + (j == 0 ? 1 : n - 1)) % n; },
      merge_equivalent_ranks);
}

int schedule_classes(const CompiledSchedule& schedule) { return schedule.classes; }

}  // namespace dtperf
