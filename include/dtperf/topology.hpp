#pragma once
// Gossip topologies as schedules: a topology repeats a period of steps; in each step
// every rank takes part in one or more exchange rounds, and in each round the ranks are
// partitioned into disjoint groups that average their parameters (Decent-DP runs one
// asynchronous all-reduce per group and bucket). Ranks are placed contiguously: rank i
// is on node i / ranks_per_node.
//
// Built in (the first four as Decent-DP's decent_dp/topo.py defines them):
//   complete              one group of all ranks: exact average every step
//   ring                  one-peer ring: pairs {2i, 2i+1} on even steps, {2i-1, 2i} on odd
//                         steps; n even
//   one-peer-exp          step k pairs i with i XOR 2^k (distance 2^k), k = 0..log2(n)-1;
//                         n a power of two
//   alternating-exp-ring  AER: node pairs at distance 2^r (r = 0..log2(N)-1); in one slot
//                         of a round a node pair forms one group of 2L ranks, in the other
//                         each node averages inside itself; neighbouring pairs take opposite
//                         slots, so about half the nodes cross at any step; N nodes a
//                         power of two >= 2; period 2 log2(N)
//   torus                 static 2-D torus of rows x cols ranks, row-major (the most square
//                         split with both sides even and >= 4): every step each rank averages
//                         with its four neighbours, exchanged in four pairwise rounds (two
//                         horizontal, two vertical matchings); mixing weight 1/5
//   exponential           static exponential graph: every step each rank averages with its
//                         log2(n) peers i XOR 2^k, exchanged in log2(n) pairwise rounds;
//                         mixing weight 1/(log2(n)+1); n a power of two
//   random-matching       a fresh random perfect matching each step (seeded, period 16)
//   one-peer-exp-directed the directed one-peer exponential graph (SGP's, Assran et al.
//                         2019): step k each rank sends to i + 2^k and receives from
//                         i - 2^k (mod n), and averages what it received with its own,
//                         x_i <- (x_i + x_{i-2^k}) / 2; k = 0..ceil(log2 n) - 1; any n >= 2,
//                         the exact average every period when n is a power of two. Each rank
//                         sends and receives one message per step (one-peer-exp exchanges
//                         both ways with one peer), under Decent-DP's per-bucket semantics.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dtperf {

/// A partition (or partial partition) of ranks into disjoint groups.
struct Round {
  std::vector<std::int32_t> members;  // groups back to back
  std::vector<std::int32_t> offsets;  // group g is members[offsets[g] .. offsets[g+1])
  std::size_t groups() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::span<const std::int32_t> group(std::size_t g) const {
    return {members.data() + offsets[g], static_cast<std::size_t>(offsets[g + 1] - offsets[g])};
  }
};

/// How a step's exchanges combine into the new parameters.
enum class Mixing : std::uint8_t {
  group_average,      // one round; each rank takes the mean of its group
  neighbour_average,  // several pairwise rounds; each rank takes the mean of itself and all
                      // the peers it met in the step (a static graph's uniform weights)
  push_average,       // directed: each rank sends to i + shift and averages itself with
                      // what it received from i - shift (no rounds)
};

struct Step {
  std::vector<Round> rounds;
  Mixing mixing = Mixing::group_average;
  int shift = 0;  // push_average: the distance every rank sends over, mod n
};

struct Topology {
  std::string name;
  int ranks = 0;
  int ranks_per_node = 1;
  std::vector<Step> steps;  // one period
  int period() const { return static_cast<int>(steps.size()); }
  int nodes() const { return ranks / ranks_per_node; }
  bool directed() const { return !steps.empty() && steps.front().mixing == Mixing::push_average; }
};

struct TopologyInfo {
  const char* name;
  const char* description;
  const char* constraint;  // what (ranks, node size) it needs, in words
  // Ranks average in small groups (gossip). False for `complete`: one group of all ranks
  // is an all-reduce of parameters, overlapped as Decent-DP runs it, not decentralized.
  bool gossip = true;
};

/// The built-in topologies, in a stable order.
std::span<const TopologyInfo> topologies();

/// Builds a topology for `ranks` ranks on nodes of `ranks_per_node`. Throws
/// InputError (at "--topology") when the name is unknown or its constraint fails; the
/// message says what would work instead (e.g. the nearest valid sizes).
Topology make_topology(const std::string& name, int ranks, int ranks_per_node,
                       std::uint64_t seed = 1);

/// The torus's shape for `ranks`: the most square split rows x cols (rows <= cols) with
/// both sides even and >= 4; none when `ranks` has no such split.
std::optional<std::pair<int, int>> torus_shape(int ranks);

/// Whether `name` can be built for this shape, and if not, why (the error message).
std::optional<std::string> topology_unavailable(const std::string& name, int ranks,
                                                int ranks_per_node);

}  // namespace dtperf
