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

// Each built-in topology's averaged (or expected) matrix is a sum of structured matrices whose
// eigenvalues are known:
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
//   symmetric; |lambda_j| = |lambda_(n-j)|, so j = 1..n/2 suffice: O(n P).
double directed_second_eigenvalue(const Topology& t) {
  const int n = t.ranks;
  // w^(j s_k) for each step k, advanced from j to j + 1 by one complex multiplication by
  // w^(s_k): O(P) memory and no trigonometric call in the loop. The rounding drift over
  // n/2 products is about n/2 x 1e-16, far below the gap's digits (the tests compare with
  // a general eigen-solver to 1e-9).
  const std::size_t steps = t.steps.size();
  std::vector<double> step_re(steps), step_im(steps), re_k(steps, 1.0), im_k(steps, 0.0);
  for (std::size_t k = 0; k < steps; ++k) {
    const double angle = 2.0 * M_PI * static_cast<double>(((t.steps[k].shift % n) + n) % n) / n;
    step_re[k] = std::cos(angle);
    step_im[k] = std::sin(angle);
  }
  double second_squared = 0.0;
  for (int j = 1; j <= n / 2; ++j) {
    double re = 0.0;
    double im = 0.0;
    for (std::size_t k = 0; k < steps; ++k) {
      const double r = re_k[k] * step_re[k] - im_k[k] * step_im[k];
      im_k[k] = re_k[k] * step_im[k] + im_k[k] * step_re[k];
      re_k[k] = r;
      re += 0.5 * (1.0 + r);
      im += 0.5 * im_k[k];
    }
    second_squared = std::max(second_squared, re * re + im * im);
  }
  return std::sqrt(second_squared) / static_cast<double>(t.period());
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

// The product over a period: complete averages in its one step; one-peer-exp is the
// hypercube's dimension exchange, exact after its d steps; AER's two slots of round r
// together apply (I + X_r)/2 between nodes (each node pair crosses once, the pairs are
// disjoint) and every step averages inside nodes, so its period is the same exchange over
// the nodes; the directed graph averages exactly when n is a power of two (its steps'
// product is (1/n) sum of all shifts); the ring of 2 is one pair, the ring of 4 the
// hypercube of 2 dimensions, and a longer ring's two steps reach 4 < n ranks (each step at
// most doubles the ranks a rank's value has reached). A static graph's period
// is its W, exact only if W = J, which no built-in static graph is (n >= 16 for the
// torus, >= 4 for the exponential graph: lambda_2 > 0 above). A random matching doubles
// at most the support of a rank's weights per step, so 16 steps cannot average more than
// 2^16 ranks; below that, the sample decides (checked numerically).
std::optional<bool> closed_form_exact_average(const Topology& t) {
  const int n = t.ranks;
  const std::string& name = t.name;
  if (name == "complete" || name == "one-peer-exp" || name == "alternating-exp-ring") return true;
  if (name == "ring") return n <= 4;
  if (name == "torus" || name == "exponential") return false;
  if (name == "one-peer-exp-directed") return (n & (n - 1)) == 0;
  if (name == "random-matching" && n > (1 << t.period())) return false;
  return std::nullopt;
}

// Rank 0's distinct peers: all others (complete); its two ring neighbours (one when n = 2);
// one per hypercube dimension (one-peer-exp, exponential); the torus's four; under AER the
// other L - 1 ranks of its node and the L ranks of each of the d partner nodes 2^r. The
// random matching's and the directed graph's are counted from the schedule (cheap).
std::optional<int> closed_form_degree(const Topology& t) {
  const int n = t.ranks;
  const std::string& name = t.name;
  if (name == "complete") return n - 1;
  if (name == "ring") return n == 2 ? 1 : 2;
  if (name == "one-peer-exp" || name == "exponential") return log2_exact(n);
  if (name == "torus") return 4;
  if (name == "alternating-exp-ring") return t.ranks_per_node - 1 + t.ranks_per_node * log2_exact(t.nodes());
  return std::nullopt;
}

}  // namespace dtperf
