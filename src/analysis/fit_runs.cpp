#include "dtperf/analysis/fit_runs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "dtperf/error.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

namespace {

// The model's error floor, and the weight of a breakdown component (components are
// defined less sharply than the iteration: where exactly forward ends differs by tool).
constexpr double kModelError = 0.02;
constexpr double kComponentError = 0.05;
// A normal distribution's p10..p90 spans 2.563 standard deviations.
constexpr double kP10P90Sigmas = 2.563;
// Standard error above this fraction of the prior width: not identified by the runs.
constexpr double kIdentifiedRatio = 0.5;

/// A parameter in its fitting scale u: log for scales, efficiencies and latencies;
/// for the overhead, a fraction of the reference iteration (the median measured one).
struct Spec {
  RunParameter parameter;
  bool log = true;
  double prior_u = 0.0;
  double width_u = 1.0;
  double low_u = 0.0;
  double high_u = 0.0;
  double unit = 1.0;  // natural = unit * (log ? exp(u) : u)
  double natural(double u) const { return unit * (log ? std::exp(u) : u); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

RunsModel apply_parameters(const Setup& base, const std::vector<Spec>& specs, const Eigen::VectorXd& u) {
  RunsModel m{base.cluster, 1.0, 1.0};
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const double x = specs[j].natural(u[static_cast<Eigen::Index>(j)]);
    switch (specs[j].parameter) {
      case RunParameter::compute_scale: m.forward_scale = m.backward_scale = x; break;
      case RunParameter::forward_scale: m.forward_scale = x; break;
      case RunParameter::backward_scale: m.backward_scale = x; break;
      case RunParameter::inter_efficiency: m.profile.inter.transport_efficiency = x; break;
      case RunParameter::inter_host: m.profile.inter.host_gbps = x; break;
      case RunParameter::inter_latency: m.profile.inter.latency_s = x; break;
      case RunParameter::intra_efficiency: m.profile.intra.efficiency = x; break;
      case RunParameter::kappa_compute: m.profile.compute.interference_factor = 1.0 + x; break;
      case RunParameter::kappa_comm: m.profile.compute.comm_interference_factor = 1.0 + x; break;
      case RunParameter::overhead: m.profile.compute.iteration_overhead_s = x; break;
      case RunParameter::cross_node_overhead: m.profile.compute.cross_node_overhead_s = x; break;
    }
  }
  return m;
}

class Problem {
 public:
  Problem(const Setup& base, std::span<const MeasuredRun> runs, std::vector<Spec> specs)
      : base_(base), runs_(runs), specs_(std::move(specs)) {
    for (const MeasuredRun& run : runs_) {
      Setup s = base_;
      s.dtype = run.config.cluster.dtype.value_or(base_.dtype);
      s.workload = run.config.workload;
      s.allreduce = run.config.allreduce;
      s.gossip = run.config.gossip;
      s.local_sgd = run.config.local_sgd;
      s.variability = Variability{};
      evaluators_.emplace_back(std::move(s));
    }
  }

  const std::vector<Spec>& specs() const { return specs_; }

  IterationResult predict(std::size_t i, const RunsModel& m) {
    const MeasuredRun& run = runs_[i];
    Evaluator& e = evaluators_[i];
    e.set_compute_scales(m.forward_scale, m.backward_scale);
    const ClusterProfile cluster = apply_overrides(m.profile, run.config.cluster);
    SchemeOutcome o;
    try {
      o = e.evaluate_on(cluster, run.config.scheme);
    } catch (const std::invalid_argument& error) {
      throw InputError(run.file, run.pointer, error.what());
    }
    if (!o.available) throw InputError(run.file, run.pointer, o.unavailable_reason);
    return o.iteration;
  }

  std::size_t data_rows() const {
    std::size_t rows = 0;
    for (const MeasuredRun& run : runs_) {
      const RunMeasurement& m = run.measured;
      rows += 1 + (m.forward_s ? 1 : 0) + (m.backward_s ? 1 : 0) + (m.exposed_comm_s ? 1 : 0) +
              (m.optimizer_s ? 1 : 0);
    }
    return rows;
  }

