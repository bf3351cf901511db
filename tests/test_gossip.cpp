// Decentralized training engine: steady states derived by hand on two ranks, the SGP
// recursion, the no-overlap switch, traffic per step with NIC sharing, exactness of the
// rank-class reduction, and no allocation once constructed.
#include <catch2/catch.hpp>

#include "alloc_counter.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/zoo.hpp"
#include "toy_model.hpp"

using namespace dtperf;
using dtperf::test::one_tensor;
using Catch::Matchers::WithinRel;

namespace {

// Two nodes of one GPU, a NIC of `bytes_per_s`, no latency, no dispatch floor, memory at
// 1 TB/s: the SGD step is 3 passes x 10 MB = 30 us, Decent-DP's mixing 9 passes = 90 us,
// SGP's mixing 9 passes = 90 us and its push-sum weight (de-bias, re-bias) 4 passes =
// 40 us. A pair all-reduce of 10 MB costs 10 MB / NIC.
GossipScenario two_ranks(double nic_bytes_per_s) {
  GossipScenario s;
  s.network = test::two_single_gpu_nodes(nic_bytes_per_s);
  s.compute = test::fast_memory();
  s.request.batch_per_gpu = 32;
  s.request.optimizer = Optimizer::sgd;
  return s;
}

}  // namespace

TEST_CASE("a compute-bound gossip iteration hides the whole exchange", "[gossip]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  // Exchange 10 MB / 10 GB/s = 1 ms < forward + backward = 15 ms: the next iteration's
  // hook finds it done. T = F + B + mix + step = 5 + 10 + 0.09 + 0.03 ms.
  const GossipResult& r = p.predict(two_ranks(10e9));
  CHECK_THAT(r.iteration.iteration_s, WithinRel(15.12e-3, 1e-9));
  CHECK(r.iteration.exposed_comm_s < 1e-15);
  CHECK(r.steady);
  CHECK_THAT(r.iteration.comm_busy_s, WithinRel(1e-3, 1e-9));
  CHECK_THAT(r.iteration.forward_s + r.iteration.backward_s + r.iteration.exposed_comm_s + r.iteration.optimizer_s,
             WithinRel(r.iteration.iteration_s, 1e-9));
}

TEST_CASE("a communication-bound gossip iteration is paced by the exchange", "[gossip]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  // Exchange 10 MB / 0.5 GB/s = 20 ms > F + B = 15 ms. Launch times follow
  // L(t) = max(L(t-1) + F + B, L(t-1) + X) + mix + step, so T = X + 0.12 ms and the hook
  // waits X - (F + B) = 5 ms.
  const GossipResult& r = p.predict(two_ranks(0.5e9));
  CHECK_THAT(r.iteration.iteration_s, WithinRel(20.12e-3, 1e-9));
  CHECK_THAT(r.iteration.exposed_comm_s, WithinRel(5e-3, 1e-9));
}

TEST_CASE("an exchange beside compute runs slower; none gives exactly the plain timeline",
          "[gossip][contention]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  GossipScenario s = two_ranks(0.5e9);
  s.compute.comm_interference_factor = 1.0;
  s.compute.interference_factor = 1.0;
  CHECK(p.predict(s).iteration.iteration_s == p.predict(two_ranks(0.5e9)).iteration.iteration_s);
  // Communication at half speed while compute runs. The exchange (20 ms of work) starts at
  // launch L; compute runs on for one iteration's work, F + B + mix + step = 15.12 ms, in
  // which the exchange does 7.56 ms; the other 12.44 ms run at full speed: it ends at
  // L + 27.56 ms. The hook waits for it, then mixes and steps: T = 27.56 + 0.12 ms.
  s.compute.comm_interference_factor = 2.0;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(27.68e-3, 1e-9));
  // A fixed overhead adds to every iteration of a distributed run: 5 + 10 + 0.12 + 2 ms.
  GossipScenario t = two_ranks(10e9);
  t.compute.iteration_overhead_s = 2e-3;
  CHECK_THAT(p.predict(t).iteration.iteration_s, WithinRel(17.12e-3, 1e-9));
  CHECK_THAT(p.predict(t).iteration.overhead_s, WithinRel(2e-3, 1e-12));
  // The two ranks sit on two nodes: crossing them adds its own fixed time, 2 + 1 ms.
  t.compute.cross_node_overhead_s = 1e-3;
  CHECK_THAT(p.predict(t).iteration.iteration_s, WithinRel(18.12e-3, 1e-9));
}

