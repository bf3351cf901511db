// Contention of a host-driven transport with compute on the host: the factors, and the
// timelines of All-Reduce and of gossip with the cores shared, derived by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "dtperf/allreduce.hpp"
#include "dtperf/contention.hpp"
#include "dtperf/gossip.hpp"
#include "toy_model.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// Compute on the host; the transport's CPU time per byte makes its share of the cores
// `share` at the NIC's rate (line rate, efficiency 1, no host ceiling).
void on_host(ComputeParams& c, NetworkParams& n, double share) {
  c.runs_on_host = true;
  n.host_cpu_s_per_byte = share / n.nic_line_bytes_per_s;
}

// Two single-GPU nodes at 10 GB/s, momentum SGD on a fast memory, ring All-Reduce with no
// framework copies: the scenario of the All-Reduce tests below.
AllReduceScenario two_node_allreduce() {
  AllReduceScenario s;
  s.network = test::two_single_gpu_nodes(10e9);
  s.compute = test::fast_memory();
  s.request.optimizer = Optimizer::sgd_momentum;
  s.options.algorithm = Algorithm::ring;
  s.options.framework_copies = false;
  return s;
}

}  // namespace

TEST_CASE("a host transport's share of the cores slows compute and itself alike", "[contention][host]") {
  ComputeParams c = test::fast_memory();
  NetworkParams n = test::two_single_gpu_nodes(1e9);
  // GPU compute: only the profile's factors (here 1.2 and 1.1).
  c.interference_factor = 1.2;
  c.comm_interference_factor = 1.1;
  n.host_cpu_s_per_byte = 0.5e-9;
  // An exchange in which every rank sends 1 GB across nodes (one rank per node), or
  // 0.5 GB inside its node and 1 GB through its node's NICs shared by 2 ranks.
  const CollectiveCost across{1.0, Algorithm::ring, 0.0, 1e9};
  const CollectiveCost both{1.0, Algorithm::ring, 0.5e9, 1e9};
  Contention k = contention_beside_compute(c, n);
  CHECK(k.host_share(across, 1, 1.0) == 0.0);
  CHECK(k.compute_beside(0.0) == 1.2);
  CHECK(k.exchange_beside_compute(0.0) == 1.1);
  // On the host: 0.5 ns per byte. Sending 1 GB in 1 s keeps half the cores busy, so
  // compute and the exchange both run x 1.5 on top of the profile's factors beside it.
  c.runs_on_host = true;
  k = contention_beside_compute(c, n);
  CHECK_THAT(k.host_share(across, 1, 1.0), WithinRel(0.5, 1e-12));
  CHECK_THAT(k.compute_beside(0.5), WithinRel(1.2 * 1.5, 1e-12));
  CHECK_THAT(k.exchange_beside_compute(0.5), WithinRel(1.1 * 1.5, 1e-12));
  // The same 1 GB taking 2 s (1 s of it latency) needs the same 0.5 s of CPU: a quarter
  // of the cores over its duration.
  CHECK_THAT(k.host_share(across, 1, 2.0), WithinRel(0.25, 1e-12));
  // Inside the node too: 0.5 GB + 1 GB / 2 ranks = 1 GB per rank, 0.5 s of CPU in 1 s.
  CHECK_THAT(k.host_share(both, 2, 1.0), WithinRel(0.5, 1e-12));
  // One rank: nothing overlaps.
  n.nodes = 1;
  CHECK(contention_beside_compute(c, n).compute == 1.0);
  CHECK(contention_beside_compute(c, n).host_cpu_s_per_byte == 0.0);
}

TEST_CASE("All-Reduce on the host: compute loses the transport's CPU time, which runs slower too",
          "[contention][host][allreduce]") {
  const ModelSpec m = test::ten_mb_tensors(4);
  AllReduceScenario s = two_node_allreduce();
  AllReducePredictor predictor(m);
  // Buckets (DDP): 10 MB ready at 10 ms, 30 MB at 40 ms; a pair all-reduce of S costs
  // S / 10 GB/s. Plain: 10-11 ms and 40-43 ms; iteration 20 + 40 + 3 + 0.2 (momentum SGD,
  // 5 passes x 40 MB at 1 TB/s) = 63.2 ms.
  CHECK_THAT(predictor.predict(s).iteration_s, WithinRel(63.2e-3, 1e-9));
  // Share 0.5: bucket 1's 1 ms of transfer beside backward takes 1.5 ms (10-11.5 ms); the
  // 30 ms of backward after it run 1.5 ms at 2/3 speed (1 ms of work), then 29 ms: backward
  // ends at 40.5 ms, having lost 0.5 ms = the share x the transfer's 1 ms. Bucket 2 runs
  // alone, 40.5-43.5 ms. Iteration 20 + 40.5 + 3 + 0.2 ms.
  on_host(s.compute, s.network, 0.5);
  const IterationResult r = predictor.predict(s);
  CHECK_THAT(r.backward_s, WithinRel(40.5e-3, 1e-9));
  CHECK_THAT(r.exposed_comm_s, WithinRel(3e-3, 1e-9));
  CHECK_THAT(r.iteration_s, WithinRel(63.7e-3, 1e-9));
}

