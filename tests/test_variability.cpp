// Variable compute: the simulations degenerate to the deterministic engines, All-Reduce
// with i.i.d. normal compute matches the expected maximum of n normals, draws are
// reproducible, and a persistent straggler paces every scheme.
#include <catch2/catch.hpp>

#include <cmath>

#include "dtperf/allreduce.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

struct Transformer {
  ModelSpec model = *zoo_model("transformer-base");
  ClusterProfile profile;
  explicit Transformer(int nodes) {
    ClusterOverrides o;
    o.nodes = nodes;
    o.interference_factor = 1.1;  // exercise the stretch too
    profile = apply_overrides(io::load_profile("a100x4-ib100"), o);
  }
  AllReduceScenario allreduce() const {
    AllReduceScenario s;
    s.network = network_params(profile, 1.0, {});
    s.compute = compute_params(profile, DType::bf16);
    s.request = compute_request(model, WorkloadOptions{}, profile.ranks());
    return s;
  }
  GossipScenario gossip() const {
    const AllReduceScenario a = allreduce();
    return GossipScenario{a.network, a.compute, a.request, {}};
  }
};

Variability normal(double cv, int iterations) {
  Variability v;
  v.law = NoiseLaw::normal;
  v.cv = cv;
  v.iterations = iterations;
  v.warmup_iterations = 10;
  return v;
}

}  // namespace

TEST_CASE("All-Reduce with no variability equals the deterministic engine bit for bit", "[variability][allreduce]") {
  const Transformer t(8);
  AllReducePredictor p(t.model);
  const IterationResult deterministic = p.predict(t.allreduce());
  // The stochastic machinery runs (a normal law with CV 0 draws factors of exactly 1).
  const VariabilityOutcome& v = p.predict(t.allreduce(), normal(0.0, 50));
  CHECK(v.iteration.iteration_s == deterministic.iteration_s);
  CHECK(v.iteration.forward_s == deterministic.forward_s);
  CHECK(v.iteration.backward_s == deterministic.backward_s);
  CHECK(v.iteration_p99_s == deterministic.iteration_s);
  CHECK(v.idle_min_s == v.idle_max_s);
}

TEST_CASE("gossip with no variability equals the deterministic engine", "[variability][gossip]") {
  const Transformer t(8);
  for (const char* name : {"alternating-exp-ring", "one-peer-exp", "ring", "torus", "complete"}) {
    INFO(name);
    const Topology topology = make_topology(name, 32, 4);
    GossipPredictor classes(t.model, compile_schedule(topology, true));
    GossipPredictor ranks(t.model, compile_schedule(topology, false));
    const double deterministic = classes.predict(t.gossip()).iteration.iteration_s;
    const GossipResult& v = ranks.predict(t.gossip(), normal(0.0, 100));
    REQUIRE(v.variable);
    // Equal to the deterministic engine's own steadiness tolerance (its measuring window
    // differs, so the sums run over different whole periods).
    CHECK(v.iteration.iteration_s == Approx(deterministic).epsilon(1e-9));
  }
  GossipPredictor sgp(t.model, compile_sgp_schedule(32, 4, false), GossipAlgorithm::sgp);
  GossipPredictor sgp_classes(t.model, compile_sgp_schedule(32, 4, true), GossipAlgorithm::sgp);
  CHECK(sgp.predict(t.gossip(), normal(0.0, 100)).iteration.iteration_s ==
        Approx(sgp_classes.predict(t.gossip()).iteration.iteration_s).epsilon(1e-9));
}