TEST_CASE("without overlap the exchange adds to the iteration", "[gossip][factors]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  GossipScenario s = two_ranks(10e9);
  s.options.overlap = false;
  // The iteration ends when its exchange does: T = F + B + mix + step + X = 16.12 ms.
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(16.12e-3, 1e-9));
}

TEST_CASE("SGP steps, waits for the previous push, mixes and pushes again", "[gossip][sgp]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_sgp_schedule(2, 1), GossipAlgorithm::sgp);
  // L(t) = L(t-1) + max(F + B + step + weight, X) + mix. Compute-bound (X = 1 ms):
  // T = 15 + 0.03 + 0.04 + 0.09 ms; communication-bound (X = 20 ms): T = 20 + 0.09 ms.
  CHECK_THAT(p.predict(two_ranks(10e9)).iteration.iteration_s, WithinRel(15.16e-3, 1e-9));
  CHECK_THAT(p.predict(two_ranks(0.5e9)).iteration.iteration_s, WithinRel(20.09e-3, 1e-9));
}

TEST_CASE("the directed one-peer exponential graph under Decent-DP: per bucket, one send and one receive",
          "[gossip][directed]") {
  // Two tensors of 10 MB, each a bucket of its own (5 MiB cap). On two ranks the directed
  // graph sends to and receives from the one other rank: the same transfers as the ring's
  // pair, bucket after bucket on the same link, so the same timeline.
  ModelSpec m = one_tensor();
  m.tensors.push_back(m.tensors.front());
  for (const double nic : {10e9, 0.5e9}) {
    INFO("NIC " << nic);
    GossipScenario s = two_ranks(nic);
    s.options.bucket_cap_bytes = 5.0 * 1024 * 1024;
    GossipPredictor ring(m, compile_schedule(make_topology("ring", 2, 1)));
    GossipPredictor directed(m, compile_schedule(make_topology("one-peer-exp-directed", 2, 1)));
    const IterationResult a = ring.predict(s).iteration;
    const IterationResult b = directed.predict(s).iteration;
    CHECK(b.buckets == 2);
    CHECK_THAT(b.iteration_s, WithinRel(a.iteration_s, 1e-12));
    CHECK_THAT(b.exposed_comm_s + 1.0, WithinRel(a.exposed_comm_s + 1.0, 1e-12));
  }
  // Four ranks on four nodes, one bucket, communication-bound: every step each rank sends
  // 10 MB and receives 10 MB at once (full duplex), X = 20 ms: T = X + mix + step.
  const ModelSpec one = one_tensor();
  GossipPredictor four(one, compile_schedule(make_topology("one-peer-exp-directed", 4, 1)));
  GossipScenario s = two_ranks(0.5e9);
  s.network.nodes = 4;
  CHECK_THAT(four.predict(s).iteration.iteration_s, WithinRel(20.12e-3, 1e-9));
}

