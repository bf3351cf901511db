#pragma once
// Internal: a topology compiled for simulation (see gossip.hpp). Ranks are reduced to
// classes by colour refinement; each step's rounds become groups of classes with the
// placement (shape) of the rank groups they stand for.
#include <cstdint>
#include <vector>

#include "dtperf/gossip.hpp"
#include "dtperf/network.hpp"

namespace dtperf {

/// Placement of a group: nodes spanned, most ranks on one node, ranks of the busiest
/// node crossing nodes in that round (sharing its NICs), and group size.
struct Placement {
  int nodes = 1;
  int ranks_per_node = 1;
  int crossing_per_node = 0;
  int size = 1;
  bool operator<(const Placement& o) const;
  GroupShape shape() const { return {nodes, ranks_per_node, crossing_per_node}; }
};

struct ClassGroup {
  std::uint32_t placement = 0;
  std::uint32_t first = 0;  // into CompiledSchedule::group_classes
  std::uint32_t count = 0;
  std::uint32_t crosses_nodes = 0;  // placements[placement].nodes > 1 (uses the inter-node stream)
  // The representative's rank group, numbered by its set of ranks: the same number in two
  // steps is the same process group, whose collectives queue on the same threads.
  std::uint32_t process_group = 0;
};

struct CompiledRound {
  std::uint32_t first_group = 0;
  std::uint32_t group_count = 0;
};

struct CompiledStep {
  std::uint32_t first_round = 0;
  std::uint32_t round_count = 0;
};

/// How many rank groups of one placement a step has, for traffic accounting.
struct PlacementCount {
  std::uint32_t step = 0;
  std::uint32_t placement = 0;
  double groups = 0.0;
};

struct CompiledSchedule {
  int ranks = 0;
  int ranks_per_node = 1;
  int period = 0;
  int classes = 0;
  std::vector<std::int32_t> class_of_rank;
  std::vector<double> class_size;  // ranks per class
  std::vector<Placement> placements;
  std::vector<CompiledStep> steps;
  std::vector<CompiledRound> rounds;
  std::vector<ClassGroup> groups;
  std::vector<std::uint32_t> group_classes;
  std::vector<PlacementCount> counts;

  // Directed schedules (SGP, D-PSGD): per step, class and peer, the class sent to and
  // received from, and the placement of each transfer (a pair; crossing counts the
  // senders of the node whose transfers leave it). Each rank sends `peers` messages per
  // step and receives as many.
  bool directed = false;
  int peers = 1;
  std::vector<std::int32_t> send_to;       // [(step * classes + class) * peers + peer]
  std::vector<std::int32_t> receive_from;
  std::vector<std::uint32_t> send_placement;
  std::vector<std::uint32_t> receive_placement;
};

}  // namespace dtperf
