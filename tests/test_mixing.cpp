// Mixing quality: spectral gaps against their closed forms, on the dense path (small n)
// and the Lanczos path (n > 512), and exact averaging over a period.
#include <catch2/catch.hpp>

#include <cmath>

#include "dtperf/mixing.hpp"

using namespace dtperf;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("step mixing matrices are symmetric and doubly stochastic", "[mixing]") {
  for (const TopologyInfo& info : topologies()) {
    const Topology t = make_topology(info.name, 16, 4);
    for (int k = 0; k < t.period(); ++k) {
      INFO(info.name << " step " << k);
      const Eigen::MatrixXd w = step_mixing_matrix(t, k);
      CHECK((w - w.transpose()).cwiseAbs().maxCoeff() < 1e-12);
      CHECK((w.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
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