TEST_CASE("one-peer-exp alternates fast and slow iterations: per-step times and quantiles", "[gossip][steps]") {
  const ModelSpec m = one_tensor();
  // 2 nodes x 2 ranks. Step 0 pairs i with i XOR 1 inside a node: 10 MB / 100 GB/s =
  // X0 = 0.1 ms. Step 1 pairs i with i XOR 2 across nodes; both ranks of a node cross
  // through its one 1 GB/s NIC: 2 x 10 MB / 1 GB/s = X1 = 20 ms.
  GossipScenario s = two_ranks(1e9);
  s.network.gpus_per_node = 2;
  GossipPredictor p(m, compile_schedule(make_topology("one-peer-exp", 4, 2)));
  // The iteration after launching step k's exchange waits for it at its hook:
  // L(t+1) = L(t) + max(F + B, X_k) + mix + step. After step 0: 15 + 0.12 = 15.12 ms;
  // after step 1: 20 + 0.12 = 20.12 ms. So the iteration of step 0 (which waits for step
  // 1's exchange) takes 20.12 ms and that of step 1 15.12 ms; the mean is 17.62 ms.
  const GossipResult& r = p.predict(s);
  CHECK_THAT(r.iteration.iteration_s, WithinRel(17.62e-3, 1e-9));
  REQUIRE(r.step_iteration_s.size() == 2);
  CHECK_THAT(r.step_iteration_s[0], WithinRel(20.12e-3, 1e-9));
  CHECK_THAT(r.step_iteration_s[1], WithinRel(15.12e-3, 1e-9));
  // Over a period, 4 ranks x 2 steps = 8 iteration times, 4 of each: the nearest-rank
  // p50 is the 4th smallest (15.12 ms), the p90 the 8th (20.12 ms).
  CHECK_THAT(r.step_p50_s, WithinRel(15.12e-3, 1e-9));
  CHECK_THAT(r.step_p90_s, WithinRel(20.12e-3, 1e-9));
  // With a 2 GB/s NIC, X1 = 10 ms < F + B: every iteration takes 15.12 ms, p50 = p90.
  s.network.nic_line_bytes_per_s = 2e9;
  const GossipResult& q = p.predict(s);
  CHECK_THAT(q.step_p50_s, WithinRel(15.12e-3, 1e-9));
  CHECK_THAT(q.step_p90_s, WithinRel(15.12e-3, 1e-9));
  CHECK_THAT(q.iteration.iteration_s, WithinRel(15.12e-3, 1e-9));
}

TEST_CASE("non-overlapped SGP awaits its push in the same iteration", "[gossip][sgp]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_sgp_schedule(2, 1), GossipAlgorithm::sgp);
  // T = F + B + step + weight + mix + X = 15 + 0.03 + 0.04 + 0.09 + X: X = 1 ms at
  // 10 GB/s, 20 ms at 0.5 GB/s. The whole exchange is exposed.
  GossipScenario s = two_ranks(10e9);
  s.options.overlap = false;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(16.16e-3, 1e-9));
  CHECK_THAT(p.predict(s).iteration.exposed_comm_s, WithinRel(1e-3, 1e-9));
  s.network.nic_line_bytes_per_s = 0.5e9;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(35.16e-3, 1e-9));
}

TEST_CASE("D-PSGD sends to both ring neighbours during the gradient computation", "[gossip][dpsgd]") {
  const ModelSpec m = one_tensor();
  // Two ranks: one neighbour. L(t) = L(t-1) + max(F + B, X) + mix + step, mixing 4
  // passes x 10 MB at 1 TB/s = 40 us: 15 + 0.04 + 0.03 ms at 10 GB/s (X = 1 ms), 20 +
  // 0.07 ms at 0.5 GB/s (X = 20 ms).
  GossipPredictor two(m, compile_dpsgd_schedule(2, 1), GossipAlgorithm::dpsgd);
  CHECK_THAT(two.predict(two_ranks(10e9)).iteration.iteration_s, WithinRel(15.07e-3, 1e-9));
  CHECK_THAT(two.predict(two_ranks(0.5e9)).iteration.iteration_s, WithinRel(20.07e-3, 1e-9));

  // Four nodes of one rank at 1 GB/s: each rank sends 10 MB to i + 1 and to i - 1
  // through its one NIC, one after the other, X = 10 + 10 ms; both receives arrive in
  // 10 ms meanwhile. T = max(15, 20) + 0.07 = 20.07 ms; each node sends 20 MB.
  GossipScenario s = two_ranks(1e9);
  s.network.nodes = 4;
  GossipPredictor four(m, compile_dpsgd_schedule(4, 1), GossipAlgorithm::dpsgd);
  const GossipResult& r = four.predict(s);
  CHECK_THAT(r.iteration.iteration_s, WithinRel(20.07e-3, 1e-9));
  CHECK_THAT(r.iteration.inter_bytes_per_node, WithinRel(20e6, 1e-9));
  // At 10 GB/s, X = 2 ms < F + B: compute-bound, 15.07 ms.
  s.network.nic_line_bytes_per_s = 10e9;
  CHECK_THAT(four.predict(s).iteration.iteration_s, WithinRel(15.07e-3, 1e-9));

  // Two nodes of two ranks at 1 GB/s: ring 0-1-2-3-0, each rank has one neighbour on its
  // node (10 MB / 100 GB/s = 0.1 ms) and one on the other; both ranks of a node cross
  // at once, sharing its NIC: 2 x 10 MB / 1 GB/s = 20 ms, beside the intra-node send.
  // T = max(15, 20) + 0.07 = 20.07 ms.
  GossipScenario t = two_ranks(1e9);
  t.network.gpus_per_node = 2;
  GossipPredictor nodes(m, compile_dpsgd_schedule(4, 2), GossipAlgorithm::dpsgd);
  CHECK_THAT(nodes.predict(t).iteration.iteration_s, WithinRel(20.07e-3, 1e-9));
}

