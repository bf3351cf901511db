// Validation against [DEC] (Wang et al., "From promise to practice: realizing
// high-performance decentralized training", ICLR 2025). On 4xA100 nodes with InfiniBand
// (the built-in a100x4-ib100 profile), Transformer-base with 25,000 tokens per iteration in
// total (strong scaling), fp32 parameters and gradients, mixed-precision (fp16) compute as
// their runs used, 25 MiB buckets, the paper measured per iteration (ms):
//
//                    8 GPUs  16 GPUs  32 GPUs
//   All-Reduce        73.0     54.8     51.5
//   one-peer-exp      63.4     46.8     44.7
//   AER               61.7     45.8     43.7
//   SGP               69.4     53.0     50.7
//
// Anchored on the All-Reduce 8-GPU value only (the compute term is scaled to reproduce
// it), dtperf must predict the other eleven within 10 % each.
#include <catch2/catch.hpp>

#include <cmath>

#include "dtperf/evaluator.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;

TEST_CASE("the [DEC] per-iteration times are predicted within 10 % from one anchor", "[validation][dec]") {
  const ModelSpec model = *zoo_model("transformer-base");
  Setup setup;
  setup.cluster = io::load_profile("a100x4-ib100");
  setup.model = &model;
  setup.dtype = DType::fp16;
  setup.workload.global_batch = 25000;
  Evaluator e(setup);
  e.set_compute_scale(e.fit_compute_scale(Scheme::allreduce(), 2, 73.0e-3));

  const struct {
    Scheme scheme;
    double measured_ms[3];
  } rows[] = {{Scheme::allreduce(), {73.0, 54.8, 51.5}},
              {Scheme::gossip("one-peer-exp"), {63.4, 46.8, 44.7}},
              {Scheme::gossip("alternating-exp-ring"), {61.7, 45.8, 43.7}},
              {Scheme::sgp(), {69.4, 53.0, 50.7}}};
  double worst = 0.0;
  for (int i = 0; i < 3; ++i) {
    ClusterProfile cluster = e.setup().cluster;
    cluster.nodes = 2 << i;  // 8, 16, 32 GPUs
    double allreduce_ms = 0.0;
    double aer_ms = 0.0;
    for (const auto& row : rows) {
      const SchemeOutcome o = e.evaluate_on(cluster, row.scheme);
      REQUIRE(o.available);
      const double predicted = o.iteration.iteration_s * 1e3;
      const double error = predicted / row.measured_ms[i] - 1.0;
      INFO(row.scheme.name() << " on " << cluster.ranks() << " GPUs: predicted " << predicted << " ms, measured "
                             << row.measured_ms[i] << " ms, error " << 100 * error << " %");
      CHECK(std::abs(error) <= 0.10);
      if (!(row.scheme.kind == Scheme::Kind::allreduce && i == 0)) worst = std::max(worst, std::abs(error));
      if (row.scheme.kind == Scheme::Kind::allreduce) allreduce_ms = predicted;
      if (row.scheme.name() == "alternating-exp-ring") aer_ms = predicted;
    }
    // The winner is right at every scale: AER beats All-Reduce by 16-18 % in the paper.
    CHECK(aer_ms < allreduce_ms);
  }
  WARN("[DEC] validation: worst error over the eleven predictions " << 100 * worst << " %");
}