TEST_CASE("All-Reduce with i.i.d. normal compute waits for the expected maximum of n draws", "[variability][closed-form]") {
  // One tensor of 4 bytes with 10 ms of backward (forward 5 ms), a network and memory so
  // fast that communication and the optimizer step cost ~1e-20 s: every iteration lasts
  // max_i f_i x 15 ms with f_i = 1 + cv z_i. So E[T] = 15 ms x (1 + cv E[M_n]), with M_n the
  // maximum of n standard normals, whose mean and standard deviation come from numerical
  // integration. Over K iterations the sample mean has standard error
  // 15 ms x cv x sd(M_n) / sqrt(K); the test allows 4 of them.
  ModelSpec m;
  TensorSpec tensor;
  tensor.params = 1;
  tensor.measured_backward_s = 10e-3;
  m.tensors.push_back(tensor);
  AllReduceScenario s;
  s.network.gpus_per_node = 8;
  s.network.intra_bytes_per_s = 1e30;
  s.network.nic_line_bytes_per_s = 1e30;
  s.compute.kernel_overhead_s = 0.0;
  s.compute.memory_bytes_per_s = 1e30;
  const double cv = 0.1;
  const int iterations = 4000;
  AllReducePredictor p(m);
  for (int nodes : {1, 8, 64}) {
    s.network.nodes = nodes;
    const int n = 8 * nodes;
    const auto [mean_max, sd_max] = normal_maximum_moments(n);
    const double expected = 15e-3 * (1.0 + cv * mean_max);
    const double tolerance = 4.0 * 15e-3 * cv * sd_max / std::sqrt(iterations);
    const double measured = p.predict(s, normal(cv, iterations)).iteration.iteration_s;
    INFO("n = " << n << ": E[M_n] = " << mean_max << ", expected " << expected * 1e3 << " ms, simulated "
                << measured * 1e3 << " ms, tolerance " << tolerance * 1e3 << " ms");
    CHECK(std::abs(measured - expected) <= tolerance);
  }
  // The integration itself, against the exact forms E[M_2] = 1/sqrt(pi) and
  // E[M_3] = 3/(2 sqrt(pi)), sd(M_2) = sqrt(1 - 1/pi); and the growth like sqrt(2 ln n).
  CHECK_THAT(normal_maximum_moments(2).first, WithinRel(1.0 / std::sqrt(M_PI), 1e-9));
  CHECK_THAT(normal_maximum_moments(3).first, WithinRel(1.5 / std::sqrt(M_PI), 1e-9));
  CHECK_THAT(normal_maximum_moments(2).second, WithinRel(std::sqrt(1.0 - 1.0 / M_PI), 1e-9));
  CHECK(normal_maximum_moments(4096).first < std::sqrt(2.0 * std::log(4096.0)));
}

TEST_CASE("the same seed gives the same simulation, another seed another", "[variability]") {
  const Transformer t(4);
  const Topology topology = make_topology("alternating-exp-ring", 16, 4);
  GossipPredictor p(t.model, compile_schedule(topology, false));
  Variability v = normal(0.2, 100);
  const double first = p.predict(t.gossip(), v).iteration.iteration_s;
  CHECK(p.predict(t.gossip(), v).iteration.iteration_s == first);
  v.seed = 2;
  CHECK(p.predict(t.gossip(), v).iteration.iteration_s != first);
}

TEST_CASE("variable compute settles as long whether the settling run merges ranks or not", "[variability][gossip]") {
  // The warm-up lasts at least the deterministic run's settling, and the histogram is
  // centred on its iteration time: read from a schedule merged into rank classes (as the
  // evaluator does, far cheaper at scale) they are bit for bit the per-rank run's
  // (CanonicalMean), so every output is too.
  const Transformer t(4);
  for (const char* name : {"ring", "alternating-exp-ring", "torus"}) {
    INFO(name);
    const Topology topology = make_topology(name, 16, 4);
    GossipPredictor classes(t.model, compile_schedule(topology, true));
    GossipPredictor ranks(t.model, compile_schedule(topology, false));
    GossipPredictor given(t.model, compile_schedule(topology, false));
    const GossipResult& merged = classes.predict(t.gossip());
    REQUIRE(merged.rank_classes < 16);
    const Variability v = normal(0.2, 60);
    const GossipResult& own = ranks.predict(t.gossip(), v);
    const GossipResult& hinted = given.predict(t.gossip(), v, merged);
    CHECK(hinted.iterations_simulated == own.iterations_simulated);
    CHECK(hinted.iteration.iteration_s == own.iteration.iteration_s);
    CHECK(hinted.variability.iteration_p50_s == own.variability.iteration_p50_s);
    CHECK(hinted.variability.iteration_p99_s == own.variability.iteration_p99_s);
    CHECK(hinted.variability.idle_max_s == own.variability.idle_max_s);
  }
}

TEST_CASE("variable compute costs All-Reduce more than gossip", "[variability]") {
  const Transformer t(16);
  AllReducePredictor ar(t.model);
  GossipPredictor aer(t.model, compile_schedule(make_topology("alternating-exp-ring", 64, 4), false));
  const double ar_calm = ar.predict(t.allreduce()).iteration_s;
  const double aer_calm = aer.predict(t.gossip()).iteration.iteration_s;
  const VariabilityOutcome ar_noisy = ar.predict(t.allreduce(), normal(0.2, 300));
  const GossipResult& aer_noisy = aer.predict(t.gossip(), normal(0.2, 300));
  // All-Reduce waits for the slowest of 64 draws in every bucket; AER only for its group.
  CHECK(ar_noisy.iteration.iteration_s / ar_calm > aer_noisy.iteration.iteration_s / aer_calm);
  CHECK(aer_noisy.variability.iteration_p99_s > aer_noisy.variability.iteration_p50_s);
}