namespace {

// `model` in bf16 on 8 nodes of a100x4-ib100 (32 GPUs), as its profile gives them with
// `o` on top.
GossipScenario eight_nodes_of_four(const ModelSpec& model, ClusterOverrides o = {}) {
  o.nodes = 8;
  const ClusterProfile profile = apply_overrides(io::load_profile("a100x4-ib100"), o);
  GossipScenario s;
  s.network = network_params(profile, 1.0, {});
  s.compute = compute_params(profile, DType::bf16);
  s.request = compute_request(model, WorkloadOptions{}, profile.ranks());
  return s;
}

// Node-level gossip on 2 nodes x 2 GPUs: the schedule runs over the 2 nodes (one rank
// each, with the node's NIC); `replica_network` is one node of 2 GPUs at 100 GB/s.
GossipScenario two_nodes_of_two(double nic_bytes_per_s) {
  GossipScenario s = two_ranks(nic_bytes_per_s);
  s.replica_gpus = 2;
  s.replica_network = s.network;
  s.replica_network.nodes = 1;
  s.replica_network.gpus_per_node = 2;
  return s;
}

}  // namespace

TEST_CASE("node-level gossip: the node all-reduces its gradients, the topology runs over nodes",
          "[gossip][node_level]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("complete", 2, 1)));
  // Inside a node: the 10 MB gradient all-reduce on 2 GPUs moves 2(2-1)/2 x 10 MB = 10 MB
  // per GPU at 100 GB/s: 0.1 ms, ready at the end of backward, so the hook waits for all
  // of it. After the exchange, the all-gather of the mixed halves: 5 MB, 0.05 ms.
  // Between the nodes: 10 MB / 10 GB/s = 1 ms (+ 0.05) < F + B: compute-bound,
  // T = F + B + 0.1 + mix + step = 5 + 10 + 0.1 + 0.09 + 0.03 = 15.22 ms.
  const GossipResult& r = p.predict(two_nodes_of_two(10e9));
  CHECK_THAT(r.iteration.iteration_s, WithinRel(15.22e-3, 1e-9));
  CHECK_THAT(r.iteration.exposed_comm_s, WithinRel(0.1e-3, 1e-9));
  // 4 GPUs x 32 samples per iteration; per GPU 10 + 5 MB inside the node; each node
  // sends 10 MB, 5 MB per GPU.
  CHECK_THAT(r.iteration.throughput_samples_per_s, WithinRel(4 * 32 / 15.22e-3, 1e-9));
  CHECK_THAT(r.iteration.intra_bytes_per_gpu, WithinRel(15e6, 1e-9));
  CHECK_THAT(r.iteration.inter_bytes_per_node, WithinRel(10e6, 1e-9));
  CHECK_THAT(r.iteration.inter_bytes_per_gpu, WithinRel(5e6, 1e-9));
  // Communication-bound (0.5 GB/s): the exchange takes 20 + 0.05 ms from the launch L;
  // the next hook comes at L + 15, waits 0.1 ms for the node's all-reduce, then for the
  // exchange until L + 20.05; mix and step: T = 20.17 ms, of which 0.1 + 4.95 exposed.
  const GossipResult& q = p.predict(two_nodes_of_two(0.5e9));
  CHECK_THAT(q.iteration.iteration_s, WithinRel(20.17e-3, 1e-9));
  CHECK_THAT(q.iteration.exposed_comm_s, WithinRel(5.05e-3, 1e-9));
}

