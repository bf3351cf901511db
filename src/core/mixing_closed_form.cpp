#include "mixing_closed_form.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dtperf {

namespace {

int log2_exact(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Every built-in topology but the directed one is a sum of commuting structured matrices:
//
// ring (n even): the even and odd steps are the two perfect matchings P0, P1 of the n-cycle,
//   W = (1/2) sum_k (I + P_k)/2 = I/2 + (P0 + P1)/4, and P0 + P1 is the cycle's adjacency
//   with eigenvalues 2 cos(2 pi j/n): lambda_j = (1 + cos(2 pi j/n))/2 >= 0, largest at j = 1.
// one-peer-exp (n = 2^d): step k is (I + X_k)/2, X_k the exchange i <-> i XOR 2^k. The X_k
//   share the Walsh vectors chi_s(i) = (-1)^(s.i) with eigenvalue (-1)^(s_k), so
//   lambda_s = (1/d) sum_k (1 + (-1)^(s_k))/2 = (d - |s|)/d: second (d-1)/d at |s| = 1.
// exponential (n = 2^d): W = (I + sum_k X_k)/(d+1), lambda_s = (1 + d - 2|s|)/(d+1): the
//   largest magnitude besides 1 is (d-1)/(d+1), at |s| = 1 and at |s| = d.
// torus (rows x cols, both even and >= 4): W = (I + H + H^-1 + V + V^-1)/5 with H, V the
//   cyclic shifts along a row and a column: lambda_(a,b) = (1 + 2 cos(2 pi a/cols) +
//   2 cos(2 pi b/rows))/5. The largest magnitude besides 1 is the longer side's first
//   harmonic, (3 + 2 cos(2 pi/L))/5 with L = max(rows, cols), which is >= 3/5, the
//   magnitude of the most negative value (a, b) = (cols/2, rows/2).
// alternating-exp-ring (N = 2^d nodes of L ranks): every step gives each rank the mean of
//   its node or of its node pair, so W_k = M_k (x) J_L/L and the intra-node directions have
//   eigenvalue 0. Round r pairs nodes j, j XOR 2^r (Decent-DP's greedy pairing at distance
//   2^r for N a power of two); each pair crosses in one of the round's two slots and stays
//   inside in the other, so the two slots sum to I + (I + X_r)/2, and over the 2d steps
//   M = (1/2d) sum_r (3I + X_r)/2 = 3I/4 + (1/4d) sum_r X_r: lambda_s = 3/4 + (d - 2|s|)/(4d),
//   second 1 - 1/(2d) at |s| = 1 (the smallest, at |s| = d, is 1/2).
// complete: W = J/n, second eigenvalue 0.
// random-matching: a fresh uniform perfect matching every step, so the relevant matrix is
//   the expected step matrix (Koloskova et al. 2020, "A unified theory of decentralized SGD
//   with changing topology", ICML, Assumption 4; W is a projection, so E[W^T W] = E[W]):
//   each rank meets each other with probability 1/(n-1), E[W] = I/2 + (J - I)/(2(n-1)),
//   whose eigenvalue off the consensus vector is (n-2)/(2(n-1)). The seeded period of 16
//   matchings the timing model plays is a sample of it, not its definition.
// one-peer-exp-directed (any n): every step (I + S^(s_k))/2 is circulant, so is their
//   average: lambda_j = (1/P) sum_k (1 + w^(j s_k))/2 with w = exp(2 pi i/n). Not
//   symmetric; |lambda_j| = |lambda_(n-j)|, so j = 1..n/2 suffice, with (j s_k mod n)
//   looked up in a table of the n-th roots of unity: O(n P) without a trigonometric call
//   in the loop.
double directed_second_eigenvalue(const Topology& t) {
  const int n = t.ranks;
  std::vector<double> cosine(static_cast<std::size_t>(n));
  std::vector<double> sine(static_cast<std::size_t>(n));
  for (int m = 0; m < n; ++m) {
    const double angle = 2.0 * M_PI * static_cast<double>(m) / static_cast<double>(n);
    cosine[static_cast<std::size_t>(m)] = std::cos(angle);
    sine[static_cast<std::size_t>(m)] = std::sin(angle);
  }
  double second = 0.0;
  for (int j = 1; j <= n / 2; ++j) {
    double re = 0.0;
    double im = 0.0;
    for (const Step& step : t.steps) {
      const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(j) * step.shift) % n);
      re += 0.5 * (1.0 + cosine[m]);
      im += 0.5 * sine[m];
    }
    second = std::max(second, std::hypot(re, im));
  }
  return second / static_cast<double>(t.period());
}

}  // namespace

std::optional<double> closed_form_second_eigenvalue(const Topology& t) {
  const int n = t.ranks;
  const std::string& name = t.name;
  if (name == "complete") return 0.0;
  if (name == "ring") return (1.0 + std::cos(2.0 * M_PI / n)) / 2.0;
  if (name == "one-peer-exp") {
    const double d = log2_exact(n);
    return (d - 1.0) / d;
  }
  if (name == "exponential") {
    const double d = log2_exact(n);
    return (d - 1.0) / (d + 1.0);
  }
  if (name == "torus") {
    const auto shape = torus_shape(n);
    if (!shape) return std::nullopt;
    const int longer = std::max(shape->first, shape->second);
    return (3.0 + 2.0 * std::cos(2.0 * M_PI / longer)) / 5.0;
  }
  if (name == "alternating-exp-ring") {
    const double d = log2_exact(t.nodes());
    return 1.0 - 1.0 / (2.0 * d);
  }
  if (name == "random-matching") return (n - 2.0) / (2.0 * (n - 1.0));
  if (name == "one-peer-exp-directed") return directed_second_eigenvalue(t);
  return std::nullopt;
}

}  // namespace dtperf