TEST_CASE("gossip on the host: an exchange launched in backward slows the rest of it",
          "[contention][host][gossip]") {
  const ModelSpec m = test::ten_mb_tensors(2);
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  GossipScenario s;
  s.network = test::two_single_gpu_nodes(1e9);
  s.compute = test::fast_memory();
  s.request.optimizer = Optimizer::sgd;
  s.options.bucket_cap_bytes = 10e6;  // one bucket per tensor
  // Plain: forward 10 ms (half of backward), buckets of 10 ms each; per bucket mixing
  // (9 passes) and the SGD step (3) over 10 MB at 1 TB/s: 0.12 ms. A pair exchange of
  // 10 MB costs 10 ms at 1 GB/s and hides behind the next 10 ms of compute:
  // T = 10 + 2 x (10 + 0.12) = 30.24 ms.
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(30.24e-3, 1e-9));
  // Share 0.5. Bucket 0 launches at L; its exchange (10 ms alone) runs beside bucket 1's
  // backward, both x 1.5: 15 ms each, so bucket 1 launches at L + 15.12 ms and its exchange
  // runs beside the next forward, again 15 ms each; bucket 0's backward then runs alone
  // (10 ms): the next launch of bucket 0 is at L + 15.12 + 15 + 10.12 ms. T = 40.24 ms:
  // compute lost 10 ms, the share x the 20 ms the two transfers take alone.
  on_host(s.compute, s.network, 0.5);
  const GossipResult& r = p.predict(s);
  CHECK_THAT(r.iteration.iteration_s, WithinRel(40.24e-3, 1e-9));
  CHECK(r.iteration.exposed_comm_s < 1e-12);
}

TEST_CASE("an exchange's latency costs compute nothing: only its CPU time per byte does",
          "[contention][host][allreduce]") {
  const ModelSpec m = test::ten_mb_tensors(4);
  AllReduceScenario s = two_node_allreduce();
  s.network.inter_latency_s = 1e-3;
  on_host(s.compute, s.network, 0.5);  // 0.05 ns per byte
  AllReducePredictor predictor(m);
  // The buckets of the test above, each all-reduce now 2 crossings x 1 ms longer: 10 MB
  // in 1 + 2 = 3 ms, 30 MB in 3 + 2 = 5 ms. Bucket 1 sends 10 MB: 0.5 ms of CPU over
  // its 3 ms, a share of 1/6, so it and backward run x 7/6 beside each other: it ends at
  // 13.5 ms, backward did 3 ms of work in those 3.5 ms and ends at 40.5 ms (it lost 0.5
  // ms, the transfer's CPU time; the streaming share 0.5 over all 3 ms would take 1.5).
  // Bucket 2 runs alone, 40.5-45.5 ms. Iteration 20 + 40.5 + 5 + 0.2 ms.
  const IterationResult r = predictor.predict(s);
  CHECK_THAT(r.backward_s, WithinRel(40.5e-3, 1e-9));
  CHECK_THAT(r.exposed_comm_s, WithinRel(5e-3, 1e-9));
  CHECK_THAT(r.iteration_s, WithinRel(65.7e-3, 1e-9));
}

TEST_CASE("gossip on the host: exchanges inside a node take the cores too", "[contention][host][gossip]") {
  const ModelSpec m = test::ten_mb_tensors(2);
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 2)));
  GossipScenario s;
  s.network = test::two_single_gpu_nodes(1e9);
  s.network.nodes = 1;
  s.network.gpus_per_node = 2;
  s.network.intra_bytes_per_s = 1e9;
  s.compute = test::fast_memory();
  s.request.optimizer = Optimizer::sgd;
  s.options.bucket_cap_bytes = 10e6;
  // The pair of the test above, inside one node at 1 GB/s: 30.24 ms on GPUs, whose
  // copies do not take the cores that compute runs on.
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(30.24e-3, 1e-9));
  // On the host, 0.5 ns per byte: each 10 ms exchange of 10 MB keeps half the cores busy,
  // as across nodes above: T = 40.24 ms.
  s.compute.runs_on_host = true;
  s.network.host_cpu_s_per_byte = 0.5e-9;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(40.24e-3, 1e-9));
}

