#include "topology.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtperf::calibrate {

Topology::Topology(std::vector<RankPlace> places) : places_(std::move(places)) {
  for (std::size_t rank = 0; rank < places_.size(); ++rank) {
    RankPlace& place = places_[rank];
    place.rank = static_cast<int>(rank);
    const auto found = std::find(node_names_.begin(), node_names_.end(), place.node);
    const int node = static_cast<int>(found - node_names_.begin());
    if (found == node_names_.end()) {
      node_names_.push_back(place.node);
      ranks_of_node_.emplace_back();
    }
    place.local_rank = static_cast<int>(ranks_of_node_[node].size());
    ranks_of_node_[node].push_back(place.rank);
    node_of_rank_.push_back(node);
  }
  ranks_per_node_ = 0;
  for (const auto& ranks : ranks_of_node_) {
    const int count = static_cast<int>(ranks.size());
    ranks_per_node_ = ranks_per_node_ == 0 ? count : std::min(ranks_per_node_, count);
  }
}

Topology Topology::uniform(int nodes, int ranks_per_node) {
  if (nodes < 1 || ranks_per_node < 1) throw std::invalid_argument("a topology needs at least one rank");
  std::vector<RankPlace> places;
  for (int node = 0; node < nodes; ++node) {
    for (int local = 0; local < ranks_per_node; ++local) {
      RankPlace place;
      place.node = "node" + std::to_string(node);
      place.host = place.node;
      places.push_back(place);
    }
  }
  return Topology(std::move(places));
}

bool Topology::uniform_nodes() const {
  return std::all_of(ranks_of_node_.begin(), ranks_of_node_.end(),
                     [&](const std::vector<int>& ranks) { return static_cast<int>(ranks.size()) == ranks_per_node_; });
}

const char* group_name(Group group) {
  switch (group) {
    case Group::world: return "world";
    case Group::node: return "node";
    case Group::one_per_node: return "one_per_node";
    case Group::pair_intra: return "pair_intra";
    case Group::pair_inter: return "pair_inter";
    case Group::two_nodes: return "two_nodes";
    case Group::self: return "self";
  }
  return "?";
}

namespace {

using Comms = std::vector<std::vector<int>>;

Comms refuse(std::string* why_not, const std::string& reason) {
  if (why_not != nullptr) *why_not = reason;
  return {};
}

Comms two_nodes_comms(const Topology& topology, std::string* why_not) {
  if (topology.node_count() < 3) {
    return refuse(why_not, topology.node_count() == 2 ? "same as world on 2 nodes" : "needs 2 nodes");
  }
  std::vector<int> ranks = topology.ranks_of_node(0);
  const std::vector<int>& second = topology.ranks_of_node(1);
  ranks.insert(ranks.end(), second.begin(), second.end());
  std::sort(ranks.begin(), ranks.end());
  return {ranks};
}

Comms unsorted_communicators(const Topology& topology, Group group, int concurrent_per_node,
                              std::string* why_not) {
  const int nodes = topology.node_count();
  const int per_node = topology.ranks_per_node();
  if (concurrent_per_node < 1) return refuse(why_not, "needs at least one communicator per node");
  const bool single = concurrent_per_node == 1;
  Comms comms;
  switch (group) {
    case Group::world:
      if (!single) return refuse(why_not, "world runs one communicator");
      if (topology.world_size() < 2) return refuse(why_not, "needs 2 ranks");
      comms.emplace_back();
      for (int rank = 0; rank < topology.world_size(); ++rank) comms.back().push_back(rank);
      return comms;
    case Group::node:
      if (!single) return refuse(why_not, "node runs one communicator per node");
      if (per_node < 2) return refuse(why_not, "needs 2 ranks per node");
      if (nodes == 1) return refuse(why_not, "same as world on 1 node");
      for (int node = 0; node < nodes; ++node) comms.push_back(topology.ranks_of_node(node));
      return comms;
    case Group::one_per_node:
      if (nodes < 2) return refuse(why_not, "needs 2 nodes");
      if (concurrent_per_node > per_node) return refuse(why_not, "more communicators than ranks per node");
      for (int local = 0; local < concurrent_per_node; ++local) {
        comms.emplace_back();
        for (int node = 0; node < nodes; ++node) comms.back().push_back(topology.rank_at(node, local));
      }
      return comms;
    case Group::pair_intra:
      if (2 * concurrent_per_node > per_node) return refuse(why_not, "needs 2 ranks per pair on one node");
      for (int pair = 0; pair < concurrent_per_node; ++pair) {
        comms.push_back({topology.rank_at(0, 2 * pair), topology.rank_at(0, 2 * pair + 1)});
      }
      return comms;
    case Group::pair_inter:
      if (nodes < 2) return refuse(why_not, "needs 2 nodes");
      if (concurrent_per_node > per_node) return refuse(why_not, "more pairs than ranks per node");
      for (int local = 0; local < concurrent_per_node; ++local) {
        comms.push_back({topology.rank_at(0, local), topology.rank_at(1, local)});
      }
      return comms;
    case Group::two_nodes:
      if (!single) return refuse(why_not, "two_nodes runs one communicator");
      return two_nodes_comms(topology, why_not);
    case Group::self:
      if (concurrent_per_node != per_node) return refuse(why_not, "self runs every rank alone at once");
      for (int rank = 0; rank < topology.world_size(); ++rank) comms.push_back({rank});
      return comms;
  }
  return refuse(why_not, "unknown group");
}

}  // namespace

std::vector<std::vector<int>> group_communicators(const Topology& topology, Group group,
                                                  int concurrent_per_node, std::string* why_not) {
  Comms comms = unsorted_communicators(topology, group, concurrent_per_node, why_not);
  for (std::vector<int>& ranks : comms) std::sort(ranks.begin(), ranks.end());
  return comms;
}

}  // namespace dtperf::calibrate
