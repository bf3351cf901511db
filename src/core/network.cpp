#include "dtperf/network.hpp"

#include <algorithm>
#include <cmath>

namespace dtperf {

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::automatic: return "auto";
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(const std::string& name) {
  if (name == "auto") return Algorithm::automatic;
  if (name == "ring") return Algorithm::ring;
  if (name == "tree") return Algorithm::tree;
  if (name == "hierarchical") return Algorithm::hierarchical;
  return std::nullopt;
}

double ReductionCost::time_s(double bytes) const {
  const auto& p = bytes_and_time_s;
  if (p.empty()) return 0.0;
  if (bytes <= p.front().first) return p.front().second;
  if (bytes >= p.back().first) return p.back().second;
  const auto upper = std::lower_bound(p.begin(), p.end(), bytes,
                                      [](const auto& point, double b) { return point.first < b; });
  const auto lower = upper - 1;
  const double fraction = (bytes - lower->first) / (upper->first - lower->first);
  return lower->second + fraction * (upper->second - lower->second);
}

double NetworkParams::rank_nic_cap_bytes_per_s() const {
  const double nics_per_rank =
      std::max(1.0, static_cast<double>(nics_per_node) / std::max(1, gpus_per_node));
  const double wire =
      std::min(nics_per_rank, static_cast<double>(nics_per_node)) * nic_line_bytes_per_s * transport_efficiency;
  return host_bytes_per_s > 0.0 ? std::min(wire, node_nic_bytes_per_s()) : wire;
}

namespace {

int ceil_log2(int n) {
  int steps = 0;
  for (int reach = 1; reach < n; reach *= 2) ++steps;
  return steps;
}

/// Bytes/s this group's ranks on one node get from that node's NICs.
double group_nic_bytes_per_s(const NetworkParams& net, const GroupShape& group) {
  const int crossing = std::max(group.crossing_ranks_per_node, group.ranks_per_node);
  const double per_rank =
      std::min(net.rank_nic_cap_bytes_per_s(), net.node_nic_bytes_per_s() / crossing);
  return per_rank * group.ranks_per_node;
}

// Log-log interpolation in a measured table; beyond the largest size the last
// segment's bandwidth carries on, below the smallest the smallest time holds.
double table_time_s(const CollectiveTable& table, double bytes) {
  const auto& p = table.bytes_and_time_s;
  if (bytes <= p.front().first) return p.front().second;
  if (bytes >= p.back().first) {
    if (p.size() < 2) return p.back().second * bytes / p.back().first;
    const auto& a = p[p.size() - 2];
    const auto& b = p.back();
    const double seconds_per_byte = (b.second - a.second) / (b.first - a.first);
    return b.second + std::max(0.0, seconds_per_byte) * (bytes - b.first);
  }
  const auto upper = std::lower_bound(p.begin(), p.end(), bytes,
                                      [](const auto& point, double b) { return point.first < b; });
  const auto lower = upper - 1;
  const double fraction =
      std::log(bytes / lower->first) / std::log(upper->first / lower->first);
  return std::exp(std::log(lower->second) + fraction * std::log(upper->second / lower->second));
}

const CollectiveTable* find_table(const NetworkParams& net, const GroupShape& group) {
  // A table measured on an otherwise idle node does not know about NIC sharing.
  if (group.crossing_ranks_per_node > group.ranks_per_node) return nullptr;
  for (const auto& table : net.tables) {
    if (table.collective == "all_reduce" && table.ranks == group.ranks() &&
        table.nodes == group.nodes && !table.bytes_and_time_s.empty()) {
      return &table;
    }
  }
  return nullptr;
}

CollectiveCost ring_cost(const NetworkParams& net, const GroupShape& g, double bytes) {
  const int p = g.ranks();
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  const double wire = bytes / net.compression_ratio;
  const double per_rank = 2.0 * (p - 1) / p * wire;  // bytes each rank sends
  CollectiveCost cost;
  cost.algorithm = Algorithm::ring;
  // 2(p-1) pipelined steps; 2(m-1) of them cross nodes (NCCL's ring latency).
  double latency = 2.0 * (p - m) * net.intra_latency_s + 2.0 * (m - 1) * net.inter_latency_s;
  double transfer = 0.0;
  if (m == 1) {
    transfer = per_rank / net.intra_bytes_per_s;
    cost.intra_bytes_per_rank = per_rank;
  } else {
    // Every ring channel leaves each node once, so a node's NICs carry what one
    // rank sends; the other r-1 hops of the node run on intra-node links.
    const double inter = per_rank / group_nic_bytes_per_s(net, g);
    const double intra = r > 1 ? per_rank / net.intra_bytes_per_s : 0.0;
    transfer = std::max(inter, intra);
    cost.intra_bytes_per_rank = per_rank * (r - 1) / r;
    cost.inter_bytes_per_node = per_rank;
  }
  const double reduce = (p - 1) * net.reduction.time_s(bytes / p);
  cost.time_s = latency + transfer + reduce;
  return cost;
}

CollectiveCost tree_cost(const NetworkParams& net, const GroupShape& g, double bytes) {
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  if (m == 1) return ring_cost(net, g, bytes);
  const double wire = bytes / net.compression_ratio;
  CollectiveCost cost;
  cost.algorithm = Algorithm::tree;
  // NCCL's tree latency: a chain inside the node and a double binary tree of depth
  // log2(m) across nodes, walked up (reduce) and down (broadcast).
  const double latency = 2.0 * ((r - 1) * net.intra_latency_s + ceil_log2(m) * net.inter_latency_s);
  // Two trees, each carrying half the data. The busiest node is inner in one tree and
  // a leaf in the other: it sends S/2 + S/2 up while reducing and S/2 to each of two
  // children while broadcasting, 2S per direction. With two nodes each node roots one
  // tree and is the leaf of the other: S per direction, half of what a ring moves.
  const double inter_bytes = (m == 2 ? 1.0 : 2.0) * wire;
  const double intra_bytes = r > 1 ? 2.0 * (r - 1) / r * wire : 0.0;
  const double transfer = std::max(inter_bytes / group_nic_bytes_per_s(net, g),
                                   intra_bytes / net.intra_bytes_per_s);
  cost.inter_bytes_per_node = inter_bytes;
  cost.intra_bytes_per_rank = intra_bytes;
  cost.time_s = latency + transfer + net.reduction.time_s(bytes);
  return cost;
}

CollectiveCost hierarchical_cost(const NetworkParams& net, const GroupShape& g, double bytes) {
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  if (m == 1 || r == 1) {
    CollectiveCost cost = ring_cost(net, g, bytes);
    cost.algorithm = Algorithm::hierarchical;
    return cost;
  }
  const double wire = bytes / net.compression_ratio;
  CollectiveCost cost;
  cost.algorithm = Algorithm::hierarchical;
  // Reduce-scatter inside the node, all-reduce of S/r across nodes on r parallel
  // rings that share the node's NICs, all-gather inside the node.
  const double intra_phase = (r - 1) * net.intra_latency_s + (r - 1.0) / r * wire / net.intra_bytes_per_s;
  const double inter_bytes = 2.0 * (m - 1) / m * wire;
  const double inter_phase = 2.0 * (m - 1) * net.inter_latency_s +
                             inter_bytes / group_nic_bytes_per_s(net, g);
  const double reduce = (r - 1) * net.reduction.time_s(bytes / r) +
                        (m - 1) * net.reduction.time_s(bytes / (static_cast<double>(r) * m));
  cost.time_s = 2.0 * intra_phase + inter_phase + reduce;
  cost.intra_bytes_per_rank = 2.0 * (r - 1.0) / r * wire;
  cost.inter_bytes_per_node = inter_bytes;
  return cost;
}

// The choice NCCL's tuner makes (src/graph/tuning.cc): both algorithms get the same bus
// bandwidth, the tree 10 % less and an algorithm bandwidth of half of it, the ring
// n / 2(n-1) of it; latencies as above. So the tree wins only where latency dominates:
// small messages on many nodes. (Our tree cost on two nodes is lower than NCCL's model of
// it, but NCCL does not know that and takes the ring for large messages.)
bool nccl_prefers_tree(const NetworkParams& net, const GroupShape& g, double bytes) {
  const int p = g.ranks();
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  if (m == 1) return false;
  const double wire = bytes / net.compression_ratio;
  const double bus = r > 1 ? std::min(group_nic_bytes_per_s(net, g), net.intra_bytes_per_s) : group_nic_bytes_per_s(net, g);
  const double ring = 2.0 * (p - m) * net.intra_latency_s + 2.0 * (m - 1) * net.inter_latency_s +
                      2.0 * (p - 1) / p * wire / bus;
  const double tree = 2.0 * ((r - 1) * net.intra_latency_s + ceil_log2(m) * net.inter_latency_s) +
                      wire / (0.5 * 0.9 * bus);
  return tree < ring;
}

}  // namespace

CollectiveCost allreduce_cost(const NetworkParams& net, const GroupShape& group, double bytes,
                              Algorithm algorithm) {
  if (group.ranks() <= 1 || bytes <= 0.0) return CollectiveCost{0.0, Algorithm::ring, 0.0, 0.0};
  CollectiveCost cost;
  switch (algorithm) {
    case Algorithm::ring: cost = ring_cost(net, group, bytes); break;
    case Algorithm::tree: cost = tree_cost(net, group, bytes); break;
    case Algorithm::hierarchical: cost = hierarchical_cost(net, group, bytes); break;
    case Algorithm::automatic:
      cost = nccl_prefers_tree(net, group, bytes) ? tree_cost(net, group, bytes) : ring_cost(net, group, bytes);
      break;
  }
  if (const CollectiveTable* table = find_table(net, group)) {
    cost.time_s = table_time_s(*table, bytes / net.compression_ratio);
  }
  return cost;
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::alltoall: return "alltoall";
    case Collective::sendrecv: return "sendrecv";
    case Collective::broadcast: return "broadcast";
  }
  return "?";
}