TEST_CASE("two-window stretch: both streams' factor until the earlier ends, then the later's",
          "[contention][host]") {
  // 10 ms of work from t = 0; streams busy until 2 ms (together factor 5) and 6 ms (factor 2).
  // [0, 2]: 2 / 5 = 0.4 ms of work; [2, 6]: 4 / 2 = 2 ms; the remaining 7.6 ms alone.
  CHECK_THAT(stretched_compute_s(10e-3, 0.0, 2e-3, 5.0, 6e-3, 2.0), WithinRel(13.6e-3, 1e-12));
  // Work that ends inside the first window runs at the factor of both.
  CHECK_THAT(stretched_compute_s(0.3e-3, 0.0, 2e-3, 5.0, 6e-3, 2.0), WithinRel(1.5e-3, 1e-12));
  // Started after the first window: the later stream's rule alone.
  CHECK(stretched_compute_s(10e-3, 3e-3, 2e-3, 5.0, 6e-3, 2.0) == stretched_compute_s(10e-3, 3e-3, 6e-3, 2.0));
}

TEST_CASE("gossip on the host: a short exchange inside a node slows compute only while it runs",
          "[contention][host][gossip]") {
  // Ring on 2 nodes x 2 ranks: step A pairs ranks across nodes, step B inside them. Two
  // buckets of 20 MB (20 ms of backward each; forward 20 ms); mixing and the SGD step 12
  // passes over 20 MB at 1 TB/s = 0.24 ms per bucket. Inside a node 20 GB/s: 1 ms per
  // exchange. Across: both ranks of a node cross at once on its 1 GB/s NIC, 0.5 GB/s each,
  // 40 ms. 0.25 ns per byte: 5 ms of CPU per exchange, shares 5 (inside) and 0.125
  // (across), so they run 6 ms and 45 ms beside compute.
  const ModelSpec m = test::ten_mb_tensors(4);
  GossipPredictor p(m, compile_schedule(make_topology("ring", 4, 2)));
  GossipScenario s;
  s.network = test::two_single_gpu_nodes(1e9);
  s.network.gpus_per_node = 2;
  s.network.intra_bytes_per_s = 20e9;
  s.compute = test::fast_memory();
  s.compute.runs_on_host = true;
  s.network.host_cpu_s_per_byte = 0.25e-9;
  s.request.optimizer = Optimizer::sgd;
  s.options.bucket_cap_bytes = 20e6;
  // Step A from 0, B's bucket-1 exchange launched then (0-6 ms): forward does 1 ms of work
  // by 6 ms, ends at 25. Bucket 0 ends 45, launches across at 45.24 (45 ms: to 90.24).
  // Bucket 1 runs x 1.125 to 67.74, launches at 67.98 behind bucket 0: from 90.24, x 1.125
  // while compute runs by the engine's estimate (to 67.98 + one iteration's unstretched
  // 60.48 ms = 128.46: 33.97 ms of its 40), then alone: ends 134.49.
  // Step B: forward and bucket 0 x 1.125 (45 ms to 112.98), launch inside at 113.22
  // (to 119.22). Bucket 1 from 113.22 beside both: x (1 + 5 + 0.125) to 119.22 (0.98 ms of
  // work), x 1.125 to 134.49 (13.57 ms), 5.45 ms alone: ends 139.94, launches at 140.18,
  // where step A began, with nothing across in flight. Mean 70.09 ms per iteration.
  // Charging both shares until the exchange across ends puts it at 75.6 ms.
  const double across_end = 128.46 + (40.0 - (128.46 - 90.24) / 1.125);
  const double work = 6.0 / 6.125 + (across_end - 119.22) / 1.125;
  const double period_ms = across_end + (20.0 - work) + 0.24;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(period_ms / 2 * 1e-3, 1e-6));
}

