#include "dtperf/mixing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <Eigen/Eigenvalues>

#include "mixing_closed_form.hpp"

namespace dtperf {

namespace {

constexpr int kDenseLimit = 512;      // dense eigen-decomposition up to this many ranks
constexpr int kLanczosSteps = 600;    // Krylov dimension cap beyond that
constexpr double kResidualTolerance = 1e-10;

// Distinct peers of every rank in a neighbour-average step.
std::vector<std::vector<std::int32_t>> step_peers(const Topology& t, const Step& step) {
  std::vector<std::vector<std::int32_t>> peers(static_cast<std::size_t>(t.ranks));
  for (const Round& round : step.rounds) {
    for (std::size_t g = 0; g < round.groups(); ++g) {
      const auto group = round.group(g);
      for (const auto a : group) {
        for (const auto b : group) {
          if (a != b) peers[static_cast<std::size_t>(a)].push_back(b);
        }
      }
    }
  }
  for (auto& p : peers) {
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return peers;
}

// The schedule as a linear operator: y = W_avg x, built once per topology.
class AveragedMixing {
 public:
  explicit AveragedMixing(const Topology& t) : t_(t) {
    for (const Step& step : t.steps) {
      peers_.push_back(step.mixing == Mixing::neighbour_average ? step_peers(t, step)
                                                                 : std::vector<std::vector<std::int32_t>>{});
    }
  }

  void apply_step(int k, const Eigen::VectorXd& x, Eigen::VectorXd& y) const {
    const Step& step = t_.steps[static_cast<std::size_t>(k)];
    if (step.mixing == Mixing::push_average) {
      const Eigen::Index n = x.size();
      for (Eigen::Index i = 0; i < n; ++i) y[i] = 0.5 * (x[i] + x[(i - step.shift % n + n) % n]);
      return;
    }
    if (step.mixing == Mixing::neighbour_average) {
      const auto& peers = peers_[static_cast<std::size_t>(k)];
      for (std::size_t i = 0; i < peers.size(); ++i) {
        double sum = x[static_cast<Eigen::Index>(i)];
        for (const auto j : peers[i]) sum += x[j];
        y[static_cast<Eigen::Index>(i)] = sum / static_cast<double>(peers[i].size() + 1);
      }
      return;
    }
    y = x;  // ranks outside every group keep their value
    for (const Round& round : step.rounds) {
      for (std::size_t g = 0; g < round.groups(); ++g) {
        const auto group = round.group(g);
        double sum = 0.0;
        for (const auto r : group) sum += y[r];
        const double mean = sum / static_cast<double>(group.size());
        for (const auto r : group) y[r] = mean;
      }
    }
  }

  void apply_average(const Eigen::VectorXd& x, Eigen::VectorXd& y) const {
    y.setZero(x.size());
    Eigen::VectorXd step_y(x.size());
    for (int k = 0; k < t_.period(); ++k) {
      apply_step(k, x, step_y);
      y += step_y;
    }
    y /= static_cast<double>(t_.period());
  }

 private:
  const Topology& t_;
  std::vector<std::vector<std::vector<std::int32_t>>> peers_;
};

Eigen::VectorXd seeded_vector(int n) {
  Eigen::VectorXd v(n);
  std::uint64_t state = 0x2545F4914F6CDD1DULL;
  for (int i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    v[i] = static_cast<double>(state % 1000003) / 1000003.0 - 0.5;
  }
  v.array() -= v.mean();
  return v.normalized();
}

double dense_second_eigenvalue(const AveragedMixing& mixing, int n) {
  Eigen::MatrixXd w(n, n);
  Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd column(n);
  for (int j = 0; j < n; ++j) {
    e[j] = 1.0;
    mixing.apply_average(e, column);
    w.col(j) = column;
    e[j] = 0.0;
  }
  w.array() -= 1.0 / n;  // remove the consensus eigenvalue
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(0.5 * (w + w.transpose()), Eigen::EigenvaluesOnly);
  return solver.eigenvalues().cwiseAbs().maxCoeff();
}

// Lanczos on W restricted to the complement of the consensus vector; returns the largest
// Ritz value magnitude and whether its residual bound met the tolerance.
std::pair<double, bool> lanczos_second_eigenvalue(const AveragedMixing& mixing, int n) {
  const int steps = std::min(n - 1, kLanczosSteps);
  Eigen::MatrixXd basis(n, steps + 1);
  basis.col(0) = seeded_vector(n);
  std::vector<double> alpha;
  std::vector<double> beta;
  Eigen::VectorXd w(n);
  double estimate = 0.0;
  for (int j = 0; j < steps; ++j) {
    mixing.apply_average(basis.col(j), w);
    alpha.push_back(basis.col(j).dot(w));
    for (int pass = 0; pass < 2; ++pass) {  // full re-orthogonalisation, twice is enough
      w -= basis.leftCols(j + 1) * (basis.leftCols(j + 1).transpose() * w);
      w.array() -= w.mean();
    }
    beta.push_back(w.norm());
    const bool invariant = beta.back() < 1e-13;
    if (invariant || j % 10 == 9 || j + 1 == steps) {
      const int m = j + 1;
      Eigen::MatrixXd tri = Eigen::MatrixXd::Zero(m, m);
      for (int i = 0; i < m; ++i) {
        tri(i, i) = alpha[static_cast<std::size_t>(i)];
        if (i + 1 < m) tri(i, i + 1) = tri(i + 1, i) = beta[static_cast<std::size_t>(i)];
      }
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(tri);
      Eigen::Index best = 0;
      solver.eigenvalues().cwiseAbs().maxCoeff(&best);
      estimate = std::abs(solver.eigenvalues()[best]);
      const double residual = beta.back() * std::abs(solver.eigenvectors()(m - 1, best));
      if (invariant || residual < kResidualTolerance) return {estimate, true};
    }
    basis.col(j + 1) = w / beta.back();
  }
  return {estimate, false};
}

}  // namespace

void apply_step_mixing(const Topology& topology, int step, const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  AveragedMixing(topology).apply_step(step, x, y);
}

Eigen::MatrixXd step_mixing_matrix(const Topology& topology, int step) {
  const AveragedMixing mixing(topology);
  const int n = topology.ranks;
  Eigen::MatrixXd w(n, n);
  Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd column(n);
  for (int j = 0; j < n; ++j) {
    e[j] = 1.0;
    mixing.apply_step(step, e, column);
    w.col(j) = column;
    e[j] = 0.0;
  }
  return w;
}

MixingQuality mixing_quality(const Topology& topology, GapMethod method) {
  MixingQuality q;
  const int n = topology.ranks;
  if (n <= 1) {
    q.spectral_gap = 1.0;
    q.exact_average_per_period = true;
    return q;
  }
  const std::optional<double> closed = closed_form_second_eigenvalue(topology);
  const bool use_closed = closed && (method == GapMethod::closed_form || topology.directed());
  // The schedule as an operator, built only where a solver or the exact-average check
  // needs it (a static graph's neighbour lists cost far more than its closed form).
  std::optional<AveragedMixing> mixing;
  if (!use_closed) mixing.emplace(topology);
  double second = 0.0;
  if (use_closed) {
    second = *closed;
  } else if (n <= kDenseLimit) {
    second = dense_second_eigenvalue(*mixing, n);
  } else {
    std::tie(second, q.converged) = lanczos_second_eigenvalue(*mixing, n);
  }
  q.spectral_gap = std::clamp(1.0 - second, 0.0, 1.0);

  // Exact averaging over a period: the product of the step matrices sends any vector
  // orthogonal to the consensus vector to zero.
  const std::optional<bool> exact = method == GapMethod::closed_form ? closed_form_exact_average(topology) : std::nullopt;
  if (exact) {
    q.exact_average_per_period = *exact;
  } else {
    if (!mixing) mixing.emplace(topology);
    Eigen::VectorXd x = seeded_vector(n);
    Eigen::VectorXd y(n);
    for (int k = 0; k < topology.period(); ++k) {
      mixing->apply_step(k, x, y);
      x.swap(y);
    }
    q.exact_average_per_period = x.norm() < 1e-9;
  }

  // Rank 0's distinct peers over the period: the groups it is in, and whom it sends to.
  const std::optional<int> degree = method == GapMethod::closed_form ? closed_form_degree(topology) : std::nullopt;
  if (degree) {
    q.degree = *degree;
    return q;
  }
  std::vector<std::int32_t> peers;
  for (const Step& step : topology.steps) {
    if (step.mixing == Mixing::push_average) peers.push_back(step.shift % n);  // rank 0 sends to
    for (const Round& round : step.rounds) {
      const auto zero = std::find(round.members.begin(), round.members.end(), 0);
      if (zero == round.members.end()) continue;
      const auto at = static_cast<std::int32_t>(zero - round.members.begin());
      const auto g = static_cast<std::size_t>(std::upper_bound(round.offsets.begin(), round.offsets.end(), at) -
                                              round.offsets.begin() - 1);
      for (const auto r : round.group(g)) {
        if (r != 0) peers.push_back(r);
      }
    }
  }
  std::sort(peers.begin(), peers.end());
  q.degree = static_cast<int>(std::unique(peers.begin(), peers.end()) - peers.begin());
  return q;
}

}  // namespace dtperf
