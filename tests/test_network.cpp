// Collective cost model: the arithmetic of ring, tree and hierarchical all-reduce,
// NIC sharing, calibrated tables and the [NET] reduction term.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "dtperf/network.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// 8 nodes x 8 GPUs, intra 100 GB/s per GPU, 1 NIC of 100 Gbit/s = 12.5 GB/s, no latency.
NetworkParams eight_by_eight() {
  NetworkParams n;
  n.nodes = 8;
  n.gpus_per_node = 8;
  n.intra_bytes_per_s = 100e9;
  n.nics_per_node = 1;
  n.nic_line_bytes_per_s = 12.5e9;
  n.transport_efficiency = 1.0;
  return n;
}

}  // namespace

TEST_CASE("a multi-node ring is limited by the node's NICs", "[network][ring]") {
  const NetworkParams net = eight_by_eight();
  const GroupShape world{8, 8, 8};
  // p = 64, S = 100 MB: each rank sends 2*63/64*100 MB = 196.875 MB; one ring channel
  // leaves each node once, so the NIC carries that at 12.5 GB/s => 15.75 ms.
  const CollectiveCost c = allreduce_cost(net, world, 100e6, Algorithm::ring);
  CHECK_THAT(c.time_s, WithinRel(196.875e6 / 12.5e9, 1e-12));
  CHECK_THAT(c.inter_bytes_per_node, WithinRel(196.875e6, 1e-12));
  // 7 of 8 hops of a node are NVLink: average intra bytes per rank 7/8 of 196.875 MB.
  CHECK_THAT(c.intra_bytes_per_rank, WithinRel(196.875e6 * 7 / 8, 1e-12));
}

TEST_CASE("ring latency counts the node crossings on the slowest chunk's path", "[network][ring]") {
  NetworkParams net = eight_by_eight();
  net.intra_latency_s = 1e-6;
  net.inter_latency_s = 10e-6;
  // 2(p-1) = 126 steps; every 8th hop of the ring leaves a node, so a window of 126 hops
  // holds at most ceil(126 / 8) = 16 crossings (NCCL's model counts 2(m-1) = 14):
  // 110 x 1 us + 16 x 10 us = 270 us on top of the bandwidth term of 8 bytes (tiny).
  const CollectiveCost c = allreduce_cost(net, GroupShape{8, 8, 8}, 8.0, Algorithm::ring);
  CHECK_THAT(c.time_s, WithinRel(270e-6 + 2.0 * 63 / 64 * 8.0 / 12.5e9, 1e-9));
  // One rank per node: every hop crosses, 2(m-1) = 14 of 14 steps: 140 us.
  net.gpus_per_node = 1;
  const CollectiveCost one = allreduce_cost(net, GroupShape{8, 1, 1}, 8.0, Algorithm::ring);
  CHECK_THAT(one.time_s, WithinRel(140e-6 + 2.0 * 7 / 8 * 8.0 / 12.5e9, 1e-9));
  // 2 nodes x 2 ranks: 6 steps, ceil(6 / 2) = 3 across nodes, 3 inside: 33 us.
  net.gpus_per_node = 2;
  const CollectiveCost two = allreduce_cost(net, GroupShape{2, 2, 2}, 8.0, Algorithm::ring);
  CHECK_THAT(two.time_s, WithinRel(33e-6 + 2.0 * 3 / 4 * 8.0 / 12.5e9, 1e-9));
}