std::optional<Collective> parse_collective(const std::string& name) {
  for (const Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                             Collective::alltoall, Collective::sendrecv, Collective::broadcast}) {
    if (name == collective_name(c)) return c;
  }
  return std::nullopt;
}

namespace {

// A ring pass in which each rank sends `per_rank` bytes over `steps` pipelined steps
// (steps crossing nodes: one per node, as in the all-reduce ring).
CollectiveCost ring_pass(const NetworkParams& net, const GroupShape& g, double per_rank, int steps_per_rank) {
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  CollectiveCost cost;
  cost.algorithm = Algorithm::ring;
  const double crossing_steps = m > 1 ? static_cast<double>(m - 1) * steps_per_rank / (g.ranks() - 1) : 0.0;
  cost.time_s = (steps_per_rank - crossing_steps) * net.intra_latency_s + crossing_steps * net.inter_latency_s;
  if (m == 1) {
    cost.time_s += per_rank / net.intra_bytes_per_s;
    cost.intra_bytes_per_rank = per_rank;
  } else {
    const double inter = per_rank / group_nic_bytes_per_s(net, g);
    const double intra = r > 1 ? per_rank / net.intra_bytes_per_s : 0.0;
    cost.time_s += std::max(inter, intra);
    cost.intra_bytes_per_rank = per_rank * (r - 1) / r;
    cost.inter_bytes_per_node = per_rank;
  }
  return cost;
}

}  // namespace

