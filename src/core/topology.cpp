#include "dtperf/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "dtperf/error.hpp"

#include "splitmix.hpp"

namespace dtperf {

namespace {

const TopologyInfo kTopologies[] = {
    {"complete", "one group of all ranks: exact average every step (an all-reduce of parameters)", "any size",
     false},
    {"ring", "one-peer ring: pairs {2i,2i+1} and {2i-1,2i} on alternate steps", "an even number of ranks"},
    {"one-peer-exp", "one-peer exponential graph: step k pairs ranks at distance 2^k", "ranks a power of two"},
    {"alternating-exp-ring",
     "AER: node pairs at distance 2^r mix as groups of 2 nodes while the other half of the nodes mix inside",
     "nodes a power of two >= 2"},
    {"torus", "static 2-D torus: each rank averages with its 4 neighbours every step",
     "ranks = rows x cols, both even and >= 4"},
    {"exponential", "static exponential graph (hypercube form): each rank averages with its log2(n) peers i XOR 2^k",
     "ranks a power of two >= 4"},
    {"random-matching", "a random perfect matching each step (seeded, period 16; its spectral gap is the expected matching's)", "an even number of ranks"},
    {"one-peer-exp-directed",
     "directed one-peer exponential graph (SGP's): step k sends to i + 2^k, averages what comes from i - 2^k",
     "at least 2 ranks (exact average per period for a power of two)"},
};

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

int log2_exact(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Nearest powers of two around n, for "what would work instead".
std::string nearby_powers_of_two(int n, const char* unit) {
  int lower = 1;
  while (lower * 2 <= n) lower *= 2;
  if (lower == n) return fmt::format("{} {}", n, unit);
  return lower >= 2 ? fmt::format("{} or {} {}", lower, lower * 2, unit) : fmt::format("{} {}", lower * 2, unit);
}

Round pairs_round(const std::vector<std::pair<int, int>>& pairs) {
  Round round;
  round.offsets.push_back(0);
  for (const auto& [a, b] : pairs) {
    round.members.push_back(std::min(a, b));
    round.members.push_back(std::max(a, b));
    round.offsets.push_back(static_cast<std::int32_t>(round.members.size()));
  }
  return round;
}

Round groups_round(const std::vector<std::vector<int>>& groups) {
  Round round;
  round.offsets.push_back(0);
  for (const auto& group : groups) {
    for (const int rank : group) round.members.push_back(rank);
    round.offsets.push_back(static_cast<std::int32_t>(round.members.size()));
  }
  return round;
}

Step single_round(Round round) {
  Step step;
  step.rounds.push_back(std::move(round));
  return step;
}

// XOR pairing at distance 2^k: what Decent-DP's greedy pairing (j, j + 2^k) produces
// for n a power of two.
Round xor_pairs(int n, int distance) {
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < n; ++i) {
    if ((i & distance) == 0) pairs.emplace_back(i, i ^ distance);
  }
  return pairs_round(pairs);
}

std::string check(const std::string& name, int n, int per_node) {
  const int nodes = n / per_node;
  if (name == "complete") return "";
  if (name == "ring" || name == "random-matching") {
    if (n % 2 != 0 || n < 2) {
      return fmt::format("{} needs an even number of ranks, got {}; use {} ranks", name, n,
                         n == 1 ? std::string("2") : fmt::format("{} or {}", n - 1, n + 1));
    }
    return "";
  }
  if (name == "one-peer-exp") {
    if (!power_of_two(n) || n < 2) {
      return fmt::format("one-peer-exp needs a power-of-two number of ranks, got {}; use {}", n,
                         nearby_powers_of_two(n, "ranks"));
    }
    return "";
  }
  if (name == "one-peer-exp-directed") {
    if (n < 2) return "one-peer-exp-directed needs at least 2 ranks, got 1";
    return "";
  }
  if (name == "exponential") {
    if (!power_of_two(n) || n < 4) {
      return fmt::format("exponential needs a power-of-two number of ranks >= 4, got {}; use {}", n,
                         nearby_powers_of_two(std::max(n, 4), "ranks"));
    }
    return "";
  }
  if (name == "alternating-exp-ring") {
    if (!power_of_two(nodes) || nodes < 2) {
      return fmt::format("alternating-exp-ring needs a power-of-two number of whole nodes >= 2, got {} node{} of {} "
                         "ranks; use {} (or one-peer-exp across all {} ranks)",
                         nodes, nodes == 1 ? "" : "s", per_node, nearby_powers_of_two(std::max(nodes, 2), "nodes"), n);
    }
    return "";
  }
  if (name == "torus") {
    if (!torus_shape(n)) {
      int up = n + 1;
      while (!torus_shape(up)) ++up;
      return fmt::format("torus needs ranks = rows x cols with both even and >= 4, got {}; the next size that works is {}",
                         n, up);
    }
    return "";
  }
  std::vector<std::string> names;
  for (const auto& t : kTopologies) names.emplace_back(t.name);
  return fmt::format("unknown topology '{}'{}; built-in topologies: {}", name, did_you_mean(name, names),
                     join_names(names));
}

}  // namespace

std::optional<std::pair<int, int>> torus_shape(int n) {
  std::optional<std::pair<int, int>> best;
  for (int rows = 4; rows * rows <= n; rows += 2) {
    if (n % rows == 0 && (n / rows) % 2 == 0) best = {{rows, n / rows}};
  }
  return best;
}

std::span<const TopologyInfo> topologies() { return kTopologies; }

std::optional<std::string> topology_unavailable(const std::string& name, int ranks, int ranks_per_node) {
  std::string problem = check(name, ranks, ranks_per_node);
  if (problem.empty()) return std::nullopt;
  return problem;
}

Topology make_topology(const std::string& name, int n, int per_node, std::uint64_t seed) {
  if (n < 1 || per_node < 1 || n % per_node != 0) {
    throw InputError::in_input("topology", fmt::format("{} ranks do not fill whole nodes of {}", n, per_node));
  }
  if (const std::string problem = check(name, n, per_node); !problem.empty()) {
    throw InputError::in_input("topology", problem);
  }
  Topology t;
  t.name = name;
  t.ranks = n;
  t.ranks_per_node = per_node;
  const int nodes = n / per_node;

  if (name == "complete") {
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    t.steps.push_back(single_round(groups_round({all})));
  } else if (name == "ring") {
    std::vector<std::pair<int, int>> even;
    std::vector<std::pair<int, int>> odd;
    for (int i = 0; i < n; i += 2) {
      even.emplace_back(i, i + 1);
      odd.emplace_back(i, (i - 1 + n) % n);
    }
    t.steps.push_back(single_round(pairs_round(even)));
    t.steps.push_back(single_round(pairs_round(odd)));
  } else if (name == "one-peer-exp") {
    for (int k = 0; k < log2_exact(n); ++k) t.steps.push_back(single_round(xor_pairs(n, 1 << k)));
  } else if (name == "alternating-exp-ring") {
    // Decent-DP's construction: node pairs by greedy pairing at distance 2^r; a running
    // pair counter decides which of the round's two slots the pair crosses nodes in.
    // Each round is written straight into its members and offsets: at 1,048,576 nodes a
    // list of small vectors per group cost 1.5 million allocations per step.
    int pair_counter = 0;
    const auto add_node = [per_node](Round& round, int node) {
      for (int i = 0; i < per_node; ++i) round.members.push_back(node * per_node + i);
    };
    const auto close_group = [](Round& round) {
      round.offsets.push_back(static_cast<std::int32_t>(round.members.size()));
    };
    for (int r = 0; r < log2_exact(nodes); ++r) {
      Round first;
      Round second;
      for (Round* round : {&first, &second}) {
        round->offsets.push_back(0);
        round->members.reserve(static_cast<std::size_t>(n));
      }
      std::vector<bool> used(static_cast<std::size_t>(nodes), false);
      for (int j = 0; j < nodes; ++j) {
        if (used[static_cast<std::size_t>(j)]) continue;
        const int partner = (j + (1 << r)) % nodes;
        used[static_cast<std::size_t>(j)] = used[static_cast<std::size_t>(partner)] = true;
        Round& cross = pair_counter % 2 == 0 ? second : first;
        Round& inside = pair_counter % 2 == 0 ? first : second;
        add_node(cross, j);
        add_node(cross, partner);
        close_group(cross);
        add_node(inside, j);
        close_group(inside);
        add_node(inside, partner);
        close_group(inside);
        ++pair_counter;
      }
      t.steps.push_back(single_round(std::move(first)));
      t.steps.push_back(single_round(std::move(second)));
    }
  } else if (name == "torus") {
    const std::pair<int, int> shape = *torus_shape(n);
    const int rows = shape.first;  // named: clang before 16 cannot capture structured bindings
    const int cols = shape.second;
    const auto at = [&](int row, int col) { return ((row + rows) % rows) * cols + (col + cols) % cols; };
    Step step;
    step.mixing = Mixing::neighbour_average;
    for (int parity = 0; parity < 2; ++parity) {
      std::vector<std::pair<int, int>> horizontal;
      std::vector<std::pair<int, int>> vertical;
      for (int row = 0; row < rows; ++row) {
        for (int col = parity; col < cols; col += 2) horizontal.emplace_back(at(row, col), at(row, col + 1));
      }
      for (int row = parity; row < rows; row += 2) {
        for (int col = 0; col < cols; ++col) vertical.emplace_back(at(row, col), at(row + 1, col));
      }
      step.rounds.push_back(pairs_round(horizontal));
      step.rounds.push_back(pairs_round(vertical));
    }
    t.steps.push_back(std::move(step));
  } else if (name == "exponential") {
    Step step;
    step.mixing = Mixing::neighbour_average;
    for (int k = 0; k < log2_exact(n); ++k) step.rounds.push_back(xor_pairs(n, 1 << k));
    t.steps.push_back(std::move(step));
  } else if (name == "one-peer-exp-directed") {
    for (int k = 0; k < log2_exact(n); ++k) {
      Step step;
      step.mixing = Mixing::push_average;
      step.shift = (1 << k) % n;
      t.steps.push_back(std::move(step));
    }
  } else if (name == "random-matching") {
    // Deterministic across platforms: splitmix64 (splitmix.hpp) and our own Fisher-Yates.
    std::uint64_t state = seed;
    const auto draw = [&state](int below) {
      return static_cast<int>(splitmix64(state) % static_cast<std::uint64_t>(below));
    };
    // Over many nodes a uniform matching pairs a rank with one of its own node with chance
    // (g - 1) / (n - 1) only; at 10^-3 or less the sample pairs whole nodes at random, and
    // the ranks of two paired nodes by a random rotation. Each rank still crosses nodes, as
    // all but that fraction do under a uniform matching, with every rank of its node beside
    // it on the NICs; and the ranks fall into one class, so the simulation's state no
    // longer grows with the ranks (a uniform sample took 13 s and 660 MiB at 131,072 GPUs:
    // its few same-node pairs split every rank into its own class). The spectral gap is the
    // uniform matching's either way (mixing_closed_form.cpp).
    const bool by_nodes = per_node > 1 && nodes % 2 == 0 &&
                          static_cast<std::int64_t>(per_node - 1) * 1000 <= static_cast<std::int64_t>(n) - 1;
    const int units = by_nodes ? nodes : n;
    std::vector<int> order(static_cast<std::size_t>(units));
    std::vector<int> pair_at_lowest(static_cast<std::size_t>(n));
    for (int s = 0; s < 16; ++s) {
      for (int i = 0; i < units; ++i) order[static_cast<std::size_t>(i)] = i;
      for (int i = units - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(draw(i + 1))]);
      std::vector<std::pair<int, int>> pairs;
      for (int i = 0; i < units; i += 2) {
        const int a = order[static_cast<std::size_t>(i)];
        const int b = order[static_cast<std::size_t>(i + 1)];
        if (!by_nodes) {
          pairs.emplace_back(a, b);
          continue;
        }
        const int rotation = draw(per_node);
        for (int k = 0; k < per_node; ++k) pairs.emplace_back(a * per_node + k, b * per_node + (k + rotation) % per_node);
      }
      // The groups in order of their lowest rank: every rank is in one pair, so a pass over
      // the ranks orders them (a sort took a third of the time at 1,048,576 GPUs).
      std::fill(pair_at_lowest.begin(), pair_at_lowest.end(), -1);
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        pair_at_lowest[static_cast<std::size_t>(std::min(pairs[i].first, pairs[i].second))] = static_cast<int>(i);
      }
      std::vector<std::pair<int, int>> ordered;
      ordered.reserve(pairs.size());
      for (const int i : pair_at_lowest) {
        if (i >= 0) ordered.push_back(pairs[static_cast<std::size_t>(i)]);
      }
      t.steps.push_back(single_round(pairs_round(ordered)));
    }
  }
  return t;
}

}  // namespace dtperf