  /// Data residuals (weighted), then one prior residual per free parameter.
  Eigen::VectorXd residuals(const Eigen::VectorXd& u, const std::vector<int>& free) {
    const RunsModel m = apply_parameters(base_, specs_, u);
    Eigen::VectorXd r(static_cast<Eigen::Index>(data_rows() + free.size()));
    Eigen::Index k = 0;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunMeasurement& meas = runs_[i].measured;
      const IterationResult p = predict(i, m);
      double spread = 0.0;
      if (meas.p10_s && meas.p90_s && *meas.p90_s > *meas.p10_s) {
        spread = std::log(*meas.p90_s / *meas.p10_s) / kP10P90Sigmas;
      }
      r[k++] = std::log(p.iteration_s / meas.iteration_s) / std::hypot(kModelError, spread);
      if (meas.forward_s) r[k++] = std::log(p.forward_s / *meas.forward_s) / kComponentError;
      if (meas.backward_s) r[k++] = std::log(p.backward_s / *meas.backward_s) / kComponentError;
      if (meas.exposed_comm_s) {
        r[k++] = (p.exposed_comm_s - *meas.exposed_comm_s) / meas.iteration_s / kComponentError;
      }
      if (meas.optimizer_s) r[k++] = (p.optimizer_s - *meas.optimizer_s) / meas.iteration_s / kComponentError;
    }
    for (const int j : free) r[k++] = (u[j] - specs_[static_cast<std::size_t>(j)].prior_u) / specs_[static_cast<std::size_t>(j)].width_u;
    return r;
  }

  /// Jacobian of the residuals over the free parameters (forward differences, backward
  /// at an upper bound).
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& u, const std::vector<int>& free, const Eigen::VectorXd& r0) {
    Eigen::MatrixXd J(r0.size(), static_cast<Eigen::Index>(free.size()));
    for (std::size_t c = 0; c < free.size(); ++c) {
      const int j = free[c];
      const Spec& s = specs_[static_cast<std::size_t>(j)];
      double h = 1e-4 * std::max(1.0, std::abs(u[j]));
      if (u[j] + h > s.high_u) h = -h;
      Eigen::VectorXd v = u;
      v[j] += h;
      J.col(static_cast<Eigen::Index>(c)) = (residuals(v, free) - r0) / h;
    }
    return J;
  }

  /// Coordinate scan: each free parameter in turn over 13 points of its range (the others
  /// held), keeping the best; two sweeps. A start for the local iteration that is not
  /// stuck where a parameter has no gradient.
  Eigen::VectorXd scan(Eigen::VectorXd u, const std::vector<int>& free) {
    double best = residuals(u, free).squaredNorm();
    for (int sweep = 0; sweep < 2; ++sweep) {
      for (const int j : free) {
        const Spec& s = specs_[static_cast<std::size_t>(j)];
        for (int k = 0; k <= 12; ++k) {
          Eigen::VectorXd v = u;
          v[j] = s.low_u + (s.high_u - s.low_u) * k / 12.0;
          const double cost = residuals(v, free).squaredNorm();
          if (std::isfinite(cost) && cost < best) {
            best = cost;
            u = v;
          }
        }
      }
    }
    return u;
  }