TEST_CASE("a lockstep ring (gloo) pays the slowest hop's latency at every step", "[network][ring]") {
  NetworkParams net = eight_by_eight();
  net.gpus_per_node = 2;
  net.intra_latency_s = 1e-6;
  net.inter_latency_s = 10e-6;
  net.lockstep_ring = true;
  const double bandwidth_s = 2.0 * 3 / 4 * 8.0 / 12.5e9;
  // 2 nodes x 2 ranks: all 6 steps at 10 us (NCCL's pipelined chunks: 3 x 10 + 3 x 1 = 33 us).
  const CollectiveCost two = allreduce_cost(net, GroupShape{2, 2, 2}, 8.0, Algorithm::ring);
  CHECK_THAT(two.time_s, WithinRel(60e-6 + bandwidth_s, 1e-9));
  // Inside one node every hop is the node's: 6 x 1 us, as without lockstep.
  net.nodes = 1;
  net.gpus_per_node = 4;
  const CollectiveCost one_node = allreduce_cost(net, GroupShape{1, 4, 4}, 8.0, Algorithm::ring);
  net.lockstep_ring = false;
  CHECK(one_node.time_s == allreduce_cost(net, GroupShape{1, 4, 4}, 8.0, Algorithm::ring).time_s);
  CHECK_THAT(one_node.time_s, WithinRel(6e-6 + 2.0 * 3 / 4 * 8.0 / 100e9, 1e-9));
  // A lockstep library runs rings only: where NCCL's tuner takes the tree (a small
  // message on 8 nodes), the automatic choice is still the ring.
  net = eight_by_eight();
  net.inter_latency_s = 10e-6;
  CHECK(allreduce_cost(net, GroupShape{8, 8, 8}, 8.0, Algorithm::automatic).algorithm == Algorithm::tree);
  net.lockstep_ring = true;
  const CollectiveCost lockstep = allreduce_cost(net, GroupShape{8, 8, 8}, 8.0, Algorithm::automatic);
  CHECK(lockstep.algorithm == Algorithm::ring);
  // 126 steps x 10 us.
  CHECK_THAT(lockstep.time_s, WithinRel(1260e-6 + 2.0 * 63 / 64 * 8.0 / 12.5e9, 1e-9));
}

TEST_CASE("a single-node ring runs at the intra-node bandwidth", "[network][ring]") {
  const NetworkParams net = eight_by_eight();
  // p = 8 on one node: 2*7/8*1 GB = 1.75 GB at 100 GB/s => 17.5 ms, no NIC bytes.
  const CollectiveCost c = allreduce_cost(net, GroupShape{1, 8, 8}, 1e9, Algorithm::ring);
  CHECK_THAT(c.time_s, WithinRel(17.5e-3, 1e-12));
  CHECK(c.inter_bytes_per_node == 0.0);
}

TEST_CASE("the ring bandwidth term tends to 2S/B as the ring grows", "[network][ring][property]") {
  NetworkParams net = eight_by_eight();
  const double bytes = 1e9;
  double previous = 0.0;
  for (int nodes : {2, 4, 16, 64, 1024}) {
    net.nodes = nodes;
    const double t = allreduce_cost(net, GroupShape{nodes, 8, 8}, bytes, Algorithm::ring).time_s;
    CHECK(t > previous);  // more ranks, never cheaper
    CHECK(t < 2.0 * bytes / 12.5e9);
    previous = t;
  }
  CHECK_THAT(previous, WithinRel(2.0 * bytes / 12.5e9, 1e-3));
}

TEST_CASE("hierarchical all-reduce sends 2(m-1)/m of the message through the NICs", "[network][hierarchical]") {
  const NetworkParams net = eight_by_eight();
  // S = 800 MB, r = 8, m = 8. Intra reduce-scatter 7/8*800 MB at 100 GB/s = 7 ms, the
  // same for the all-gather; across nodes 2*7/8*800 MB = 1.4 GB at 12.5 GB/s = 112 ms.
  const CollectiveCost c = allreduce_cost(net, GroupShape{8, 8, 8}, 800e6, Algorithm::hierarchical);
  CHECK_THAT(c.time_s, WithinRel(7e-3 + 112e-3 + 7e-3, 1e-12));
  CHECK_THAT(c.inter_bytes_per_node, WithinRel(1.4e9, 1e-12));
}

TEST_CASE("tree latency grows with log2 of the nodes", "[network][tree]") {
  NetworkParams net = eight_by_eight();
  net.intra_latency_s = 1e-6;
  net.inter_latency_s = 10e-6;
  // 2 x ((r-1) x 1 us + log2(8) x 10 us) = 2 x (7 + 30) us = 74 us for a tiny message.
  const double tiny = allreduce_cost(net, GroupShape{8, 8, 8}, 4.0, Algorithm::tree).time_s;
  CHECK_THAT(tiny, WithinRel(74e-6, 1e-3));
  // auto picks the tree for tiny messages (ring: 252 us) and the ring for large ones,
  // as NCCL's tuner does (tree algorithm bandwidth 0.45 x bus bandwidth vs ~0.5).
  CHECK(allreduce_cost(net, GroupShape{8, 8, 8}, 4.0, Algorithm::automatic).algorithm == Algorithm::tree);
  CHECK(allreduce_cost(net, GroupShape{8, 8, 8}, 1e9, Algorithm::automatic).algorithm == Algorithm::ring);
}

