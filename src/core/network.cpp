#include "dtperf/network.hpp"

#include <algorithm>
#include <cmath>

#include "dtperf/interpolate.hpp"

namespace dtperf {

double ReductionCost::time_s(double bytes) const {
  if (bytes_and_time_s.empty()) return 0.0;
  return interpolate(bytes_and_time_s, bytes, Axis::linear, Axis::linear);
}

double NetworkParams::rank_nic_cap_bytes_per_s() const {
  const double nics_per_rank =
      std::max(1.0, static_cast<double>(nics_per_node) / std::max(1, gpus_per_node));
  const double wire =
      std::min(nics_per_rank, static_cast<double>(nics_per_node)) * nic_line_bytes_per_s * transport_efficiency;
  return host_bytes_per_s > 0.0 ? std::min(wire, node_nic_bytes_per_s()) : wire;
}

int ring_node_crossings(int nodes, int ranks_per_node, int steps) {
  if (nodes <= 1) return 0;
  return (steps + ranks_per_node - 1) / ranks_per_node;
}

double ring_step_latency_s(const NetworkParams& net, int nodes, int ranks_per_node, int steps) {
  if (nodes <= 1) return steps * net.intra_latency_s;
  if (net.lockstep_ring) return steps * std::max(net.inter_latency_s, net.intra_latency_s);
  const int inter = ring_node_crossings(nodes, ranks_per_node, steps);
  return (steps - inter) * net.intra_latency_s + inter * net.inter_latency_s;
}

RingSteps allreduce_ring_steps(int nodes, int ranks_per_node) {
  const int steps = 2 * (nodes * ranks_per_node - 1);
  const int inter = ring_node_crossings(nodes, ranks_per_node, steps);
  return {.intra = steps - inter, .inter = inter};
}

namespace {

int ceil_log2(int n) {
  int steps = 0;
  for (int reach = 1; reach < n; reach *= 2) ++steps;
  return steps;
}

/// Bytes/s this group's ranks on one node get from that node's NICs: each rank its rail
/// (the rank's cap), or, where more ranks cross at once than the NICs carry at that cap,
/// an equal share of the node's rate; where those ranks belong to other groups too, of
/// what the groups' flows reach together (shared_nic_efficiency of the node's rate). A
/// group alone leaves its node as one flow per ring channel, whatever its ranks there.
double group_nic_bytes_per_s(const NetworkParams& net, const GroupShape& group) {
  const int crossing = std::max(group.crossing_ranks_per_node, group.ranks_per_node);
  const double cap = net.rank_nic_cap_bytes_per_s();
  const double share = net.node_nic_bytes_per_s() / crossing;
  const double flows_loss = crossing > group.ranks_per_node ? net.shared_nic_efficiency : 1.0;
  const double per_rank = share < cap ? share * flows_loss : cap;
  return per_rank * group.ranks_per_node;
}

// Log-log interpolation in a measured table, clamped at both ends (callers stay inside).
double table_time_s(const CollectiveTable& table, double bytes) {
  return interpolate(table.bytes_and_time_s, bytes, Axis::log, Axis::log);
}

CollectiveCost ring_cost(const NetworkParams& net, const GroupShape& g, double bytes) {
  const int p = g.ranks();
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  const double wire = bytes / net.compression_ratio;
  const double per_rank = 2.0 * (p - 1) / p * wire;  // bytes each rank sends
  CollectiveCost cost;
  cost.algorithm = Algorithm::ring;
  // 2(p-1) steps: NCCL's pipelined chunks pay the inter-node latency on the crossings, a
  // lockstep ring (gloo) on every step (ring_step_latency_s).
  const double latency = ring_step_latency_s(net, m, r, 2 * (p - 1));
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
  if (m == 1 || net.lockstep_ring) return false;  // a lockstep library (gloo) runs rings only
  const double wire = bytes / net.compression_ratio;
  const double bus = r > 1 ? std::min(group_nic_bytes_per_s(net, g), net.intra_bytes_per_s) : group_nic_bytes_per_s(net, g);
  const double ring = 2.0 * (p - m) * net.intra_latency_s + 2.0 * (m - 1) * net.inter_latency_s +
                      2.0 * (p - 1) / p * wire / bus;
  const double tree = 2.0 * ((r - 1) * net.intra_latency_s + ceil_log2(m) * net.inter_latency_s) +
                      wire / (0.5 * 0.9 * bus);
  return tree < ring;
}

CollectiveCost allreduce_formula(const NetworkParams& net, const GroupShape& group, double bytes, Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::ring: return ring_cost(net, group, bytes);
    case Algorithm::tree: return tree_cost(net, group, bytes);
    case Algorithm::hierarchical: return hierarchical_cost(net, group, bytes);
    case Algorithm::automatic: break;
  }
  return nccl_prefers_tree(net, group, bytes) ? tree_cost(net, group, bytes) : ring_cost(net, group, bytes);
}

// A ring pass in which each rank sends `per_rank` bytes over `steps` pipelined steps
// (ring_node_crossings of them across nodes, as in the all-reduce ring).
CollectiveCost ring_pass(const NetworkParams& net, const GroupShape& g, double per_rank, int steps_per_rank) {
  const int m = g.nodes;
  const int r = g.ranks_per_node;
  CollectiveCost cost;
  cost.algorithm = Algorithm::ring;
  cost.time_s = ring_step_latency_s(net, m, r, steps_per_rank);
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

// The transfer of a point-to-point send, without the framework's launch work.
CollectiveCost pair_transfer_cost(const NetworkParams& net, const GroupShape& pair, double bytes) {
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

// The formula alone, for a group of at least 2 ranks and a positive size.
CollectiveCost formula_cost(const NetworkParams& net, const GroupShape& g, Collective collective, double bytes,
                            Algorithm algorithm) {
  const int n = g.ranks();
  const double wire = bytes / net.compression_ratio;
  switch (collective) {
    case Collective::all_reduce:
      return allreduce_formula(net, g, bytes, algorithm);
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
      if (g.nodes <= 1) return pair_transfer_cost(net, g, bytes);
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

// ---- Measured tables ------------------------------------------------------------------
//
// A table measured on one shape (nccl-tests on m0 nodes with r ranks each) is the truth
// there; the formula with the profile's link parameters follows it only as far as one
// latency and one bandwidth can (NCCL's protocol, channel and algorithm switches make mid
// sizes slower than any one line). Used only at its own shape, a table from 8 nodes made
// 8 nodes slower than 7 or 9. So the table's ratio to the formula at its own shape, size
// by size, corrects the formula at every node count with the same ranks per node:
//   t(m nodes, S) = formula_A(m, S) x table(S) / formula_A(m0, S),
// with one all-reduce algorithm A in both: the one the tuner picks at the measured shape
// (or the one asked for). The table measured what that algorithm did at m0, so its ratio
// corrects that algorithm's formula; carried onto another algorithm's formula (the tuner's
// pick at m), a ring's measured 16 MiB on 2 nodes became a tree's at 4 and the predicted
// time fell as nodes were added (Azure A100 nccl-tests: 16 and 32 MiB on 32 ranks 16-22 %
// short from the 16-rank table, 11 and 9 % with one algorithm). At the measured shape t is
// the table; at other node counts it moves as the formula does, so the measured shape is no
// step in the curve. Sizes outside the table take the ratio at its nearest end. The ratio
// does not carry to other ranks per node (nor from several nodes to one): on the same two
// DGX H100 nodes, 8 GPUs each took 3-14x as long as 1 GPU each from 1 to 16 MiB, and
// carried over, that log's ratio made the 1-GPU runs 3.8x too slow (geometric mean from
// 1 MiB), where the formula alone is 18 % off.

/// The table of `collective` that speaks for `g`: same ranks per node, on one node when
/// `g` is, else the nearest node count (by |ln| of the ratio; the first on a tie).
/// nullptr when there is none.
const CollectiveTable* nearest_table(const NetworkParams& net, const GroupShape& g, Collective collective) {
  const CollectiveTable* best = nullptr;
  double best_distance = 0.0;
  for (const auto& t : net.tables) {
    if (t.collective != name_of(collective) || t.bytes_and_time_s.empty() || t.ranks < 2 || t.nodes < 1 ||
        t.ranks != t.nodes * g.ranks_per_node || (t.nodes > 1) != (g.nodes > 1)) {
      continue;
    }
    const double distance = std::abs(std::log(static_cast<double>(t.nodes) / g.nodes));
    if (best == nullptr || distance < best_distance) {
      best = &t;
      best_distance = distance;
    }
  }
  return best;
}

/// The formula's cost on `g`, corrected by the nearest measured table (see above).
CollectiveCost corrected_cost(const NetworkParams& net, const GroupShape& g, Collective collective, double bytes,
                              Algorithm algorithm) {
  const CollectiveTable* table = nearest_table(net, g, collective);
  if (table == nullptr) return formula_cost(net, g, collective, bytes, algorithm);
  const auto& points = table->bytes_and_time_s;
  const double measured_bytes = std::clamp(bytes / net.compression_ratio, points.front().first, points.back().first);
  NetworkParams plain = net;  // the table was measured uncompressed, on otherwise idle nodes
  plain.compression_ratio = 1.0;
  plain.tables = {};
  const GroupShape shape{table->nodes, g.ranks_per_node, 0};
  const CollectiveCost at_table = formula_cost(plain, shape, collective, measured_bytes, algorithm);
  CollectiveCost cost = formula_cost(net, g, collective, bytes, at_table.algorithm);
  if (at_table.time_s > 0.0) cost.time_s *= table_time_s(*table, measured_bytes) / at_table.time_s;
  return cost;
}

}  // namespace

CollectiveCost collective_cost(const NetworkParams& net, const GroupShape& g, Collective collective, double bytes,
                               Algorithm algorithm) {
  if (g.ranks() <= 1 || bytes <= 0.0) return CollectiveCost{0.0, Algorithm::ring, 0.0, 0.0};
  CollectiveCost cost = corrected_cost(net, g, collective, bytes, algorithm);
  cost.time_s += net.launch_s;
  cost.launch_s = net.launch_s;
  return cost;
}

CollectiveCost allreduce_cost(const NetworkParams& net, const GroupShape& group, double bytes,
                              Algorithm algorithm) {
  return collective_cost(net, group, Collective::all_reduce, bytes, algorithm);
}

CollectiveCost pair_send_cost(const NetworkParams& net, const GroupShape& pair, double bytes) {
  CollectiveCost cost = pair_transfer_cost(net, pair, bytes);
  cost.time_s += net.launch_s;
  cost.launch_s = net.launch_s;
  return cost;
}

}  // namespace dtperf
