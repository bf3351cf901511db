#pragma once
// Mixing quality of a topology: the spectral gap of its mixing matrices averaged over a
// period, W = (1/P) sum_k W_k, where W_k averages each group of step k (group_average) or
// each rank with all the peers it met in step k (neighbour_average). The gap is
// 1 - |lambda_2|, the largest eigenvalue magnitude besides the 1 of the consensus vector:
// 1 for exact averaging, near 0 for slowly mixing graphs (a ring: about 2 pi^2 / n^2).
// Every matrix here is doubly stochastic; all are symmetric except a directed topology's
// (push_average steps), whose average is circulant; its gap is 1 - the largest |lambda|
// besides the consensus 1.
//
// Every built-in topology's gap is known in closed form (mixing_closed_form.cpp, each
// derived there), in O(1) or, for the directed graph, O(n log n): 131,072 GPUs cost
// microseconds. random-matching's is the gap of its expected step matrix, the figure the
// convergence theory of random topologies uses. A topology without a closed form, and the
// tests that check the closed forms, use the eigen-solvers: small n, dense
// eigen-decomposition (Eigen); large n, Lanczos with full re-orthogonalisation on W
// restricted to the complement of the consensus vector, using the schedule itself as the
// matrix-vector product (no n x n matrix is built).
#include <Eigen/Dense>

#include "dtperf/topology.hpp"

namespace dtperf {

struct MixingQuality {
  double spectral_gap = 0.0;        // of the period-averaged mixing matrix
  bool converged = true;            // Lanczos converged (always true for the dense path)
  bool exact_average_per_period = false;  // the product over a period is the exact average
  int degree = 0;                   // peers a rank meets per period (distinct), the first rank
};

/// The mixing matrix of one step, dense (for tests and small n).
Eigen::MatrixXd step_mixing_matrix(const Topology& topology, int step);

/// y = W_step x, without forming the matrix.
void apply_step_mixing(const Topology& topology, int step, const Eigen::VectorXd& x, Eigen::VectorXd& y);

enum class GapMethod {
  closed_form,  // the closed form where one is known, else an eigen-solver
  numeric,      // an eigen-solver on the schedule's own matrices (tests; not for random-matching,
                // whose schedule is a sample). Directed topologies have only the circulant form.
};

/// Spectral gap and related quality figures of the topology.
MixingQuality mixing_quality(const Topology& topology, GapMethod method = GapMethod::closed_form);

}  // namespace dtperf
