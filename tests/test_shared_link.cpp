// The shared link (NetworkParams::collectives_in_flight): exchanges that run at once share
// a rank's link fairly, and a process group runs up to k of them; timelines by hand.
#include <catch2/catch.hpp>

#include "dtperf/gossip.hpp"
#include "toy_model.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// Two ranks on two nodes (one group: both), two 10 MB buckets launched 10 ms apart in
// backward (forward 10 ms), each iteration ending once its exchanges are done. At
// 0.5 GB/s a 2-rank ring all-reduce sends 10 MB per rank: 20 ms, plus its 2 steps' latency
// of 2 ms each: 4 ms. Mixing and the SGD step: 12 passes over 10 MB at 1 TB/s = 0.12 ms.
GossipScenario two_buckets_in_a_pair() {
  GossipScenario s;
  s.network = test::two_single_gpu_nodes(0.5e9);
  s.network.inter_latency_s = 2e-3;
  s.compute = test::fast_memory();
  s.request.optimizer = Optimizer::sgd;
  s.options.bucket_cap_bytes = 10e6;
  s.options.overlap = false;
  return s;
}

}  // namespace

TEST_CASE("exchanges in flight together share the link; their latencies overlap", "[gossip][shared-link]") {
  const ModelSpec m = test::ten_mb_tensors(2);
  GossipPredictor p(m, compile_schedule(make_topology("complete", 2, 1)));
  GossipScenario s = two_buckets_in_a_pair();
  // One stream: bucket 0 launched at 20.12 ms ends at 44.12; bucket 1, launched at 30.24,
  // waits for it and ends at 68.12.
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(68.12e-3, 1e-6));
  // Two in flight (gloo): bucket 0's transfer runs alone to 30.24 (9.88 ms left), then
  // both at half the rate: bucket 0's ends at 30.24 + 2 x 9.88 = 50.00, bucket 1's 10.12 ms
  // left then take to 60.12; with its latency bucket 1 ends at 64.12.
  s.network.collectives_in_flight = 2;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(64.12e-3, 1e-5));
  // One at a time per group: bucket 1 starts when bucket 0 ends, as on one stream.
  s.network.collectives_in_flight = 1;
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(68.12e-3, 1e-5));
}

TEST_CASE("an exchange alone on its link costs what it costs on a stream", "[gossip][shared-link]") {
  // One bucket per iteration on a ring of 4 ranks (one per node): no two exchanges of a
  // rank ever overlap, so the shared link changes nothing, overlapped or not.
  const ModelSpec m = test::ten_mb_tensors(2);
  GossipPredictor p(m, compile_schedule(make_topology("ring", 4, 1)));
  GossipScenario s = two_buckets_in_a_pair();
  s.network.nodes = 4;
  s.options.bucket_cap_bytes = 100e6;
  for (const bool overlap : {false, true}) {
    s.options.overlap = overlap;
    s.network.collectives_in_flight = 0;
    const double stream_s = p.predict(s).iteration.iteration_s;
    s.network.collectives_in_flight = 2;
    CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(stream_s, 1e-6));
  }
}