CollectiveCost collective_cost(const NetworkParams& net, const GroupShape& g, Collective collective, double bytes,
                               Algorithm algorithm) {
  const int n = g.ranks();
  if (n <= 1 || bytes <= 0.0) return CollectiveCost{0.0, Algorithm::ring, 0.0, 0.0};
  const double wire = bytes / net.compression_ratio;
  switch (collective) {
    case Collective::all_reduce:
      return allreduce_cost(net, g, bytes, algorithm);
    case Collective::all_gather:
      return ring_pass(net, g, (n - 1.0) / n * wire, n - 1);
    case Collective::reduce_scatter: {
      CollectiveCost cost = ring_pass(net, g, (n - 1.0) / n * wire, n - 1);
      cost.time_s += (n - 1) * net.reduction.time_s(bytes / n);
      return cost;
    }
    case Collective::broadcast:
      return ring_pass(net, g, wire, n - 1);
    case Collective::alltoall: {
      const int r = g.ranks_per_node;
      CollectiveCost cost;
      cost.algorithm = Algorithm::ring;
      const double intra_bytes = (r - 1.0) / n * wire;
      const double inter_bytes_per_rank = static_cast<double>(n - r) / n * wire;
      double transfer = r > 1 ? intra_bytes / net.intra_bytes_per_s : 0.0;
      if (g.nodes > 1) {
        transfer = std::max(transfer, inter_bytes_per_rank * r / group_nic_bytes_per_s(net, g));
        cost.inter_bytes_per_node = inter_bytes_per_rank * r;
      }
      cost.intra_bytes_per_rank = intra_bytes;
      cost.time_s = (g.nodes > 1 ? net.inter_latency_s : net.intra_latency_s) + transfer;
      return cost;
    }
    case Collective::sendrecv: {
      if (g.nodes <= 1) return pair_send_cost(net, g, bytes);
      const GroupShape crossing{g.nodes, 1, 1};  // one rank per node sends across
      CollectiveCost cost;
      cost.algorithm = Algorithm::ring;
      const double inter = net.inter_latency_s + wire / group_nic_bytes_per_s(net, crossing);
      const double intra = g.ranks_per_node > 1 ? net.intra_latency_s + wire / net.intra_bytes_per_s : 0.0;
      cost.time_s = std::max(inter, intra);
      cost.inter_bytes_per_node = wire;
      cost.intra_bytes_per_rank = g.ranks_per_node > 1 ? wire : 0.0;
      return cost;
    }
  }
  return CollectiveCost{};
}

CollectiveCost pair_send_cost(const NetworkParams& net, const GroupShape& pair, double bytes) {
  const double wire = bytes / net.compression_ratio;
  CollectiveCost cost;
  cost.algorithm = Algorithm::ring;
  if (pair.nodes <= 1) {
    cost.time_s = net.intra_latency_s + wire / net.intra_bytes_per_s;
    cost.intra_bytes_per_rank = wire;
  } else {
    GroupShape one_rank = pair;
    one_rank.ranks_per_node = 1;
    cost.time_s = net.inter_latency_s + wire / group_nic_bytes_per_s(net, one_rank);
    cost.inter_bytes_per_node = wire;
  }
  return cost;
}

}  // namespace dtperf