TEST_CASE("node-level SGP hides the node's all-reduce of early buckets behind backward", "[gossip][node_level]") {
  // Two tensors of 10 MB with 5 ms of backward each (forward 5 ms); DDP buckets of 10 MB
  // inside the node: the first all-reduce (0.1 ms) runs from 5 ms to 5.1 ms while the
  // second tensor's backward runs; the second from 10 to 10.1 ms. SGP steps after
  // backward, so it waits only for the second: T = 5 + 10 + 0.1 + step 0.06 + weight
  // 0.08 + mix 0.18 (20 MB now: 3, 4 and 9 passes at 1 TB/s) = 15.42 ms when the exchange
  // (20 MB / 10 GB/s + 0.1 ms gather = 2.1 ms) hides behind compute.
  ModelSpec m = one_tensor();
  m.tensors[0].measured_backward_s = 5e-3;
  m.tensors.push_back(m.tensors[0]);
  m.tensors[1].name = "v";
  GossipPredictor p(m, compile_sgp_schedule(2, 1), GossipAlgorithm::sgp);
  GossipScenario s = two_nodes_of_two(10e9);
  s.options.bucket_cap_bytes = 10e6;
  const GossipResult& r = p.predict(s);
  CHECK_THAT(r.iteration.iteration_s, WithinRel(15.42e-3, 1e-9));
  CHECK_THAT(r.iteration.exposed_comm_s, WithinRel(0.1e-3, 1e-9));
}

TEST_CASE("ranks of a node crossing together share its NICs", "[gossip][traffic]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("one-peer-exp", 8, 4)));
  GossipScenario s = two_ranks(10e9);
  s.network.gpus_per_node = 4;
  const GossipResult& r = p.predict(s);
  // Steps 0 and 1 (distances 1, 2) stay inside the nodes; step 2 (distance 4) pairs each
  // rank with one on the other node: four pair all-reduces of 10 MB leave each node at
  // once, 4 x 10 MB through its NIC, each pair at a quarter of 10 GB/s (4 ms).
  REQUIRE(r.steps.size() == 3);
  CHECK(r.steps[0].inter_bytes_per_node == 0.0);
  CHECK(r.steps[1].inter_bytes_per_node == 0.0);
  CHECK_THAT(r.steps[2].inter_bytes_per_node, WithinRel(40e6, 1e-12));
  CHECK_THAT(r.steps[0].intra_bytes_per_gpu, WithinRel(10e6, 1e-12));
  CHECK_THAT(r.iteration.nic_busy_s, WithinRel(4e-3 / 3, 1e-9));  // one step in three
}

TEST_CASE("a node link shared by crossing ranks names the iteration they would reach taking turns",
          "[gossip][traffic]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("one-peer-exp", 4, 2)));
  GossipScenario s = two_ranks(0.5e9);
  s.network.gpus_per_node = 2;
  // Step 0 pairs the ranks of each node; step 1 pairs each rank with one on the other node:
  // both ranks of a node cross at once, 2 x 10 MB through its one NIC, each pair at half of
  // 0.5 GB/s (40 ms), in phase. The link carries 20 MB every two iterations: 20 ms per
  // iteration, more than forward and backward (15 ms), so taking turns would approach that.
  const GossipResult& r = p.predict(s);
  CHECK(r.node_link_crossing_ranks == 2);
  CHECK_THAT(r.node_link_in_turns_s, WithinRel(20e-3, 1e-9));
  CHECK(r.iteration.iteration_s > 1.05 * 20e-3);
  // Two NICs, a rail per rank: nothing is shared, nothing to name.
  s.network.nics_per_node = 2;
  CHECK(p.predict(s).node_link_in_turns_s == 0.0);
  // One NIC of 10 GB/s: the link is busy 1 ms per iteration, compute bounds it.
  s = two_ranks(10e9);
  s.network.gpus_per_node = 2;
  CHECK(p.predict(s).node_link_in_turns_s == 0.0);
  // AER on 2 x 2 crosses nodes in one collective of all four ranks (its second step): they
  // share the link inside it, there are no separate exchanges to take turns. At 0.25 GB/s
  // the link is busy 7.5 MB / 0.25 GB/s = 30 ms per iteration, above the compute (15 ms)
  // and 20 % below the iteration (37.6 ms): without that rule it would be named.
  GossipPredictor whole(m, compile_schedule(make_topology("alternating-exp-ring", 4, 2)));
  s = two_ranks(0.25e9);
  s.network.gpus_per_node = 2;
  const GossipResult& w = whole.predict(s);
  CHECK_THAT(w.iteration.inter_bytes_per_node / 0.25e9, WithinRel(30e-3, 1e-9));
  CHECK(w.iteration.iteration_s > 30e-3 / 0.95);
  CHECK(w.node_link_in_turns_s == 0.0);
}

