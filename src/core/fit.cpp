#include "dtperf/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>


namespace dtperf {

std::optional<double> bus_factor(std::string_view collective, int ranks) {
  if (ranks < 1) throw std::invalid_argument("bus_factor: ranks must be >= 1");
  const double n = ranks;
  if (collective == "all_reduce") return 2.0 * (n - 1.0) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return (n - 1.0) / n;
  }
  if (collective == "sendrecv" || collective == "broadcast" || collective == "reduce") return 1.0;
  return std::nullopt;
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct LineFit {
  double alpha_s = 0.0;
  double beta_s_per_byte = 0.0;
  double sse = kInfinity;  // sum of squared relative errors
};

double line_sse(std::span<const SizeTime> p, double alpha, double beta) {
  double sse = 0.0;
  for (const auto& q : p) {
    const double e = (alpha + beta * q.bytes - q.time_s) / q.time_s;
    sse += e * e;
  }
  return sse;
}

// Minimises sum(((alpha + beta*b) - t)/t)^2 with alpha >= 0, beta >= min_beta (see the
// header: unconstrained if feasible, else the best clamped boundary fit).
LineFit fit_line(std::span<const SizeTime> p, double min_beta) {
  const auto n = static_cast<Eigen::Index>(p.size());
  Eigen::MatrixXd x(n, 2);
  double scale = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& q = p[static_cast<std::size_t>(i)];
    x(i, 0) = 1.0 / q.time_s;
    x(i, 1) = q.bytes / q.time_s;
    scale = std::max(scale, x(i, 1));
  }
  x.col(1) /= scale;
  const Eigen::Vector2d theta = x.colPivHouseholderQr().solve(Eigen::VectorXd::Ones(n));
  const double alpha = theta(0);
  const double beta = theta(1) / scale;
  if (alpha >= 0.0 && beta >= min_beta && std::isfinite(alpha) && std::isfinite(beta)) {
    return {alpha, beta, line_sse(p, alpha, beta)};
  }
  // Boundary alpha = 0: beta * (b/t) ~ 1.
  double sum_x2 = 0.0, sum_x2x2 = 0.0, sum_x1 = 0.0, sum_x1x1 = 0.0, sum_x1x2 = 0.0;
  for (const auto& q : p) {
    const double x1 = 1.0 / q.time_s;
    const double x2 = q.bytes / q.time_s;
    sum_x1 += x1;
    sum_x2 += x2;
    sum_x1x1 += x1 * x1;
    sum_x2x2 += x2 * x2;
    sum_x1x2 += x1 * x2;
  }
  const double beta0 = std::max(min_beta, sum_x2 / sum_x2x2);
  LineFit on_alpha{0.0, beta0, line_sse(p, 0.0, beta0)};
  // Boundary beta = min_beta: alpha * (1/t) ~ 1 - min_beta * b/t.
  const double alpha0 = std::max(0.0, (sum_x1 - min_beta * sum_x1x2) / sum_x1x1);
  LineFit on_beta{alpha0, min_beta, line_sse(p, alpha0, min_beta)};
  return on_alpha.sse <= on_beta.sse ? on_alpha : on_beta;
}

struct Cut {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // [begin, end) per segment
  std::vector<LineFit> lines;
};