TEST_CASE("the exchange's share of its CPU time: compute loses the same, the exchange waits for a part",
          "[contention][host]") {
  ComputeParams c = test::fast_memory();
  c.runs_on_host = true;
  NetworkParams n = test::two_single_gpu_nodes(1e9);
  n.host_cpu_s_per_byte = 0.5e-9;
  Contention k = contention_beside_compute(c, n);
  // An exchange of D = 1 s alone with a share s = 0.5, beside compute that starts with it.
  // w = 1 (the default): processor sharing, both x 1.5. 1 s of compute takes 1.5 s beside
  // the exchange, which lasts 1.5 s: compute lost 0.5 s, the transport's CPU time s D.
  CHECK(k.host_exchange_share == 1.0);
  CHECK(k.exchange_beside_compute(0.5) == 1.5);
  CHECK(k.compute_beside(0.5) == 1.5);
  CHECK_THAT(stretched_compute_s(1.0, 0.0, 1.5, k.compute_beside(0.5)), WithinRel(1.5, 1e-12));
  // w = 0: the transport first. The exchange keeps its 1 s; compute keeps 1 - s of the
  // cores meanwhile, x 1 / 0.5 = 2: 0.5 s of work in that second, 0.5 s after: 1.5 s. The
  // same 0.5 s lost, the exchange 0.5 s sooner.
  n.host_exchange_share = 0.0;
  k = contention_beside_compute(c, n);
  CHECK(k.exchange_beside_compute(0.5) == 1.0);
  CHECK(k.compute_beside(0.5) == 2.0);
  CHECK_THAT(stretched_compute_s(1.0, 0.0, 1.0, k.compute_beside(0.5)), WithinRel(1.5, 1e-12));
  // w = 0.5: x = 1 + 0.5 x 0.5 = 1.25 s; compute x 1.25 / 0.75 = 5/3: 2 s of work does
  // 0.75 s in the exchange's 1.25 s and 1.25 s after: 2.5 s, again 0.5 s lost.
  n.host_exchange_share = 0.5;
  k = contention_beside_compute(c, n);
  CHECK_THAT(k.exchange_beside_compute(0.5), WithinRel(1.25, 1e-12));
  CHECK_THAT(k.compute_beside(0.5), WithinRel(5.0 / 3.0, 1e-12));
  CHECK_THAT(stretched_compute_s(2.0, 0.0, 1.25, k.compute_beside(0.5)), WithinRel(2.5, 1e-12));
  // A transport whose CPU time outlasts its link time (s = 2: loopback, bound by the CPU):
  // served first it lasts its CPU time, 2 s, and compute stalls meanwhile: 1 s of work
  // ends at 3 s, 2 s lost as under processor sharing (x 3 for 3 s: 1 s of work).
  n.host_exchange_share = 0.0;
  k = contention_beside_compute(c, n);
  CHECK(k.exchange_beside_compute(2.0) == 2.0);
  CHECK(std::isinf(k.compute_beside(2.0)));
  CHECK(stretched_compute_s(1.0, 0.0, 2.0, k.compute_beside(2.0)) == 3.0);
  CHECK(stretched_compute_s(0.0, 0.0, 2.0, k.compute_beside(2.0)) == 0.0);
  // Two windows: stalled until 2 s, then x 1.5 until 3 s (2/3 s of work), 1/3 s after.
  CHECK_THAT(stretched_compute_s(1.0, 0.0, 2.0, k.compute_beside(2.0), 3.0, 1.5), WithinRel(10.0 / 3.0, 1e-12));
  n.host_exchange_share = 1.0;
  k = contention_beside_compute(c, n);
  CHECK(k.exchange_beside_compute(2.0) == 3.0);
  CHECK(stretched_compute_s(1.0, 0.0, 3.0, k.compute_beside(2.0)) == 3.0);
  // The profile's own factors still multiply.
  c.interference_factor = 1.2;
  c.comm_interference_factor = 1.1;
  n.host_exchange_share = 0.0;
  k = contention_beside_compute(c, n);
  CHECK_THAT(k.exchange_beside_compute(0.5), WithinRel(1.1, 1e-12));
  CHECK_THAT(k.compute_beside(0.5), WithinRel(2.4, 1e-12));
}

TEST_CASE("All-Reduce on the host, the transport served first: the all-reduce keeps its speed, compute loses the same",
          "[contention][host][allreduce]") {
  const ModelSpec m = test::ten_mb_tensors(4);
  AllReduceScenario s = two_node_allreduce();
  on_host(s.compute, s.network, 0.5);
  s.network.host_exchange_share = 0.0;
  AllReducePredictor predictor(m);
  // The buckets of the test above. Bucket 1's 1 ms transfer keeps its 1 ms (10-11 ms);
  // backward beside it keeps half the cores, x 2: 0.5 ms of work by 11 ms, the other
  // 29.5 ms after: backward ends at 40.5 ms, as under processor sharing (the factor 1.5
  // there, over this 1 ms window, would end it at 40.33). Bucket 2 alone, 40.5-43.5 ms.
  const IterationResult r = predictor.predict(s);
  CHECK_THAT(r.backward_s, WithinRel(40.5e-3, 1e-9));
  CHECK_THAT(r.exposed_comm_s, WithinRel(3e-3, 1e-9));
  CHECK_THAT(r.iteration_s, WithinRel(63.7e-3, 1e-9));
}
