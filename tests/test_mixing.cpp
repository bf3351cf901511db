// Mixing quality: spectral gaps against their closed forms, on the dense path (small n)
// and the Lanczos path (n > 512), the closed forms the engine uses against both solvers at
// every shape up to 256 ranks, and exact averaging over a period.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <Eigen/Eigenvalues>

#include "dtperf/mixing.hpp"

using namespace dtperf;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("step mixing matrices are doubly stochastic, and symmetric unless directed", "[mixing]") {
  for (const TopologyInfo& info : topologies()) {
    const Topology t = make_topology(info.name, 16, 4);
    for (int k = 0; k < t.period(); ++k) {
      INFO(info.name << " step " << k);
      const Eigen::MatrixXd w = step_mixing_matrix(t, k);
      // (A directed step is symmetric only when it sends half-way round: S^(n/2).)
      if (!t.directed()) CHECK((w - w.transpose()).cwiseAbs().maxCoeff() < 1e-12);
      CHECK((w.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
      CHECK((w.colwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
      CHECK(w.minCoeff() >= 0.0);
    }
  }
}

TEST_CASE("spectral gaps match their closed forms", "[mixing]") {
  // Complete: W = J, gap 1.
  CHECK_THAT(mixing_quality(make_topology("complete", 16, 4)).spectral_gap, WithinAbs(1.0, 1e-12));
  // Ring: W = I/2 + (S + S^-1)/4, eigenvalues 1/2 + cos(2 pi k / n)/2: gap (1 - cos(2 pi/n))/2.
  for (int n : {16, 600}) {  // 600 takes the Lanczos path
    INFO("ring n=" << n);
    const MixingQuality q = mixing_quality(make_topology("ring", n, 4));
    CHECK(q.converged);
    CHECK_THAT(q.spectral_gap, WithinRel((1.0 - std::cos(2.0 * M_PI / n)) / 2.0, 1e-6));
    CHECK(!q.exact_average_per_period);
  }
  // One-peer-exp: W = (1/d) sum_k (I + P_k)/2 over the hypercube's d dimensions; the
  // second eigenvalue is (d-1)/d, gap 1/d = 1/log2(n); exact average after d steps.
  for (int n : {16, 1024}) {
    INFO("one-peer-exp n=" << n);
    const MixingQuality q = mixing_quality(make_topology("one-peer-exp", n, 4));
    CHECK_THAT(q.spectral_gap, WithinRel(1.0 / std::log2(n), 1e-6));
    CHECK(q.exact_average_per_period);
    CHECK(q.degree == static_cast<int>(std::log2(n)));
  }
  // Exponential (hypercube) graph: W = (I + sum_k P_k)/(d+1), second eigenvalue
  // (d-1)/(d+1): gap 2/(d+1); d = 4 for n = 16.
  CHECK_THAT(mixing_quality(make_topology("exponential", 16, 4)).spectral_gap, WithinRel(2.0 / 5.0, 1e-9));
  // AER on 2 nodes of 4: W = (B + J)/2 with B the node blocks: gap 1/2.
  CHECK_THAT(mixing_quality(make_topology("alternating-exp-ring", 8, 4)).spectral_gap, WithinRel(0.5, 1e-9));
}

TEST_CASE("every closed-form gap equals the eigen-solver's at every valid shape", "[mixing]") {
  // The closed forms (mixing_closed_form.cpp) against the dense solver on the schedules
  // themselves, for every node size and rank count up to 256 the topology accepts, and
  // against Lanczos on a few larger ones; the exact-average flag and the degree against
  // the schedule's own product and groups. random-matching's schedule is a sample; its
  // expectation has its own test below.
  int compared = 0;
  for (const TopologyInfo& info : topologies()) {
    const std::string name = info.name;
    if (name == "random-matching" || name == "one-peer-exp-directed") continue;
    for (int per_node : {1, 2, 4, 8}) {
      for (int n = per_node; n <= 256; n += per_node) {
        if (topology_unavailable(name, n, per_node)) continue;
        INFO(name << " n=" << n << " per node " << per_node);
        const Topology t = make_topology(name, n, per_node);
        const MixingQuality closed = mixing_quality(t);
        const MixingQuality numeric = mixing_quality(t, GapMethod::numeric);
        CHECK_THAT(closed.spectral_gap, WithinAbs(numeric.spectral_gap, 1e-9));
        CHECK(closed.exact_average_per_period == numeric.exact_average_per_period);
        CHECK(closed.degree == numeric.degree);
        ++compared;
      }
    }
  }
  CHECK(compared > 200);
  for (const auto& [name, n, per_node] : {std::tuple{"torus", 576, 8}, {"alternating-exp-ring", 1024, 8},
                                            {"exponential", 1024, 4}, {"ring", 640, 8}}) {
    INFO(name << " n=" << n);
    const Topology t = make_topology(name, n, per_node);
    const MixingQuality numeric = mixing_quality(t, GapMethod::numeric);
    REQUIRE(numeric.converged);
    CHECK_THAT(mixing_quality(t).spectral_gap, WithinAbs(numeric.spectral_gap, 1e-7));
  }
}

TEST_CASE("random-matching: the gap of the expected matching, which averaged samples approach", "[mixing]") {
  // E[W] = I/2 + (J - I)/(2(n-1)): gap 1 - (n-2)/(2(n-1)) = n/(2(n-1)); 16/30 for n = 16.
  CHECK_THAT(mixing_quality(make_topology("random-matching", 16, 4)).spectral_gap, WithinRel(16.0 / 30.0, 1e-12));
  CHECK_THAT(mixing_quality(make_topology("random-matching", 2, 1)).spectral_gap, WithinAbs(1.0, 1e-12));
  // The average of many seeded periods of matchings converges to E[W]: with 64 periods
  // (1,024 matchings) its gap is within a few hundredths of the expectation, while one
  // period of 16 falls well short (a 16-regular union of matchings, not the complete graph).
  const int n = 16;
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(n, n);
  int matchings = 0;
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    const Topology t = make_topology("random-matching", n, 4, seed);
    for (int k = 0; k < t.period(); ++k, ++matchings) sum += step_mixing_matrix(t, k);
  }
  Eigen::MatrixXd w = sum / matchings;
  w.array() -= 1.0 / n;
  const double second = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(w).eigenvalues().cwiseAbs().maxCoeff();
  CHECK_THAT(1.0 - second, WithinAbs(16.0 / 30.0, 0.03));
  const double one_period = mixing_quality(make_topology("random-matching", n, 4), GapMethod::numeric).spectral_gap;
  CHECK(one_period < 16.0 / 30.0 - 0.03);
}

TEST_CASE("the directed one-peer exponential graph: circulant eigenvalues by hand", "[mixing][directed]") {
  // n = 4: shifts 1 and 2, W = ((I + S) / 2 + (I + S^2) / 2) / 2. With w = i:
  // lambda_1 = ((1 + i) / 2 + 0) / 2, |lambda_1| = sqrt(2) / 4; lambda_2 = (0 + 1) / 2 = 1/2;
  // lambda_3 = conj(lambda_1). Gap 1 - 1/2.
  const Topology four = make_topology("one-peer-exp-directed", 4, 2);
  REQUIRE(four.period() == 2);
  const MixingQuality q = mixing_quality(four);
  CHECK_THAT(q.spectral_gap, WithinAbs(0.5, 1e-12));
  CHECK(q.exact_average_per_period);  // (1 + x)(1 + x^2) / 4 = (1 + x + x^2 + x^3) / 4
  CHECK(q.degree == 2);
  // Any n >= 2: the closed form agrees with a general eigen-solver on the averaged matrix,
  // and only powers of two average exactly in a period.
  for (int n : {6, 8, 12}) {
    INFO("n=" << n);
    const Topology t = make_topology("one-peer-exp-directed", n, 2);
    Eigen::MatrixXd w = Eigen::MatrixXd::Zero(n, n);
    for (int k = 0; k < t.period(); ++k) w += step_mixing_matrix(t, k) / t.period();
    const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(w).eigenvalues();
    std::vector<double> moduli;
    for (Eigen::Index j = 0; j < lambda.size(); ++j) moduli.push_back(std::abs(lambda[j]));
    std::sort(moduli.begin(), moduli.end());
    CHECK_THAT(moduli.back(), WithinAbs(1.0, 1e-9));
    const MixingQuality d = mixing_quality(t);
    CHECK_THAT(d.spectral_gap, WithinAbs(1.0 - moduli[moduli.size() - 2], 1e-9));
    CHECK(d.exact_average_per_period == (n == 8));
  }
}