TEST_CASE("a persistently slow rank paces every scheme and waits least", "[variability][straggler]") {
  const Transformer t(4);
  Variability v;
  v.slow_ranks = {{5, 1.5}};
  v.iterations = 200;
  AllReducePredictor ar(t.model);
  const VariabilityOutcome& a = ar.predict(t.allreduce(), v);
  CHECK(a.straggler_rank == 5);
  CHECK(a.idle_max_s > a.idle_min_s);
  // Gossip cannot outrun a persistent straggler either: every rank stays within a few
  // iterations of its groups, so in the long run all run at the slowest rank's pace.
  GossipPredictor aer(t.model, compile_schedule(make_topology("alternating-exp-ring", 16, 4), false));
  const GossipResult& g = aer.predict(t.gossip(), v);
  const double calm = GossipPredictor(t.model, compile_schedule(make_topology("alternating-exp-ring", 16, 4)))
                          .predict(t.gossip())
                          .iteration.iteration_s;
  CHECK(g.iteration.iteration_s > 1.3 * calm);
  CHECK(g.variability.straggler_rank / 4 == 1);  // rank 5's node (it mixes inside it)
}

TEST_CASE("uncontended All-Reduce under variable compute: the slowest rank sets every bucket", "[variability][allreduce]") {
  // Nothing slows compute beside the all-reduce (interference 1), so the engine follows
  // the slowest rank alone. With rank 5 at 1.5x and the others at 1x, every bucket waits
  // for rank 5: an iteration lasts what the deterministic engine gives with every compute
  // time 1.5x (the same sums, scaled; equal up to rounding). Rank 5 idles what that
  // timeline exposes; every other rank also waits out its 0.5x of forward and backward.
  Transformer t(4);
  AllReduceScenario s = t.allreduce();
  s.compute.interference_factor = 1.0;
  s.options.framework_copies = false;  // backward is then the compute alone, which the factor scales
  AllReducePredictor p(t.model);
  const IterationResult calm = p.predict(s);
  AllReduceScenario slow = s;
  slow.compute.compute_scale = 1.5;
  const IterationResult paced = p.predict(slow);
  Variability v;
  v.slow_ranks = {{5, 1.5}};
  v.iterations = 20;
  const VariabilityOutcome& a = p.predict(s, v);
  CHECK_THAT(a.iteration.iteration_s, WithinRel(paced.iteration_s, 1e-12));
  CHECK(a.straggler_rank == 5);
  const double exposed_s = paced.iteration_s - paced.forward_s - paced.backward_s - paced.optimizer_s - paced.overhead_s;
  CHECK_THAT(a.idle_min_s, WithinRel(exposed_s, 1e-9));
  CHECK_THAT(a.idle_max_s, WithinRel(exposed_s + 0.5 * (calm.forward_s + calm.backward_s), 1e-9));
  // Forward and backward are the mean over ranks: (15 x 1 + 1.5) / 16 of the calm ones.
  CHECK_THAT(a.iteration.backward_s, WithinRel(calm.backward_s * 16.5 / 16.0, 1e-12));
}

TEST_CASE("persistent factors multiply, per rank and per node", "[variability]") {
  Variability v;
  v.slow_nodes = {{1, 2.0}};
  v.slow_ranks = {{5, 1.5}, {0, 1.25}};
  const std::vector<double> f = persistent_factors(v, 8, 4);
  CHECK(f == std::vector<double>{1.25, 1.0, 1.0, 1.0, 2.0, 3.0, 2.0, 2.0});
}

TEST_CASE("the ziggurat draws standard normals", "[variability][sampler]") {
  // 1,000,000 draws: mean within 4 standard errors of 0 (4e-3), variance of 1 (4 x
  // sqrt(2/n) = 5.7e-3), and the two-sided tails beyond 1 and 3 at their exact
  // probabilities 0.3173 and 0.0027 (4 binomial standard errors).
  Variability v;
  v.law = NoiseLaw::normal;
  NoiseStream stream(v, 1, 1);
  const int n = 1'000'000;
  double sum = 0.0, squares = 0.0;
  int beyond_1 = 0, beyond_3 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = test_standard_normal(stream);
    sum += z;
    squares += z * z;
    beyond_1 += std::abs(z) > 1.0;
    beyond_3 += std::abs(z) > 3.0;
  }
  const double mean = sum / n;
  CHECK(std::abs(mean) < 4.0 / std::sqrt(n));
  CHECK(std::abs(squares / n - mean * mean - 1.0) < 4.0 * std::sqrt(2.0 / n));
  const auto within = [&](int count, double p) { return std::abs(count / double(n) - p) < 4.0 * std::sqrt(p * (1 - p) / n); };
  CHECK(within(beyond_1, 0.31731050786));
  CHECK(within(beyond_3, 0.00269979606));
}