TEST_CASE("on two nodes auto takes the ring for large messages although the tree moves less", "[network][tree]") {
  NetworkParams net = eight_by_eight();
  // Two nodes, S = 1 GB: the tree puts S through each node's NIC (80 ms), the ring
  // 2 x 15/16 S (150 ms), but NCCL's model rates the tree lower and takes the ring.
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 8, 8}, 1e9, Algorithm::tree).time_s, WithinRel(80e-3, 1e-9));
  const CollectiveCost chosen = allreduce_cost(net, GroupShape{2, 8, 8}, 1e9, Algorithm::automatic);
  CHECK(chosen.algorithm == Algorithm::ring);
  CHECK_THAT(chosen.time_s, WithinRel(150e-3, 1e-9));
}

TEST_CASE("ranks of one node crossing at once share the node's NICs", "[network][nic]") {
  NetworkParams net = eight_by_eight();
  net.gpus_per_node = 4;
  // A pair across nodes, alone: all of the one NIC, 12.5 GB/s; S = 125 MB => 10 ms.
  const double alone = allreduce_cost(net, GroupShape{2, 1, 1}, 125e6, Algorithm::ring).time_s;
  CHECK_THAT(alone, WithinRel(10e-3, 1e-12));
  // Four such pairs leave the node at once: each gets a quarter => 40 ms.
  const double shared = allreduce_cost(net, GroupShape{2, 1, 4}, 125e6, Algorithm::ring).time_s;
  CHECK_THAT(shared, WithinRel(40e-3, 1e-12));
}

TEST_CASE("flows of several groups on one NIC reach what the profile measured together", "[network][nic]") {
  NetworkParams net = eight_by_eight();
  net.gpus_per_node = 4;
  net.shared_nic_efficiency = 0.9;
  // Alone, a pair keeps the NIC's full rate: 125 MB at 12.5 GB/s = 10 ms.
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 1, 1}, 125e6, Algorithm::ring).time_s, WithinRel(10e-3, 1e-12));
  // Four pairs at once reach 0.9 x 12.5 GB/s together, 2.8125 GB/s each: 44.4 ms.
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 1, 4}, 125e6, Algorithm::ring).time_s,
             WithinRel(125e6 / (0.9 * 12.5e9 / 4), 1e-12));
  // One group's ring with 4 ranks on each of 2 nodes leaves a node as one flow: the full
  // 12.5 GB/s for what one rank sends, 2 x 7/8 x 125 MB: 17.5 ms.
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 4, 4}, 125e6, Algorithm::ring).time_s,
             WithinRel(2.0 * 7.0 / 8.0 * 125e6 / 12.5e9, 1e-12));
  // With a NIC per rank nothing is shared: 10 ms again.
  net.nics_per_node = 4;
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 1, 4}, 125e6, Algorithm::ring).time_s, WithinRel(10e-3, 1e-12));
}

TEST_CASE("a rank uses the NICs of its own rail when NICs are many", "[network][nic]") {
  NetworkParams net = eight_by_eight();
  net.nics_per_node = 8;  // one 100 Gbit/s NIC per GPU
  CHECK_THAT(net.rank_nic_cap_bytes_per_s(), WithinRel(12.5e9, 1e-12));
  CHECK_THAT(net.node_nic_bytes_per_s(), WithinRel(100e9, 1e-12));
  // One cross-node pair cannot use all eight NICs: 125 MB at 12.5 GB/s = 10 ms.
  CHECK_THAT(allreduce_cost(net, GroupShape{2, 1, 1}, 125e6, Algorithm::ring).time_s, WithinRel(10e-3, 1e-12));
}

TEST_CASE("transport efficiency and compression scale the wire time", "[network]") {
  NetworkParams net = eight_by_eight();
  net.transport_efficiency = 0.5;
  net.compression_ratio = 4.0;
  // 100 MB / 4 = 25 MB on the wire; 2*63/64*25 MB = 49.21875 MB at 6.25 GB/s.
  const double t = allreduce_cost(net, GroupShape{8, 8, 8}, 100e6, Algorithm::ring).time_s;
  CHECK_THAT(t, WithinRel(49.21875e6 / 6.25e9, 1e-12));
}