  /// Projected Levenberg-Marquardt over the free parameters, from `u`.
  Eigen::VectorXd solve(Eigen::VectorXd u, const std::vector<int>& free) {
    if (free.empty()) return u;
    Eigen::VectorXd r = residuals(u, free);
    double cost = r.squaredNorm();
    double lambda = 1e-3;
    for (int iteration = 0; iteration < 200; ++iteration) {
      const Eigen::MatrixXd J = jacobian(u, free, r);
      const Eigen::MatrixXd A = J.transpose() * J;
      const Eigen::VectorXd g = J.transpose() * r;
      bool improved = false;
      double step_norm = 0.0;
      while (lambda < 1e12) {
        Eigen::MatrixXd M = A;
        for (Eigen::Index d = 0; d < M.rows(); ++d) M(d, d) += lambda * (A(d, d) + 1e-9);
        const Eigen::VectorXd delta = M.ldlt().solve(-g);
        Eigen::VectorXd v = u;
        for (std::size_t c = 0; c < free.size(); ++c) {
          const int j = free[c];
          const Spec& s = specs_[static_cast<std::size_t>(j)];
          v[j] = std::clamp(u[j] + delta[static_cast<Eigen::Index>(c)], s.low_u, s.high_u);
        }
        const Eigen::VectorXd rv = residuals(v, free);
        const double cv = rv.squaredNorm();
        if (std::isfinite(cv) && cv < cost) {
          step_norm = (v - u).norm();
          const double gain = cost - cv;
          u = v;
          r = rv;
          cost = cv;
          lambda = std::max(lambda / 3.0, 1e-9);
          improved = true;
          if (gain < 1e-12 * (1.0 + cost)) return u;
          break;
        }
        lambda *= 4.0;
      }
      if (!improved || step_norm < 1e-9) break;
    }
    return u;
  }

  /// Standard errors (fitting scale) of the free parameters at u.
  Eigen::VectorXd standard_errors(const Eigen::VectorXd& u, const std::vector<int>& free) {
    const Eigen::VectorXd r = residuals(u, free);
    const Eigen::MatrixXd J = jacobian(u, free, r);
    // The prior rows of J are diag(1/width): J^T J already holds the prior precision.
    const Eigen::MatrixXd cov = (J.transpose() * J).inverse();
    Eigen::VectorXd se(static_cast<Eigen::Index>(free.size()));
    for (Eigen::Index c = 0; c < se.size(); ++c) se[c] = std::sqrt(std::max(0.0, cov(c, c)));
    return se;
  }

 private:
  const Setup& base_;
  std::span<const MeasuredRun> runs_;
  std::vector<Spec> specs_;
  std::vector<Evaluator> evaluators_;
};

bool is_distributed(const Setup& base, const MeasuredRun& run) {
  const int nodes = run.config.cluster.nodes.value_or(base.cluster.nodes);
  const int per_node = run.config.cluster.gpus_per_node.value_or(base.cluster.gpus_per_node);
  return nodes * per_node > 1;
}