// Dynamic programming over the sorted sizes; BIC picks the number of segments.
Cut best_cut(std::span<const SizeTime> p, const FitOptions& o) {
  const std::size_t n = p.size();
  const std::size_t m = std::min<std::size_t>(static_cast<std::size_t>(std::max(2, o.min_points_per_segment)), n);
  const std::size_t kmax = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(o.max_segments), n / m));
  std::vector<std::vector<LineFit>> line(n + 1, std::vector<LineFit>(n + 1));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + m; j <= n; ++j) line[i][j] = fit_line(p.subspan(i, j - i), o.min_seconds_per_byte);
  }
  // best[k][j]: least SSE covering the first j sizes with k segments; from: the cut.
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(n + 1, kInfinity));
  std::vector<std::vector<std::size_t>> from(kmax + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0.0;
  for (std::size_t k = 1; k <= kmax; ++k) {
    for (std::size_t j = k * m; j <= n; ++j) {
      for (std::size_t i = (k - 1) * m; i + m <= j; ++i) {
        const double total = best[k - 1][i] + line[i][j].sse;
        if (total < best[k][j]) {
          best[k][j] = total;
          from[k][j] = i;
        }
      }
    }
  }
  const double dn = static_cast<double>(n);
  std::size_t chosen = 1;
  double chosen_score = kInfinity;
  for (std::size_t k = 1; k <= kmax; ++k) {
    if (!std::isfinite(best[k][n])) continue;
    const double score = dn * std::log(best[k][n] / dn + o.noise_floor * o.noise_floor) +
                         (3.0 * static_cast<double>(k) - 1.0) * std::log(dn);
    if (score < chosen_score) {
      chosen_score = score;
      chosen = k;
    }
  }
  Cut cut;
  for (std::size_t k = chosen, j = n; k > 0; --k) {
    const std::size_t i = from[k][j];
    cut.ranges.emplace_back(i, j);
    cut.lines.push_back(line[i][j]);
    j = i;
  }
  std::reverse(cut.ranges.begin(), cut.ranges.end());
  std::reverse(cut.lines.begin(), cut.lines.end());
  return cut;
}

double segment_time_s(const AlphaBetaSegment& s, double factor, double bytes) {
  return s.alpha_s + bytes * factor / s.bus_bytes_per_s;
}

}  // namespace

namespace {

// Segments fitted to the points marked in `use` (sorted, at least 2 marked).
std::vector<AlphaBetaSegment> fit_segments(const std::vector<SizeTime>& p, const std::vector<char>& use,
                                           double factor, const FitOptions& options) {
  std::vector<SizeTime> in;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (use[i]) in.push_back(p[i]);
  }
  const Cut cut = best_cut(in, options);
  std::vector<AlphaBetaSegment> segments;
  for (std::size_t s = 0; s < cut.ranges.size(); ++s) {
    const auto [begin, end] = cut.ranges[s];
    segments.push_back({in[begin].bytes, in[end - 1].bytes, cut.lines[s].alpha_s, factor / cut.lines[s].beta_s_per_byte});
  }
  return segments;
}

std::vector<SizeTime> sorted_points(std::span<const SizeTime> points) {
  if (points.size() < 2) throw std::invalid_argument("fit_collective: at least 2 points are needed");
  std::vector<SizeTime> p(points.begin(), points.end());
  std::sort(p.begin(), p.end(), [](const SizeTime& a, const SizeTime& b) { return a.bytes < b.bytes; });
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!(p[i].bytes > 0.0) || !(p[i].time_s > 0.0) || (i > 0 && p[i].bytes == p[i - 1].bytes)) {
      throw std::invalid_argument("fit_collective: sizes must be distinct and positive, times positive");
    }
  }
  return p;
}

}  // namespace

CollectiveFit fit_collective(const std::string& collective, int ranks, int nodes,
                             std::span<const SizeTime> points, const FitOptions& options) {
  const auto factor = bus_factor(collective, ranks);
  if (!factor || *factor <= 0.0) {
    throw std::invalid_argument(fmt::format("fit_collective: no bus factor for {} on {} ranks", collective, ranks));
  }
  const std::vector<SizeTime> p = sorted_points(points);
  CollectiveFit result;
  result.bus_factor = *factor;
  result.fit.collective = collective;
  result.fit.level = nodes <= 1 ? "intra" : "inter";
  result.fit.ranks = ranks;
  result.fit.nodes = nodes;
  // A size slower than outlier_factor x some larger size is an outlier.
  std::vector<char> inlier(p.size(), 1);
  double fastest_above = std::numeric_limits<double>::infinity();
  for (std::size_t i = p.size(); i-- > 0;) {
    if (options.outlier_factor > 1.0 && p[i].time_s > options.outlier_factor * fastest_above) inlier[i] = 0;
    fastest_above = std::min(fastest_above, p[i].time_s);
  }
  result.fit.segments = fit_segments(p, inlier, *factor, options);
  double sum_squares = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double predicted = fit_time_s(result.fit, p[i].bytes);
    const double e = (predicted - p[i].time_s) / p[i].time_s;
    if (inlier[i]) sum_squares += e * e;
    result.residuals.push_back({p[i].bytes, p[i].time_s, predicted, e, inlier[i] == 0});
  }
  result.fit.rms_relative_error =
      std::sqrt(sum_squares / static_cast<double>(std::count(inlier.begin(), inlier.end(), 1)));
  result.worst = result.residuals;
  std::stable_sort(result.worst.begin(), result.worst.end(), [](const auto& a, const auto& b) {
    return std::abs(a.relative_error) > std::abs(b.relative_error);
  });
  result.worst.resize(std::min<std::size_t>(3, result.worst.size()));
  return result;
}