TEST_CASE("the [NET] reduction term adds (p-1) vector adds of S/p", "[network][ring][net]") {
  NetworkParams net = eight_by_eight();
  const std::vector<std::pair<double, double>> add = {{1e6, 10e-6}, {3e6, 30e-6}};
  net.reduction = ReductionCost{add};
  // S = 128 MB, p = 64: chunk 2 MB -> 20 us by linear interpolation; 63 x 20 us = 1.26 ms.
  const double with = allreduce_cost(net, GroupShape{8, 8, 8}, 128e6, Algorithm::ring).time_s;
  net.reduction = ReductionCost{};
  const double without = allreduce_cost(net, GroupShape{8, 8, 8}, 128e6, Algorithm::ring).time_s;
  CHECK_THAT(with - without, WithinRel(63 * 20e-6, 1e-9));
  // Clamped outside the table, as numpy.interp does.
  CHECK(ReductionCost{add}.time_s(10.0) == 10e-6);
  CHECK(ReductionCost{add}.time_s(1e9) == 30e-6);
}

TEST_CASE("a calibrated table is exact at its shape and scales the formula at other node counts", "[network][table]") {
  NetworkParams net = eight_by_eight();
  // The formula on 2 nodes x 8 ranks (no latency): each rank sends 2 x 15/16 S = 1.875 S
  // through the node's 12.5 GB/s: 150 us per MB. The table measures 2x, 1.5x and 1x that.
  std::vector<CollectiveTable> tables(1);
  tables[0].collective = "all_reduce";
  tables[0].ranks = 16;
  tables[0].nodes = 2;
  tables[0].bytes_and_time_s = {{1e6, 300e-6}, {4e6, 900e-6}, {16e6, 2400e-6}};
  net.tables = tables;
  const auto us = [&](GroupShape g, double bytes) { return allreduce_cost(net, g, bytes, Algorithm::ring).time_s * 1e6; };
  const GroupShape two_nodes{2, 8, 8};
  // At its own shape: the table. Log-log halfway between 1 MB and 4 MB: sqrt(300 x 900) us.
  CHECK_THAT(us(two_nodes, 1e6), WithinRel(300.0, 1e-9));
  CHECK_THAT(us(two_nodes, 2e6), WithinRel(std::sqrt(300.0 * 900.0), 1e-9));
  // Beyond the table the ratio at its end (1) holds: the formula, 20 x 150 us.
  CHECK_THAT(us(two_nodes, 20e6), WithinRel(3000.0, 1e-9));
  // 4 nodes x 8 ranks: the formula (2 x 31/32 S = 1.9375 S per rank, 310 us for 2 MB)
  // times the table's ratio at 2 MB on its own shape, sqrt(300 x 900) / 300.
  CHECK_THAT(us(GroupShape{4, 8, 8}, 2e6), WithinRel(310.0 * std::sqrt(300.0 * 900.0) / 300.0, 1e-9));
  // Other ranks per node keep the formula: 4 nodes x 4 ranks, 2 x 15/16 x 2 MB through the
  // NIC's 12.5 GB/s (4 ranks crossing, one NIC) = 300 us.
  CHECK_THAT(us(GroupShape{4, 4, 4}, 2e6), WithinRel(300.0, 1e-9));
  // One node is another level: the formula, 2 x 7/8 x 2 MB at 100 GB/s = 35 us.
  CHECK_THAT(us(GroupShape{1, 8, 8}, 2e6), WithinRel(35.0, 1e-9));
  // Compressed 2x, 4 MB puts 2 MB on the wire: the table's time for 2 MB.
  net.compression_ratio = 2.0;
  CHECK_THAT(us(two_nodes, 4e6), WithinRel(std::sqrt(300.0 * 900.0), 1e-9));
  // An all_reduce table says nothing of all_gather: 15/16 x 2 MB at 12.5 GB/s on the wire.
  net.compression_ratio = 1.0;
  CHECK_THAT(collective_cost(net, two_nodes, Collective::all_gather, 2e6).time_s * 1e6,
             WithinRel(15.0 / 16.0 * 2e6 / 12.5e9 * 1e6, 1e-9));
}