std::vector<Spec> applicable_specs(const Setup& base, std::span<const MeasuredRun> runs, double reference_s,
                                   const RunsFitOptions& options) {
  bool measured_compute = true;
  bool breakdown = false, multi_node = false, free_efficiency = false, multi_gpu_node = false,
       distributed = false, one_node_distributed = false;
  for (const MeasuredRun& run : runs) {
    const RunConfig& c = run.config;
    breakdown = breakdown || (run.measured.forward_s && run.measured.backward_s);
    ComputeRequest request;
    request.source = c.workload.compute_source;
    request.single_gpu_iteration_s = c.workload.single_gpu_iteration_s;
    measured_compute = measured_compute && resolve_compute_source(*base.model, request) != ComputeSource::flops;
    const int nodes = c.cluster.nodes.value_or(base.cluster.nodes);
    const int per_node = c.cluster.gpus_per_node.value_or(base.cluster.gpus_per_node);
    multi_node = multi_node || nodes > 1;
    free_efficiency = free_efficiency || (nodes > 1 && !c.cluster.transport_efficiency);
    multi_gpu_node = multi_gpu_node || (per_node > 1 && !c.cluster.intra_efficiency);
    distributed = distributed || is_distributed(base, run);
    one_node_distributed = one_node_distributed || (nodes == 1 && per_node > 1);
  }
  const ClusterProfile& p = base.cluster;
  const double ln10 = std::log(10.0);
  std::vector<Spec> specs;
  const auto add = [&](Spec s) {
    if (options.only && s.parameter != RunParameter::compute_scale && s.parameter != RunParameter::forward_scale &&
        s.parameter != RunParameter::backward_scale &&
        std::find(options.only->begin(), options.only->end(), s.parameter) == options.only->end()) {
      return;
    }
    s.prior_u = std::clamp(s.prior_u, s.low_u, s.high_u);
    specs.push_back(s);
  };
  // Compute: FLOPs rooflines are 2-9x off, so their prior is wide (a factor of 10); a
  // measured compute source (per-layer log, single-GPU iteration) is known to ~10 %, and
  // what distributed runs add to it belongs to contention and overhead.
  const double compute_width = measured_compute ? std::log(1.1) : ln10;
  if (breakdown) {
    add({RunParameter::forward_scale, true, 0.0, compute_width, std::log(1e-2), std::log(1e2), 1.0});
    add({RunParameter::backward_scale, true, 0.0, compute_width, std::log(1e-2), std::log(1e2), 1.0});
  } else {
    add({RunParameter::compute_scale, true, 0.0, compute_width, std::log(1e-2), std::log(1e2), 1.0});
  }
  // Links: transport efficiencies of real stacks span 0.09-0.9 ([NET]): a factor of 3.
  // A host-driven transport's wire efficiency is well known (headers: ~5 %); its CPU
  // ceiling is what varies between stacks and machines.
  const bool host = p.inter.host_gbps > 0.0;
  if (multi_node && free_efficiency) {
    add({RunParameter::inter_efficiency, true, std::log(p.inter.transport_efficiency),
         std::log(host ? 1.25 : 3.0), std::log(1e-3), 0.0, 1.0});
  }
  if (multi_node && host) {
    add({RunParameter::inter_host, true, std::log(p.inter.host_gbps), std::log(3.0), std::log(0.01), std::log(1e5),
         1.0});
  }
  if (multi_node) {
    add({RunParameter::inter_latency, true, std::log(std::max(p.inter.latency_s, 1e-7)), ln10, std::log(1e-7),
         std::log(1e-2), 1.0});
  }
  if (multi_gpu_node) {
    add({RunParameter::intra_efficiency, true, std::log(p.intra.efficiency), std::log(2.0), std::log(1e-2), 0.0, 1.0});
  }
  if (distributed) {
    // Contention: [NET] measured compute up to ~15 % slower beside communication.
    add({RunParameter::kappa_compute, false, p.compute.interference_factor - 1.0, 0.15, 0.0, 2.0, 1.0});
    add({RunParameter::kappa_comm, false, p.compute.comm_interference_factor - 1.0, 0.3, 0.0, 5.0, 1.0});
    // Overhead, as a fraction of the reference iteration: prior the profile's, width 25 %.
    add({RunParameter::overhead, false, p.compute.iteration_overhead_s / reference_s, 0.25, 0.0, 1.0, reference_s});
  }
  if (one_node_distributed && multi_node) {
    // The same prior as the overhead: what crossing nodes adds beyond the modelled
    // transfers is of the same kind, fixed per iteration.
    add({RunParameter::cross_node_overhead, false, p.compute.cross_node_overhead_s / reference_s, 0.25, 0.0, 1.0,
         reference_s});
  }
  return specs;
}

struct FitCore {
  std::vector<FittedParameter> parameters;
  RunsModel model;
  std::vector<FitNote> notes;
};

