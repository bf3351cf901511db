#pragma once
// Where the ranks of a calibration run live, and the communicators each measured group
// stands for. Nodes are ordered by their first rank; a rank's local rank is its index
// among the ranks of its node in rank order.
#include <string>
#include <vector>

namespace dtperf::calibrate {

/// One rank as the raw format's `world.placement` lists it.
struct RankPlace {
  int rank = 0;
  std::string node;         // grouping key: ranks with the same node name share a node
  std::string host;         // host name the rank reported
  int local_rank = 0;       // filled by Topology
  int device = 0;           // GPU ordinal; for a CPU rank, its local rank
  std::string device_name;  // GPU model, or "cpu: <model>"
  std::string bus_id;       // PCI bus id of the GPU, "" for a CPU rank
};

class Topology {
 public:
  /// From every rank's place (index = rank); computes nodes and local ranks.
  explicit Topology(std::vector<RankPlace> places);
  /// N nodes of R ranks each, named node0..; for plans made without a running world.
  static Topology uniform(int nodes, int ranks_per_node);

  int world_size() const { return static_cast<int>(places_.size()); }
  int node_count() const { return static_cast<int>(node_names_.size()); }
  /// The smallest number of ranks on any node (groups assume this many per node).
  int ranks_per_node() const { return ranks_per_node_; }
  bool uniform_nodes() const;
  const std::vector<RankPlace>& places() const { return places_; }
  const std::vector<std::string>& node_names() const { return node_names_; }
  /// The global rank of local rank `local` on node `node` (both must exist).
  int rank_at(int node, int local) const { return ranks_of_node_.at(node).at(local); }
  const std::vector<int>& ranks_of_node(int node) const { return ranks_of_node_.at(node); }
  int node_of(int rank) const { return node_of_rank_.at(rank); }

 private:
  std::vector<RankPlace> places_;
  std::vector<std::string> node_names_;
  std::vector<std::vector<int>> ranks_of_node_;
  std::vector<int> node_of_rank_;
  int ranks_per_node_ = 0;
};

/// The groups of the raw format, as `collectives[].group` names them.
/// `self`: every rank on a communicator of its own, all at once (GPU plans only): NCCL's
/// per-call floor and its local copy, with no link in the path.
enum class Group { world, node, one_per_node, pair_intra, pair_inter, two_nodes, self };
const char* group_name(Group group);

/// The communicators (lists of global ranks, ascending) that run at once when `group` is
/// measured with `concurrent_per_node` communicators of that shape per node:
///   world         all ranks (concurrent 1)
///   node          every node's ranks, one communicator per node (concurrent 1)
///   one_per_node  local rank l of every node, for l < concurrent
///   pair_intra    local ranks (2j, 2j+1) of node 0, for j < concurrent
///   pair_inter    local rank l of nodes 0 and 1, for l < concurrent
///   two_nodes     all ranks of nodes 0 and 1 (concurrent 1)
/// Returns no communicator, and sets `why_not`, when the topology cannot form the group
/// (too few nodes or ranks, or the group would be the same as `world`).
std::vector<std::vector<int>> group_communicators(const Topology& topology, Group group,
                                                  int concurrent_per_node, std::string* why_not);

}  // namespace dtperf::calibrate