TEST_CASE("a pair send moves the message once each way", "[network][p2p]") {
  NetworkParams net = eight_by_eight();
  net.gpus_per_node = 4;
  net.inter_latency_s = 5e-6;
  // Across nodes, 4 senders per node share 12.5 GB/s: 100 MB at 3.125 GB/s = 32 ms + 5 us.
  const CollectiveCost c = pair_send_cost(net, GroupShape{2, 1, 4}, 100e6);
  CHECK_THAT(c.time_s, WithinRel(32e-3 + 5e-6, 1e-12));
  CHECK_THAT(c.inter_bytes_per_node, WithinRel(100e6, 1e-12));
  // Inside a node at 100 GB/s: 1 ms.
  CHECK_THAT(pair_send_cost(net, GroupShape{1, 2, 0}, 100e6).time_s, WithinRel(1e-3, 1e-12));
}

TEST_CASE("the other collectives on one node: ring passes over NVLink", "[network][collective]") {
  // 1 node x 8 ranks, 100 GB/s and 2 us per intra step; S = 8 MB (nccl-tests' size).
  NetworkParams net = eight_by_eight();
  net.nodes = 1;
  net.intra_latency_s = 2e-6;
  const GroupShape node{1, 8, 8};
  const auto us = [&](Collective c) { return collective_cost(net, node, c, 8e6).time_s * 1e6; };
  // all_gather: 7 steps of S/8: each rank sends 7 MB = 70 us, and 7 x 2 us = 14 us.
  CHECK_THAT(us(Collective::all_gather), WithinRel(84.0, 1e-12));
  // reduce_scatter: the same traffic; no reduction cost given.
  CHECK_THAT(us(Collective::reduce_scatter), WithinRel(84.0, 1e-12));
  // broadcast: a pipelined chain: S once (80 us) and 7 hops (14 us).
  CHECK_THAT(us(Collective::broadcast), WithinRel(94.0, 1e-12));
  // alltoall: S/8 to each of the 7 others: 7 MB = 70 us, one latency.
  CHECK_THAT(us(Collective::alltoall), WithinRel(72.0, 1e-12));
  // sendrecv: S to the next rank: 80 us + 2 us.
  CHECK_THAT(us(Collective::sendrecv), WithinRel(82.0, 1e-12));
  // all_reduce: the ring of allreduce_cost, 2 x 70 us + 14 x 2 us.
  CHECK_THAT(collective_cost(net, node, Collective::all_reduce, 8e6, Algorithm::ring).time_s * 1e6,
             WithinRel(168.0, 1e-12));
}

TEST_CASE("the other collectives across nodes: the node's NICs carry what leaves it", "[network][collective]") {
  // 2 nodes x 4 ranks, one 100 Gbit/s NIC (12.5 GB/s) at line rate, 5 us per inter hop,
  // 100 GB/s and 2 us inside; S = 8 MB.
  NetworkParams net = eight_by_eight();
  net.nodes = 2;
  net.gpus_per_node = 4;
  net.intra_latency_s = 2e-6;
  net.inter_latency_s = 5e-6;
  const GroupShape world{2, 4, 4};
  // all_gather: each rank sends 7 MB; the ring leaves each node once, so the NIC carries
  // 7 MB: 560 us; 7 steps, ceil(7 / 4) = 2 of them across nodes: 5 x 2 + 2 x 5 = 20 us.
  CHECK_THAT(collective_cost(net, world, Collective::all_gather, 8e6).time_s * 1e6, WithinRel(580.0, 1e-12));
  // alltoall: each rank sends 4/8 of S (4 MB) to the other node; the node's 4 ranks
  // together push 16 MB through its NIC: 1280 us, and one inter-node latency.
  const CollectiveCost a2a = collective_cost(net, world, Collective::alltoall, 8e6);
  CHECK_THAT(a2a.time_s * 1e6, WithinRel(1285.0, 1e-12));
  CHECK_THAT(a2a.inter_bytes_per_node, WithinRel(16e6, 1e-12));
  // sendrecv: one rank per node crosses, with the whole NIC: 8 MB / 12.5 GB/s + 5 us.
  CHECK_THAT(collective_cost(net, world, Collective::sendrecv, 8e6).time_s * 1e6, WithinRel(645.0, 1e-12));
}

TEST_CASE("collective names round-trip", "[network][collective]") {
  for (const Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                             Collective::alltoall, Collective::sendrecv, Collective::broadcast}) {
    CHECK(parse_name<Collective>(name_of(c)) == c);
  }
  CHECK_FALSE(parse_name<Collective>("allreduce"));
}