TEST_CASE("rank classes reproduce the per-rank simulation", "[gossip][classes]") {
  const ModelSpec model = *zoo_model("transformer-base");
  GossipScenario s = eight_nodes_of_four(model);
  s.compute.interference_factor = 1.1;
  for (const char* name : {"alternating-exp-ring", "ring", "one-peer-exp", "torus", "random-matching"}) {
    INFO(name);
    const Topology t = make_topology(name, 32, 4);
    GossipPredictor merged(model, compile_schedule(t, true));
    GossipPredictor each(model, compile_schedule(t, false));
    const GossipResult& a = merged.predict(s);
    const GossipResult& b = each.predict(s);
    CHECK(b.rank_classes == 32);
    // Structured topologies collapse to a few classes; a random matching has no symmetry.
    if (std::string(name) != "random-matching") CHECK(a.rank_classes < 32);
    CHECK(a.iteration.iteration_s == Approx(b.iteration.iteration_s).epsilon(1e-12));
    CHECK(a.iteration.exposed_comm_s == Approx(b.iteration.exposed_comm_s).epsilon(1e-12).margin(1e-15));
  }
  GossipPredictor sgp_merged(model, compile_sgp_schedule(32, 4, true), GossipAlgorithm::sgp);
  GossipPredictor sgp_each(model, compile_sgp_schedule(32, 4, false), GossipAlgorithm::sgp);
  CHECK(sgp_merged.predict(s).iteration.iteration_s == Approx(sgp_each.predict(s).iteration.iteration_s).epsilon(1e-12));
  GossipPredictor dpsgd_merged(model, compile_dpsgd_schedule(32, 4, true), GossipAlgorithm::dpsgd);
  GossipPredictor dpsgd_each(model, compile_dpsgd_schedule(32, 4, false), GossipAlgorithm::dpsgd);
  const GossipResult& d = dpsgd_merged.predict(s);
  CHECK(d.rank_classes < 32);  // the ring's ranks: first, inner and last of a node
  CHECK(d.iteration.iteration_s == Approx(dpsgd_each.predict(s).iteration.iteration_s).epsilon(1e-12));
}

TEST_CASE("a prediction counts its exchange slots per iteration, the work it is priced by", "[gossip][classes]") {
  // Per rank (32 classes on 8 nodes x 4): each rank is in one pair per step of a ring and
  // of one-peer-exp, in one group of all 32 on the complete graph, in log2 32 = 5 pairs
  // per step of the exponential graph, and sends and receives once per step under SGP.
  const ModelSpec model = *zoo_model("transformer-base");
  const GossipScenario s = eight_nodes_of_four(model);
  for (const auto& [name, slots] : {std::pair{"ring", 32.0}, {"one-peer-exp", 32.0}, {"complete", 32.0},
                                    {"exponential", 160.0}}) {
    INFO(name);
    GossipPredictor each(model, compile_schedule(make_topology(name, 32, 4), false));
    const GossipResult& r = each.predict(s);
    CHECK(r.rank_classes == 32);
    CHECK(r.exchange_slots_per_iteration == slots);
    CHECK(r.iterations_simulated > 0);
  }
  GossipPredictor sgp(model, compile_sgp_schedule(32, 4, false), GossipAlgorithm::sgp);
  CHECK(sgp.predict(s).exchange_slots_per_iteration == 64.0);
  // Merged into classes, the ring counts each class once: as many slots as classes.
  GossipPredictor merged(model, compile_schedule(make_topology("ring", 32, 4), true));
  const GossipResult& m = merged.predict(s);
  CHECK(m.exchange_slots_per_iteration == m.rank_classes);
}