double fit_time_s(const AlphaBetaFit& fit, double bytes) {
  const auto factor = bus_factor(fit.collective, std::max(1, fit.ranks));
  if (!factor || fit.segments.empty()) throw std::invalid_argument("fit_time_s: not a usable fit");
  const auto& s = fit.segments;
  if (bytes <= s.front().max_bytes) return segment_time_s(s.front(), *factor, bytes);
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (bytes < s[i].min_bytes) {
      const double faster = std::min(segment_time_s(s[i - 1], *factor, bytes), segment_time_s(s[i], *factor, bytes));
      const double lower_bytes = s[i - 1].max_bytes;
      const double upper_bytes = s[i].min_bytes;
      const double lower_s = segment_time_s(s[i - 1], *factor, lower_bytes);
      const double upper_s = segment_time_s(s[i], *factor, upper_bytes);
      const double chord_s =
          lower_s * std::pow(upper_s / lower_s, std::log(bytes / lower_bytes) / std::log(upper_bytes / lower_bytes));
      return std::max(faster, chord_s);
    }
    if (bytes <= s[i].max_bytes) return segment_time_s(s[i], *factor, bytes);
  }
  return segment_time_s(s.back(), *factor, bytes);
}

bool latency_only(const AlphaBetaSegment& segment, double bus_factor, const FitOptions& options) {
  const double seconds_per_byte = bus_factor / segment.bus_bytes_per_s;
  return seconds_per_byte <= options.min_seconds_per_byte * (1.0 + 1e-6);
}

PredictionErrors prediction_errors(const AlphaBetaFit& fit, std::span<const SizeTime> points, double min_bytes) {
  PredictionErrors e;
  double sum_log = 0.0;
  for (const auto& q : points) {
    if (q.bytes < min_bytes) continue;
    const double ratio = fit_time_s(fit, q.bytes) / q.time_s;
    sum_log += std::abs(std::log(ratio));
    ++e.points;
    if (std::abs(ratio - 1.0) > e.worst) {
      e.worst = std::abs(ratio - 1.0);
      e.worst_bytes = q.bytes;
    }
  }
  if (e.points > 0) e.geomean = std::exp(sum_log / e.points) - 1.0;
  return e;
}

std::optional<HoldoutErrors> holdout_errors(const std::string& collective, int ranks, int nodes,
                                            std::span<const SizeTime> points, const FitOptions& options) {
  std::vector<SizeTime> sorted(points.begin(), points.end());
  std::sort(sorted.begin(), sorted.end(), [](const SizeTime& a, const SizeTime& b) { return a.bytes < b.bytes; });
  if (sorted.size() < 3) return std::nullopt;
  std::vector<SizeTime> fitted, held_out;
  for (std::size_t i = 0; i < sorted.size(); ++i) (i % 2 == 0 ? fitted : held_out).push_back(sorted[i]);
  const CollectiveFit fit = fit_collective(collective, ranks, nodes, fitted, options);
  HoldoutErrors e;
  e.fitted = static_cast<int>(fitted.size());
  e.held_out = prediction_errors(fit.fit, held_out);
  e.large = prediction_errors(fit.fit, held_out, 1024.0 * 1024.0);
  return e;
}

}  // namespace dtperf