// The fit proper: all applicable parameters with priors, then only the identified ones.
FitCore fit_core(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options) {
  std::vector<double> measured;
  for (const MeasuredRun& run : runs) measured.push_back(run.measured.iteration_s);
  Problem problem(base, runs, applicable_specs(base, runs, median(measured), options));
  const std::vector<Spec>& specs = problem.specs();
  const auto n = static_cast<Eigen::Index>(specs.size());
  Eigen::VectorXd prior(n);
  for (Eigen::Index j = 0; j < n; ++j) prior[j] = specs[static_cast<std::size_t>(j)].prior_u;

  std::vector<int> all;
  for (Eigen::Index j = 0; j < n; ++j) all.push_back(static_cast<int>(j));
  const Eigen::VectorXd u_all = problem.solve(problem.scan(prior, all), all);
  const Eigen::VectorXd se_all = problem.standard_errors(u_all, all);

  std::vector<int> identified;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (se_all[j] <= kIdentifiedRatio * specs[static_cast<std::size_t>(j)].width_u) identified.push_back(static_cast<int>(j));
  }
  // Without anything identified, the compute term is what a single measurement anchors.
  if (identified.empty()) identified.push_back(0);
  const Eigen::VectorXd u = problem.solve(problem.scan(prior, identified), identified);
  const Eigen::VectorXd se = problem.standard_errors(u, identified);

  FitCore out;
  out.model = apply_parameters(base, specs, u);
  for (Eigen::Index j = 0; j < n; ++j) {
    const Spec& s = specs[static_cast<std::size_t>(j)];
    FittedParameter f;
    f.parameter = s.parameter;
    f.prior = s.natural(s.prior_u);
    f.value = s.natural(u[j]);
    const auto at = std::find(identified.begin(), identified.end(), static_cast<int>(j));
    f.identified = at != identified.end();
    const double e = f.identified ? se[at - identified.begin()] : 0.0;
    f.low = s.natural(std::max(s.low_u, u[j] - e));
    f.high = s.natural(std::min(s.high_u, u[j] + e));
    out.parameters.push_back(f);
  }
  const bool compute_identified = std::any_of(out.parameters.begin(), out.parameters.end(), [](const auto& f) {
    return f.identified && (f.parameter == RunParameter::compute_scale || f.parameter == RunParameter::forward_scale ||
                            f.parameter == RunParameter::backward_scale);
  });
  const bool network_identified = std::any_of(out.parameters.begin(), out.parameters.end(), [](const auto& f) {
    return f.identified && (f.parameter == RunParameter::inter_efficiency || f.parameter == RunParameter::inter_latency ||
                            f.parameter == RunParameter::intra_efficiency);
  });
  if (!compute_identified && network_identified) {
    out.notes.push_back({.kind = FitNote::Kind::network_instead_of_compute});
  }
  return out;
}

}  // namespace

IterationResult predict_run(const Setup& base, const RunsModel& model, const MeasuredRun& run) {
  Problem problem(base, std::span<const MeasuredRun>(&run, 1), {});
  return problem.predict(0, model);
}

RunsFit fit_runs(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options) {
  if (runs.empty()) throw std::invalid_argument("no measured runs to fit");
  FitCore core = fit_core(base, runs, options);
  RunsFit out;
  out.parameters = core.parameters;
  out.fitted = core.model;
  out.notes = core.notes;

  Problem problem(base, runs, {});
  std::vector<double> abs_errors;
  double sum_sq = 0.0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunResidual r;
    r.label = runs[i].label;
    r.measured_s = runs[i].measured.iteration_s;
    r.predicted = problem.predict(i, out.fitted);
    r.predicted_s = r.predicted.iteration_s;
    r.error = r.predicted_s / r.measured_s - 1.0;
    sum_sq += std::pow(std::log(r.predicted_s / r.measured_s), 2);
    abs_errors.push_back(std::abs(r.error));
    out.runs.push_back(r);
  }
  out.rms_error = std::sqrt(sum_sq / static_cast<double>(runs.size()));
  out.median_abs_error = median(abs_errors);
  out.max_abs_error = *std::max_element(abs_errors.begin(), abs_errors.end());
  for (const RunResidual& r : out.runs) {
    if (std::abs(r.error) > 0.10) {
      out.notes.push_back({.kind = FitNote::Kind::run_not_explained, .run_label = r.label, .error = r.error});
    }
  }

  if (options.leave_one_out && runs.size() >= 2) {
    std::vector<double> loo;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<MeasuredRun> others;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        if (k != i) others.push_back(runs[k]);
      }
      RunsFitOptions inner = options;
      inner.leave_one_out = false;
      const FitCore without = fit_core(base, others, inner);
      const double predicted = problem.predict(i, without.model).iteration_s;
      out.runs[i].leave_one_out = predicted / runs[i].measured.iteration_s - 1.0;
      loo.push_back(std::abs(*out.runs[i].leave_one_out));
    }
    out.loo_median_abs_error = median(loo);
    out.loo_max_abs_error = *std::max_element(loo.begin(), loo.end());
  }
  return out;
}

}  // namespace dtperf