TEST_CASE("the simulation's shortcuts give what round by round and class by class give, to the last bit",
          "[gossip][classes]") {
  // On 8 nodes x 4 GPUs, every rank its own timeline (variable compute, one slow rank):
  // - the static exponential graph: each step, rounds at distances 1 and 2 inside the
  //   nodes, then 4, 8 and 16 across them, every rank paired with rank XOR d: two chains
  //   run as one pass each (exchange_xor_chain);
  // - SGP's directed graph and Decent-DP over it: at distances 4, 8 and 16 every rank
  //   pushes across nodes at one price, run as blocks of consecutive ranks (push_block);
  //   at 1 and 2 some pushes stay inside the node, class by class either way.
  // With the shortcuts off, the same simulation runs every round and push one by one.
  // Every figure must agree exactly, on the profile's links and on links so slow that
  // each bucket's exchange queues behind the last one's.
  const ModelSpec model = *zoo_model("transformer-base");
  struct Case {
    const char* name;
    std::shared_ptr<const CompiledSchedule> schedule;
    GossipAlgorithm algorithm;
  };
  const Case cases[] = {
      {"exponential", compile_schedule(make_topology("exponential", 32, 4), false), GossipAlgorithm::decent_dp},
      {"one-peer-exp-directed", compile_schedule(make_topology("one-peer-exp-directed", 32, 4), false),
       GossipAlgorithm::decent_dp},
      {"sgp", compile_sgp_schedule(32, 4, false), GossipAlgorithm::sgp},
  };
  Variability v;
  v.law = NoiseLaw::normal;
  v.cv = 0.2;
  v.slow_ranks = {{5, 1.3}};
  v.iterations = 60;
  v.warmup_iterations = 10;
  for (const Case& c : cases) {
    GossipPredictor fast(model, c.schedule, c.algorithm);
    GossipPredictor plain(model, c.schedule, c.algorithm);
    plain.set_shortcuts(false);
    CHECK(fast.hypercube_chains() == (std::string(c.name) == "exponential" ? 2 : 0));
    for (const bool slow_links : {false, true}) {
      INFO(c.name << ", slow links: " << slow_links);
      ClusterOverrides o;
      if (slow_links) {
        o.nic_gbps = 1.0;
        o.intra_bandwidth_bytes_per_s = 0.5e9;
      }
      const GossipScenario s = eight_nodes_of_four(model, o);
      const GossipResult a = fast.predict(s);
      const GossipResult& b = plain.predict(s);
      CHECK(a.iteration.iteration_s == b.iteration.iteration_s);
      CHECK(a.iteration.exposed_comm_s == b.iteration.exposed_comm_s);
      if (slow_links) CHECK(a.iteration.exposed_comm_s > a.iteration.backward_s);  // the links pace it
      const GossipResult x = fast.predict(s, v);
      const GossipResult& y = plain.predict(s, v);
      CHECK(x.iteration.iteration_s == y.iteration.iteration_s);
      CHECK(x.iteration.exposed_comm_s == y.iteration.exposed_comm_s);
      CHECK(x.variability.iteration_p99_s == y.variability.iteration_p99_s);
      CHECK(x.variability.idle_min_s == y.variability.idle_min_s);
      CHECK(x.variability.idle_max_s == y.variability.idle_max_s);
      CHECK(x.variability.straggler_rank == y.variability.straggler_rank);
      CHECK(x.variability.iteration_p99_s > x.iteration.iteration_s);  // the ranks did vary
    }
  }
}

TEST_CASE("AER on 1,024 GPUs simulates a handful of timelines", "[gossip][classes]") {
  const auto schedule = compile_schedule(make_topology("alternating-exp-ring", 1024, 4));
  CHECK(schedule_classes(*schedule) <= 8);
}

TEST_CASE("gossip predict allocates nothing once constructed", "[gossip][alloc]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("alternating-exp-ring", 16, 4)));
  GossipScenario s = two_ranks(10e9);
  s.network.nodes = 4;
  s.network.gpus_per_node = 4;
  p.predict(s);
  test::AllocationScope scope;
  double sum = 0.0;
  for (int i = 0; i < 20; ++i) sum += p.predict(s).iteration.iteration_s;
  CHECK(scope.allocations() == 0);
  CHECK(sum > 0.0);
}
