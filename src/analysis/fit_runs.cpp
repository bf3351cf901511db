#include "dtperf/analysis/fit_runs.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/limits.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

// The search boxes; the reasons for each prior and width are at applicable_specs.
RunParameterBox search_box(RunParameter p) {
  const auto log_box = [](double low, double high) { return RunParameterBox{true, 1.0, std::log(low), std::log(high)}; };
  switch (p) {
    case RunParameter::compute_scale:
    case RunParameter::forward_scale:
    case RunParameter::backward_scale: return log_box(1e-2, 1e2);
    case RunParameter::inter_efficiency: return log_box(1e-3, 1.0);
    case RunParameter::inter_host: return log_box(0.01, 1e5);  // Gbit/s
    case RunParameter::inter_latency: return log_box(1e-7, 1e-2);  // s
    case RunParameter::intra_efficiency: return log_box(1e-2, 1.0);
    case RunParameter::kappa_compute: return {false, 1.0, 0.0, 2.0};
    case RunParameter::kappa_comm: return {false, 1.0, 0.0, 5.0};
    case RunParameter::launch_overhead:
    case RunParameter::tensor_overhead: return {false, units::us, 0.0, 1e4};  // up to 10 ms
    case RunParameter::host_per_byte:
    case RunParameter::inter_host_per_byte: return {false, 1e-9, 0.0, 10.0};  // ns/B, up to 10
  }
  return {};
}

namespace {

// The model's error floor, and the weight of a breakdown component (components are
// defined less sharply than the iteration: where exactly forward ends differs by tool).
constexpr double kModelError = 0.02;
constexpr double kComponentError = 0.05;
// A normal distribution's p10..p90 spans 2.563 standard deviations.
constexpr double kP10P90Sigmas = 2.563;
// Standard error above this fraction of the prior width: not identified by the runs.
constexpr double kIdentifiedRatio = 0.5;
// Correlations of identified parameters reported from this |r| on: pairs the runs tell
// apart only together.
constexpr double kReportedCorrelation = 0.5;
// The standard normal's 90th percentile: P10 and P90 are -/+ this many sigmas.
constexpr double kP90Sigmas = 1.2816;
// The local search ends when an iteration lowers the objective (a sum of squared
// residuals in standard errors, priors included) by less than this many standard errors'
// worth. A rise of 1 is one standard error away from the mode along any direction, so
// what is left of the search then moves the parameters by far less than their
// uncertainty. Where the runs scatter more than the errors assumed (the objective over
// its residuals, the reduced chi-square, above 1), one standard error of that scatter is
// that many times 1 (the usual scaling of a fit's errors by its reduced chi-square), and
// the tolerance scales with it. Where max() in the timelines leaves a long shallow
// valley, the search otherwise crawls along it for its 200 iterations: on 50
// configurations of five schemes, 200 iterations gained 0.36 over the last 160, each
// iteration 1e-4 to 0.02.
constexpr double kObjectiveTolerance = 0.01;

/// A parameter in its fitting scale u: log for scales, efficiencies and latencies; the
/// host work per launch in us and per byte in ns/B.
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

// A parameter's spec: its search box (search_box) with a prior and a prior width in u.
Spec spec(RunParameter p, double prior_u, double width_u) {
  const RunParameterBox box = search_box(p);
  return {p, box.log, prior_u, width_u, box.low_u, box.high_u, box.unit};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void set_run_parameter(RunParameter p, double x, RunsModel& m) {
  switch (p) {
    case RunParameter::compute_scale: m.forward_scale = m.backward_scale = x; break;
    case RunParameter::forward_scale: m.forward_scale = x; break;
    case RunParameter::backward_scale: m.backward_scale = x; break;
    case RunParameter::inter_efficiency: m.profile.inter.transport_efficiency = x; break;
    case RunParameter::inter_host: m.profile.inter.host_gbps = x; break;
    case RunParameter::inter_latency: m.profile.inter.latency_s = x; break;
    case RunParameter::intra_efficiency: m.profile.intra.efficiency = x; break;
    case RunParameter::kappa_compute: m.profile.compute.interference_factor = 1.0 + x; break;
    case RunParameter::kappa_comm: m.profile.compute.comm_interference_factor = 1.0 + x; break;
    case RunParameter::launch_overhead: m.profile.transport.launch_s = x; break;
    case RunParameter::tensor_overhead: m.profile.transport.tensor_s = x; break;
    case RunParameter::host_per_byte: m.profile.transport.host_s_per_byte = x; break;
    case RunParameter::inter_host_per_byte: m.profile.transport.inter_host_s_per_byte = x; break;
  }
}

double run_parameter(RunParameter p, const RunsModel& m) {
  switch (p) {
    case RunParameter::compute_scale:
    case RunParameter::forward_scale: return m.forward_scale;
    case RunParameter::backward_scale: return m.backward_scale;
    case RunParameter::inter_efficiency: return m.profile.inter.transport_efficiency;
    case RunParameter::inter_host: return m.profile.inter.host_gbps;
    case RunParameter::inter_latency: return m.profile.inter.latency_s;
    case RunParameter::intra_efficiency: return m.profile.intra.efficiency;
    case RunParameter::kappa_compute: return m.profile.compute.interference_factor - 1.0;
    case RunParameter::kappa_comm: return m.profile.compute.comm_interference_factor - 1.0;
    case RunParameter::launch_overhead: return m.profile.transport.launch_s;
    case RunParameter::tensor_overhead: return m.profile.transport.tensor_s;
    case RunParameter::host_per_byte: return m.profile.transport.host_s_per_byte;
    case RunParameter::inter_host_per_byte: return m.profile.transport.inter_host_s_per_byte;
  }
  return 0.0;
}

bool fitted_in_log(RunParameter p) {
  switch (p) {
    case RunParameter::kappa_compute:
    case RunParameter::kappa_comm:
    case RunParameter::launch_overhead:
    case RunParameter::tensor_overhead:
    case RunParameter::host_per_byte:
    case RunParameter::inter_host_per_byte: return false;
    default: return true;
  }
}

namespace {

// Whether a what-if fixes the value a parameter would set.
bool fixed_by(RunParameter p, const ClusterOverrides& o) {
  switch (p) {
    case RunParameter::inter_efficiency: return o.transport_efficiency.has_value();
    case RunParameter::inter_host: return o.host_gbps.has_value();
    case RunParameter::inter_latency: return o.inter_latency_s.has_value();
    case RunParameter::intra_efficiency: return o.intra_efficiency.has_value();
    case RunParameter::kappa_compute: return o.interference_factor.has_value();
    case RunParameter::kappa_comm: return o.comm_interference_factor.has_value();
    default: return false;
  }
}

RunsModel apply_parameters(const Setup& base, const std::vector<Spec>& specs, const Eigen::VectorXd& u) {
  RunsModel m{base.cluster, 1.0, 1.0};
  for (std::size_t j = 0; j < specs.size(); ++j) set_run_parameter(specs[j].parameter, specs[j].natural(u[static_cast<Eigen::Index>(j)]), m);
  return m;
}

// Items 0..count-1 on up to `threads` threads, each taking the next item not yet taken
// (their costs differ), `done(i)` after each, one call at a time, whether or not it
// failed; then the first failing item's error, in item order. Each item writes only its
// own slots, so the result does not depend on the number of threads.
template <typename Item, typename Done>
void for_each_on_threads(std::size_t count, std::size_t threads, Item&& item, Done&& done) {
  std::vector<std::exception_ptr> failures(count);
  std::atomic<std::size_t> next{0};
  std::mutex reporting;
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        item(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
      const std::lock_guard lock(reporting);
      done(i);
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (std::size_t t = 1; t < std::min(threads, count); ++t) helpers.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

// What one prediction costs as the reference core takes it (limits.hpp, kMaxFitS: the
// rates and their measurement).
double prediction_cost_s(const SchemeOutcome& o) {
  if (o.iterations_simulated == 0) return limits::kFitClosedFormPredictionS;
  const double per_iteration =
      limits::kFitIterationS + o.iteration.buckets * o.exchange_slots_per_iteration * limits::kFitExchangeSlotS;
  return limits::kFitGossipPredictionS + o.iterations_simulated * per_iteration;
}

// The time a fit may take (limits::kMaxFitS), charged as its evaluations are made: each
// evaluation's cost over the threads that share the work. A fit that would pass it stops
// with an error on the runs file, saying what took the time. Deterministic for a given
// number of threads: the costs are counted, not timed.
class FitBudget {
 public:
  FitBudget(std::string file, double limit_s) : file_(std::move(file)), limit_s_(limit_s) {}

  /// The distinct configurations of the fit's runs, for the messages.
  void set_configurations(std::size_t configurations) { configurations_ = configurations; }

  /// Where the search's first scan alone, `evaluations` at `first_cost_s` each (the
  /// first, at the priors), would pass the limit: refused before it starts.
  void refuse_if_projected(double first_cost_s, std::size_t evaluations, std::size_t threads) const {
    const double projected_s = first_cost_s * static_cast<double>(evaluations) / static_cast<double>(threads);
    if (projected_s <= limit_s_) return;
    throw InputError(file_, "",
                     fmt::format("fitting these runs would take about {:.3g} s or more on {} thread{} (their {} "
                                 "take {:.3g} ms per evaluation at the priors, and the search's first scan alone "
                                 "makes {}), beyond the {:.3g} s a fit may take: {}",
                                 projected_s, threads, threads == 1 ? "" : "s", configurations(), first_cost_s * 1e3,
                                 evaluations, limit_s_, shorter()));
  }

  /// One evaluation of `cost_s`, made on `threads` threads; `refit`: by a held-out refit.
  void charge(double cost_s, std::size_t threads, bool refit) {
    const std::lock_guard lock(mutex_);
    (refit ? refits_s_ : search_s_) += cost_s / static_cast<double>(threads);
    if (!refit) {
      ++evaluations_;
      search_one_thread_s_ += cost_s;
    }
    if (search_s_ + refits_s_ <= limit_s_) return;
    if (refit) {
      // The refits run beside each other: how far each got when one passed the limit
      // depends on the threads' timing, so the message counts the search's alone.
      throw InputError(file_, "",
                       fmt::format("the held-out refits would take the fit past the {:.3g} s it may take (the fit "
                                   "itself made {} evaluations of its {}): --no-leave-one-out skips them",
                                   limit_s_, evaluations_, configurations()));
    }
    throw InputError(file_, "",
                     fmt::format("the fit would take more than the {:.3g} s it may take: after {} evaluations of "
                                 "its {} its search had not converged: {}",
                                 limit_s_, evaluations_, configurations(), shorter()));
  }

  double search_s() const { return search_s_; }
  double refits_s() const { return refits_s_; }
  /// The search's evaluations as one thread would take them: the same for any number of
  /// threads, so what depends on it (the profiles' share) does not change the fit with them.
  double search_one_thread_s() const { return search_one_thread_s_; }

 private:
  std::string configurations() const {
    return fmt::format("{} distinct configuration{}", configurations_, configurations_ == 1 ? "" : "s");
  }

  // What shortens a fit: fewer configurations to predict, and fewer ranks where a
  // topology simulates each (random matchings) or settles slowly (rings).
  std::string shorter() const {
    return fmt::format("fit {}runs on fewer ranks of topologies that simulate every rank (random matchings) or "
                       "settle slowly (rings)",
                       configurations_ > 1 ? "fewer distinct configurations (repeated runs of one count once), or "
                                           : "");
  }

  std::string file_;
  double limit_s_ = 0.0;
  std::size_t configurations_ = 0;
  std::mutex mutex_;
  double search_s_ = 0.0;
  double refits_s_ = 0.0;
  double search_one_thread_s_ = 0.0;
  long evaluations_ = 0;  // the search's
};

// The fit's objective over a set of runs. Runs of one configuration (repeated
// measurements) predict alike, so each distinct configuration is predicted once per
// evaluation: the cost follows the configurations, not the runs.
class Problem {
 public:
  /// `threads`: how many predict the configurations of one evaluation (each
  /// configuration has its own evaluator, and its prediction its own slot: the same values
  /// for any number). With a `budget`, each evaluation is charged to it, its cost shared by
  /// `sharing` threads (these, or the held-out refits running beside each other).
  Problem(const Setup& base, std::span<const MeasuredRun> runs, std::vector<Spec> specs, std::size_t threads = 1,
          FitBudget* budget = nullptr, std::size_t sharing = 1, bool refit = false)
      : base_(base),
        runs_(runs),
        specs_(std::move(specs)),
        threads_(std::max<std::size_t>(threads, 1)),
        budget_(budget),
        sharing_(std::max<std::size_t>(sharing, 1)),
        refit_(refit) {
    config_of_.reserve(runs_.size());
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunConfig& config = runs_[i].config;
      const auto same = std::find_if(first_run_.begin(), first_run_.end(),
                                     [&](std::size_t k) { return runs_[k].config == config; });
      config_of_.push_back(static_cast<std::size_t>(same - first_run_.begin()));
      if (same != first_run_.end()) continue;
      first_run_.push_back(i);
      Setup s = base_;
      if (config.model) s.model = config.model.get();
      s.dtype = config.cluster.dtype.value_or(base_.dtype);
      s.workload = config.workload;
      s.allreduce = config.allreduce;
      s.gossip = config.gossip;
      s.local_sgd = config.local_sgd;
      s.variability = Variability{};
      evaluators_.emplace_back(std::move(s));
      at_parameters_.push_back({apply_overrides(base_.cluster, config.cluster), 1.0, 1.0});
    }
    predicted_.resize(first_run_.size());
    cost_s_.resize(first_run_.size());
    // An evaluation's configurations share no more threads than there are of them.
    if (!refit_) sharing_ = std::min(sharing_, first_run_.size());
    if (budget_ != nullptr && !refit_) budget_->set_configurations(first_run_.size());
  }

  /// What the last evaluation of every configuration cost (prediction_cost_s).
  double last_evaluation_cost_s() const { return std::accumulate(cost_s_.begin(), cost_s_.end(), 0.0); }

  const std::vector<Spec>& specs() const { return specs_; }

  IterationResult predict(std::size_t i, const RunsModel& m) { return predict_config(config_of_[i], m); }

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
    Eigen::VectorXd r(static_cast<Eigen::Index>(data_rows() + free.size()));
    Eigen::Index k = 0;
    predict_configs_at(u);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunMeasurement& meas = runs_[i].measured;
      const IterationResult& p = predicted_[config_of_[i]];
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

  /// Coordinate scan: each free parameter in turn over 13 points of its range and 13
  /// within three prior widths of its prior (the others held), keeping the best; two
  /// sweeps. A start for the local iteration that is not stuck where a parameter has no
  /// gradient, nor in a far valley when a near one explains the runs as well.
  Eigen::VectorXd scan(Eigen::VectorXd u, const std::vector<int>& free) {
    double best = residuals(u, free).squaredNorm();
    // The fit's first scan, priced from its first evaluation: refused before it runs
    // where it alone would pass the time a fit may take.
    if (budget_ != nullptr && !scanned_) {
      budget_->refuse_if_projected(last_evaluation_cost_s(), 1 + 2 * 26 * free.size(), sharing_);
    }
    scanned_ = true;
    for (int sweep = 0; sweep < 2; ++sweep) {
      for (const int j : free) {
        const Spec& s = specs_[static_cast<std::size_t>(j)];
        for (int k = 0; k <= 25; ++k) {
          Eigen::VectorXd v = u;
          v[j] = k <= 12 ? s.low_u + (s.high_u - s.low_u) * k / 12.0
                         : std::clamp(s.prior_u + s.width_u * (k - 19) / 2.0, s.low_u, s.high_u);
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

  /// Projected Levenberg-Marquardt over the free parameters, from `u`, for at most
  /// `iterations` steps.
  Eigen::VectorXd solve(Eigen::VectorXd u, const std::vector<int>& free, int iterations = 200) {
    if (free.empty()) return u;
    Eigen::VectorXd r = residuals(u, free);
    double cost = r.squaredNorm();
    double lambda = 1e-3;
    for (int iteration = 0; iteration < iterations; ++iteration) {
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
          const double reduced_chi_square = cost / static_cast<double>(r.size());
          if (gain < kObjectiveTolerance * std::max(1.0, reduced_chi_square)) return u;
          break;
        }
        lambda *= 4.0;
      }
      if (!improved || step_norm < 1e-9) break;
    }
    return u;
  }

  /// The posterior covariance (fitting scale) of the free parameters at u, whose
  /// residuals are `r`.
  Eigen::MatrixXd covariance(const Eigen::VectorXd& u, const std::vector<int>& free, const Eigen::VectorXd& r) {
    const Eigen::MatrixXd J = jacobian(u, free, r);
    // The prior rows of J are diag(1/width): J^T J already holds the prior precision.
    return (J.transpose() * J).inverse();
  }

 private:
  // Configuration c as its first run states it (and names it in a message).
  IterationResult predict_config(std::size_t c, const RunsModel& m) {
    const MeasuredRun& run = runs_[first_run_[c]];
    return evaluate(c, apply_overrides(m.profile, run.config.cluster), m.forward_scale, m.backward_scale);
  }

  // Every configuration at u into predicted_, on up to threads_ threads, each taking the
  // next configuration not yet taken (their costs differ: a ring settles slowly); the
  // first failing configuration's error, in configuration order.
  void predict_configs_at(const Eigen::VectorXd& u) {
    const std::size_t configs = first_run_.size();
    if (threads_ <= 1 || configs <= 1) {
      for (std::size_t c = 0; c < configs; ++c) predicted_[c] = predict_config_at(c, u);
    } else {
      for_each_on_threads(
          configs, threads_, [&](std::size_t c) { predicted_[c] = predict_config_at(c, u); }, [](std::size_t) {});
    }
    if (budget_ != nullptr) budget_->charge(last_evaluation_cost_s(), sharing_, refit_);
  }

  // predict_config at apply_parameters(base_, specs_, u), without copying a profile per
  // configuration: each configuration keeps the base profile with its run's overrides,
  // and only the parameters move in it (those an override fixes keep the override, as
  // apply_overrides would put it back on top). The same values as predict_config.
  IterationResult predict_config_at(std::size_t c, const Eigen::VectorXd& u) {
    const ClusterOverrides& overrides = runs_[first_run_[c]].config.cluster;
    RunsModel& m = at_parameters_[c];
    for (std::size_t j = 0; j < specs_.size(); ++j) {
      if (fixed_by(specs_[j].parameter, overrides)) continue;
      set_run_parameter(specs_[j].parameter, specs_[j].natural(u[static_cast<Eigen::Index>(j)]), m);
    }
    return evaluate(c, m.profile, m.forward_scale, m.backward_scale);
  }

  IterationResult evaluate(std::size_t c, const ClusterProfile& cluster, double forward_scale, double backward_scale) {
    const MeasuredRun& run = runs_[first_run_[c]];
    Evaluator& e = evaluators_[c];
    e.set_compute_scales(forward_scale, backward_scale);
    SchemeOutcome o;
    try {
      o = e.evaluate_on(cluster, run.config.scheme);
    } catch (const std::invalid_argument& error) {
      throw InputError(run.file, run.pointer, error.what());
    } catch (const InputError& error) {
      // A dtype the profile has no peak for is the run's own "dtype" where it names one.
      if (error.input() == "dtype" && run.config.cluster.dtype) {
        throw InputError(run.file, run.pointer + "/dtype", error.reason());
      }
      throw;
    }
    if (!o.available) throw InputError(run.file, run.pointer, o.unavailable_reason);
    cost_s_[c] = prediction_cost_s(o);
    return o.iteration;
  }

  const Setup& base_;
  std::span<const MeasuredRun> runs_;
  std::vector<Spec> specs_;
  std::vector<std::size_t> config_of_;  // per run: its configuration
  std::vector<std::size_t> first_run_;  // per configuration: the first run of it
  std::vector<Evaluator> evaluators_;   // per configuration
  std::vector<RunsModel> at_parameters_;  // per configuration, for predict_config_at
  std::vector<IterationResult> predicted_;  // per configuration, within residuals()
  std::vector<double> cost_s_;              // per configuration: its last prediction's cost
  std::size_t threads_ = 1;
  FitBudget* budget_ = nullptr;
  std::size_t sharing_ = 1;
  bool refit_ = false;
  bool scanned_ = false;
};

bool is_distributed(const Setup& base, const MeasuredRun& run) {
  const int nodes = run.config.cluster.nodes.value_or(base.cluster.nodes);
  const int per_node = run.config.cluster.gpus_per_node.value_or(base.cluster.gpus_per_node);
  return nodes * per_node > 1;
}

std::vector<Spec> applicable_specs(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options) {
  bool measured_compute = true;
  bool breakdown = false, multi_node = false, free_efficiency = false, multi_gpu_node = false,
       distributed = false;
  for (const MeasuredRun& run : runs) {
    const RunConfig& c = run.config;
    breakdown = breakdown || (run.measured.forward_s && run.measured.backward_s);
    ComputeRequest request;
    request.source = c.workload.compute_source;
    request.single_gpu_iteration_s = c.workload.single_gpu_iteration_s;
    const ModelSpec& model = c.model ? *c.model : *base.model;
    measured_compute = measured_compute && resolve_compute_source(model, request) != ComputeSource::flops;
    const int nodes = c.cluster.nodes.value_or(base.cluster.nodes);
    const int per_node = c.cluster.gpus_per_node.value_or(base.cluster.gpus_per_node);
    multi_node = multi_node || nodes > 1;
    free_efficiency = free_efficiency || (nodes > 1 && !c.cluster.transport_efficiency);
    multi_gpu_node = multi_gpu_node || (per_node > 1 && !c.cluster.intra_efficiency);
    distributed = distributed || is_distributed(base, run);
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
  const double compute_width = measured_compute ? std::log(1.1) : kFlopsComputePriorSdLn;
  if (breakdown) {
    add(spec(RunParameter::forward_scale, 0.0, compute_width));
    add(spec(RunParameter::backward_scale, 0.0, compute_width));
  } else {
    add(spec(RunParameter::compute_scale, 0.0, compute_width));
  }
  // Links: transport efficiencies of real stacks span 0.09-0.9 ([NET]): a factor of 3.
  // A host-driven transport's wire efficiency is well known (headers: ~5 %); its CPU
  // ceiling is what varies between stacks and machines.
  const bool host = p.inter.host_gbps > 0.0;
  if (multi_node && free_efficiency) {
    add(spec(RunParameter::inter_efficiency, std::log(p.inter.transport_efficiency),
             host ? std::log(1.25) : kInterEfficiencyPriorSdLn));
  }
  if (multi_node && host) {
    add(spec(RunParameter::inter_host, std::log(p.inter.host_gbps), std::log(3.0)));
  }
  if (multi_node) {
    add(spec(RunParameter::inter_latency, std::log(std::max(p.inter.latency_s, 1e-7)), ln10));
  }
  if (multi_gpu_node) {
    add(spec(RunParameter::intra_efficiency, std::log(p.intra.efficiency), std::log(2.0)));
  }
  if (distributed) {
    // Contention: [NET] measured compute up to ~15 % slower beside communication.
    add(spec(RunParameter::kappa_compute, p.compute.interference_factor - 1.0, 0.15));
    add(spec(RunParameter::kappa_comm, p.compute.comm_interference_factor - 1.0, 0.3));
    // Host work per collective launched, in us: prior the profile's (0 on a datasheet
    // profile), width 50 us: a CUDA kernel launch is ~5 us, a framework's hook and the
    // library's enqueue tens of us; searched up to 10 ms.
    add(spec(RunParameter::launch_overhead, p.transport.launch_s / units::us, 50.0));
    // Host work per gradient tensor that nothing hides, in us: prior the profile's, width
    // 100 us: an autograd hook and a collective's enqueue are ~10 us; Horovod negotiates
    // every tensor between its ranks through a coordinator (Sergeev and Del Balso 2018,
    // arXiv 1802.05799: the overhead that tensor fusion was made to amortise); searched up
    // to 10 ms.
    add(spec(RunParameter::tensor_overhead, p.transport.tensor_s / units::us, 100.0));
    // Host work per byte handed to collectives that nothing hides, in ns/B: prior the
    // profile's, width 0.1 ns/B (a staging copy through host memory at ~10 GB/s);
    // searched up to 10 ns/B.
    add(spec(RunParameter::host_per_byte, p.transport.host_s_per_byte * 1e9, 0.1));
  }
  if (multi_node) {
    // And more per byte handed when the ranks span nodes, in ns/B: width 0.3 ns/B ([NET]'s
    // TCP stacks moved 9-31 % of 100 Gbit/s: 0.3-0.9 ns/B of host time per byte); searched
    // up to 10 ns/B.
    add(spec(RunParameter::inter_host_per_byte, p.transport.inter_host_s_per_byte * 1e9, 0.3));
  }
  return specs;
}

struct FitCore {
  std::vector<FittedParameter> parameters;
  RunsModel model;
  std::vector<FitNote> notes;
  // For the bands: the specs, the solution and the joint posterior covariance.
  std::vector<Spec> specs;
  Eigen::VectorXd u;
  Eigen::MatrixXd covariance;
  double objective = 0.0;  // at u: squared residuals in standard errors, priors included
};

std::size_t cores_for(const RunsFitOptions& options) {
  return options.threads > 0 ? static_cast<std::size_t>(options.threads)
                             : std::max(1u, std::thread::hardware_concurrency());
}

// The posterior mode over every parameter at once, searched from the priors (which keep
// the parameters the runs say nothing about where they were); finish_core takes the
// posterior covariance there (Laplace): a parameter is identified when the runs narrow it
// to less than half its prior width.
Eigen::VectorXd search_mode(Problem& problem, const std::vector<int>& all) {
  const std::vector<Spec>& specs = problem.specs();
  const auto n = static_cast<Eigen::Index>(specs.size());
  Eigen::VectorXd prior(n);
  for (Eigen::Index j = 0; j < n; ++j) prior[j] = specs[static_cast<std::size_t>(j)].prior_u;
  // Holding the others at their prior and fitting again would drop a parameter the runs
  // do pin, only jointly with another (a large marginal error from a correlation), and
  // leave the runs unexplained; the covariance keeps the pair's correlation instead.
  //
  // The objective has flat directions and kinks (max() in the timelines), so the mode is
  // sought from several starts and the best kept: the coarse scan of every parameter;
  // the parameters that first solve identifies, solved alone from the scan (the others
  // at their prior), then all of them from there; and the compute term alone first
  // (what a single measurement anchors), then all of them.
  const auto cost = [&](const Eigen::VectorXd& v) { return problem.residuals(v, all).squaredNorm(); };
  const Eigen::VectorXd joint = problem.solve(problem.scan(prior, all), all);
  Eigen::VectorXd u = joint;
  const auto consider = [&](const std::vector<int>& first) {
    if (first.empty() || first.size() == all.size()) return;
    const Eigen::VectorXd v = problem.solve(problem.solve(problem.scan(prior, first), first), all);
    if (cost(v) < cost(u)) u = v;
  };
  {
    const Eigen::MatrixXd c = problem.covariance(joint, all, problem.residuals(joint, all));
    std::vector<int> narrowed;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (std::sqrt(std::max(0.0, c(j, j))) <= kIdentifiedRatio * specs[static_cast<std::size_t>(j)].width_u) {
        narrowed.push_back(static_cast<int>(j));
      }
    }
    consider(narrowed);
  }
  // The compute term alone first: the compute scale, or the forward and backward scales.
  consider(specs.size() > 1 && specs[0].parameter == RunParameter::forward_scale ? std::vector<int>{0, 1}
                                                                                : std::vector<int>{0});
  return u;
}

// The fitted model at the mode `u`: the posterior covariance there (Laplace), each
// parameter's value, error and whether the runs identify it.
FitCore finish_core(Problem& problem, const Setup& base, const Eigen::VectorXd& u, const std::vector<int>& all) {
  const std::vector<Spec>& specs = problem.specs();
  const auto n = static_cast<Eigen::Index>(specs.size());
  const Eigen::VectorXd r = problem.residuals(u, all);
  Eigen::MatrixXd posterior = problem.covariance(u, all, r);
  // A singular information matrix (a parameter with no effect at all and no prior pull is
  // impossible, but round-off is not): such a parameter keeps its prior width, uncorrelated.
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!std::isfinite(posterior(j, j)) || posterior(j, j) < 0.0) {
      const double w = specs[static_cast<std::size_t>(j)].width_u;
      posterior.row(j).setZero();
      posterior.col(j).setZero();
      posterior(j, j) = w * w;
    }
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index k = 0; k < n; ++k) {
      if (!std::isfinite(posterior(j, k))) posterior(j, k) = 0.0;
    }
  }

  FitCore out;
  out.objective = r.squaredNorm();
  out.model = apply_parameters(base, specs, u);
  out.specs = specs;
  out.u = u;
  out.covariance = posterior;
  for (Eigen::Index j = 0; j < n; ++j) {
    const Spec& s = specs[static_cast<std::size_t>(j)];
    const double e = std::sqrt(std::max(0.0, posterior(j, j)));
    FittedParameter f;
    f.parameter = s.parameter;
    f.prior = s.natural(s.prior_u);
    f.value = s.natural(u[j]);
    f.identified = e <= kIdentifiedRatio * s.width_u;
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

// ---- Beyond the local interval: flat sides and second valleys ----------------------
//
// finish_core's interval is local: the objective's curvature at the mode (Laplace). It
// misses what lies further along a parameter, and the objective is not smooth there. A
// max() in the timelines leaves a flat shoulder: past the point where communication hides
// behind compute, a per-byte cost can fall to nothing and the runs do not notice, while
// the curvature at the mode sees only the steep side. Where a parameter moves the tuner's
// choice between ring and tree for one bucket size (network.cpp, nccl_prefers_tree, which
// prices both with the profile's latencies), the predicted time jumps, and a hop latency
// can explain a few runs almost as well at hundreds of us as at tens, with ridges between.
// Either way the local interval calls the parameter pinned more tightly than the runs do.
//
// The profile of each pinned parameter looks further: the parameter held at points
// walking out from the mode in each direction, the others re-solved at each (from the
// neighbour's solution and from the mode's, the better kept), the objective there compared
// with the mode's. The walk steps
// by the local standard error (at most kProfileSteps steps a side, wider steps where the
// range needs more) and stops at the search box, or where the parameter's prior term alone
// exceeds the mode's whole objective by more than the set's threshold (no value beyond can
// belong to it).
//
// The set the profile keeps is the two-standard-error set: the points whose objective is
// within 4 of the mode's (times the reduced chi-square where the runs scatter more than
// assumed, as solve's tolerance), its edge placed by linear interpolation toward the first
// point beyond. Two standard errors because a valley the local interval misses matters
// when it is within the reach of a P10-P90 band or a 2-sigma check, and the 1-SE set of a
// jagged profile has an edge set by single ridges; half of each side's reach is that
// side's standard error, which for a quadratic valley is the local standard error again.
// Where that reaches beyond the local one, the reported interval takes it, the parameter's
// standard deviation in the covariance becomes the larger side's (its correlations kept),
// so the bands reach as far, and the parameter stays pinned only within half its prior
// width, as before. A profile point below the mode is a valley the search missed: the fit
// restarts there.

// Profile steps a side at most (the step widens where the range needs more).
constexpr int kProfileSteps = 24;
// Levenberg-Marquardt steps per profile point: each starts from its neighbour's solution,
// about a standard error away, so a few settle the others (a full solve allows 200).
constexpr int kProfileIterations = 10;
// Restarts from a profile point below the mode before the fit keeps what it has.
constexpr int kProfileRestarts = 2;
// The profile's set: within this rise of the objective, two standard errors squared.
constexpr double kProfileRise = 4.0;
struct ProfileOutcome {
  std::optional<Eigen::VectorXd> lower;  // a point below the mode: restart there
};

// The profile of every pinned parameter of `core` (see above); widens `core` in place.
ProfileOutcome profile_pinned(Problem& problem, FitCore& core, const std::vector<int>& all, const FitBudget& budget,
                              double budget_s) {
  const std::vector<Spec>& specs = problem.specs();
  const double c0 = core.objective;
  const double rows = static_cast<double>(problem.data_rows() + all.size());
  const double rise = kProfileRise * std::max(1.0, c0 / rows);
  // A profile point at most: two solves of every step's Jacobian and trial, and the two
  // objectives; one is taken only while the search and the profiles so far leave room for
  // it in budget_s, so the profiles stop within one point of it.
  const auto point_s = [&] {
    return problem.last_evaluation_cost_s() * (2.0 * kProfileIterations * static_cast<double>(all.size() + 1) + 2.0);
  };
  const auto affordable = [&] { return budget.search_one_thread_s() + point_s() <= budget_s; };
  int not_scanned = 0;
  for (const int j : all) {
    FittedParameter& f = core.parameters[static_cast<std::size_t>(j)];
    if (!f.identified) continue;
    if (!affordable()) {
      ++not_scanned;
      continue;
    }
    const Spec& s = specs[static_cast<std::size_t>(j)];
    const double mode_u = core.u[j];
    const double e = std::sqrt(std::max(0.0, core.covariance(j, j)));
    if (!(e > 0.0)) continue;
    // Where the prior term alone, ((u - prior) / width)^2, passes c0 + rise.
    const double prior_reach = s.width_u * std::sqrt(c0 + rise);
    std::vector<int> others;
    for (const int k : all) {
      if (k != j) others.push_back(k);
    }
    double reach[2] = {e, e};  // below, above: the 2-SE set's distance from the mode
    bool cut_short = false;    // the time ran out on the way: what was seen is kept
    for (const int side : {0, 1}) {
      const double direction = side == 0 ? -1.0 : 1.0;
      const double end = side == 0 ? std::max(s.low_u, s.prior_u - prior_reach)
                                   : std::min(s.high_u, s.prior_u + prior_reach);
      const double span = (end - mode_u) * direction;
      if (span <= 2.0 * e) continue;  // nothing beyond the local set
      const double step = std::max(e, span / kProfileSteps);
      Eigen::VectorXd v = core.u;
      double inside = 0.0, inside_rise = 0.0;  // the farthest point in the set so far
      for (double d = step; d <= span + 1e-12; d += step) {
        if (!affordable()) {
          cut_short = true;
          break;
        }
        // Two starts: the neighbour's solution, and the mode's (the walk can lose the way
        // across a ridge); the better is kept and walked on from.
        v[j] = mode_u + direction * d;
        Eigen::VectorXd w = core.u;
        w[j] = v[j];
        v = problem.solve(v, others, kProfileIterations);
        w = problem.solve(w, others, kProfileIterations);
        double c = problem.residuals(v, all).squaredNorm();
        const double cw = problem.residuals(w, all).squaredNorm();
        if (cw < c || !std::isfinite(c)) {
          v = w;
          c = cw;
        }
        if (!std::isfinite(c)) continue;
        if (c < c0 - kObjectiveTolerance * rise) return {v};
        const double up = c - c0;
        if (up <= rise) {
          inside = d;
          inside_rise = std::max(0.0, up);
        } else if (d - step <= inside + 1e-12) {
          // The set's edge between the last point in it and this one.
          reach[side] = std::max(reach[side], inside + step * (rise - inside_rise) / (up - inside_rise));
        }
      }
      reach[side] = std::max(reach[side], inside);
    }
    if (cut_short) ++not_scanned;
    const double below = 0.5 * reach[0], above = 0.5 * reach[1];
    const double sd = std::max(below, above);
    if (sd <= e * (1.0 + 1e-9)) continue;
    core.covariance.row(j) *= sd / e;
    core.covariance.col(j) *= sd / e;
    f.low = s.natural(std::max(s.low_u, mode_u - std::max(below, e)));
    f.high = s.natural(std::min(s.high_u, mode_u + std::max(above, e)));
    f.identified = sd <= kIdentifiedRatio * s.width_u;
    core.notes.push_back({.kind = FitNote::Kind::wider_than_local,
                          .parameter = std::string(name_of(s.parameter)),
                          .value = f.value,
                          .other_value = s.natural(mode_u + (below >= above ? -reach[0] : reach[1]))});
  }
  if (not_scanned > 0) core.notes.push_back({.kind = FitNote::Kind::profile_not_scanned, .points = not_scanned});
  return {};
}

bool same_parameters(const std::vector<Spec>& a, const std::vector<Spec>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Spec& x, const Spec& y) { return x.parameter == y.parameter; });
}

// The fit proper: all applicable parameters with their priors. With `near`, a fit of a
// superset of these runs with the same parameters (a held-out fold's refit), the search
// starts from its mode instead of searching from the priors: the mode that leaving some
// runs out moves, which is what a held-out error asks, and a handful of steps instead of
// the whole multi-start search.
FitCore fit_core(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options,
                 FitBudget& budget, const FitCore* near = nullptr, std::size_t refits_beside = 0) {
  const std::size_t threads = cores_for(options);
  Problem problem(base, runs, applicable_specs(base, runs, options), threads, &budget,
                  near != nullptr ? refits_beside : threads, near != nullptr);
  std::vector<int> all(problem.specs().size());
  std::iota(all.begin(), all.end(), 0);
  if (near != nullptr && same_parameters(near->specs, problem.specs())) {
    return finish_core(problem, base, problem.solve(near->u, all), all);
  }
  FitCore core = finish_core(problem, base, search_mode(problem, all), all);
  if (near != nullptr) return core;  // a refit: its intervals are not reported
  for (int restart = 0; restart <= kProfileRestarts; ++restart) {
    const ProfileOutcome profile = profile_pinned(problem, core, all, budget, options.profile_limit_s);
    if (!profile.lower || restart == kProfileRestarts) break;
    core = finish_core(problem, base, problem.solve(*profile.lower, all), all);
  }
  return core;
}

}  // namespace

IterationResult predict_run(const Setup& base, const RunsModel& model, const MeasuredRun& run) {
  Problem problem(base, std::span<const MeasuredRun>(&run, 1), {});
  return problem.predict(0, model);
}

RunsFit fit_runs(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options) {
  if (runs.empty()) throw std::invalid_argument("no measured runs to fit");
  FitBudget budget(runs.front().file, options.limit_s);
  FitCore core = fit_core(base, runs, options, budget);
  RunsFit out;
  out.parameters = core.parameters;
  out.fitted = core.model;
  out.notes = core.notes;
  out.objective = core.objective;
  const auto n = core.u.size();
  for (Eigen::Index j = 0; j < n; ++j) {
    const Spec& s = core.specs[static_cast<std::size_t>(j)];
    out.uncertainty.push_back({name_of(s.parameter), s.log, s.unit, core.u[j], s.low_u, s.high_u});
    for (Eigen::Index k = 0; k < n; ++k) out.covariance.push_back(core.covariance(j, k));
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index k = j + 1; k < n; ++k) {
      const auto& a = out.parameters[static_cast<std::size_t>(j)];
      const auto& b = out.parameters[static_cast<std::size_t>(k)];
      if (!a.identified || !b.identified) continue;
      const double r = core.covariance(j, k) / std::sqrt(core.covariance(j, j) * core.covariance(k, k));
      if (std::abs(r) >= kReportedCorrelation) out.correlations.push_back({a.parameter, b.parameter, r});
    }
  }

  Problem problem(base, runs, {});
  Eigen::VectorXd prior(n);
  for (Eigen::Index j = 0; j < n; ++j) prior[j] = core.specs[static_cast<std::size_t>(j)].prior_u;
  const RunsModel as_given = apply_parameters(base, core.specs, prior);
  std::vector<double> abs_errors, prior_abs_errors;
  double sum_sq = 0.0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunResidual r;
    r.label = runs[i].label;
    r.measured_s = runs[i].measured.iteration_s;
    r.predicted = problem.predict(i, out.fitted);
    r.predicted_s = r.predicted.iteration_s;
    r.error = r.predicted_s / r.measured_s - 1.0;
    r.prior_error = problem.predict(i, as_given).iteration_s / r.measured_s - 1.0;
    prior_abs_errors.push_back(std::abs(r.prior_error));
    sum_sq += std::pow(std::log(r.predicted_s / r.measured_s), 2);
    abs_errors.push_back(std::abs(r.error));
    out.runs.push_back(r);
  }
  out.rms_error = std::sqrt(sum_sq / static_cast<double>(runs.size()));
  // The model's own residual: what the fitted parameters leave unexplained in the runs,
  // never below the model's error floor.
  out.model_sigma = std::max(kModelError, out.rms_error);
  out.median_abs_error = median(abs_errors);
  out.max_abs_error = *std::max_element(abs_errors.begin(), abs_errors.end());
  out.prior_median_abs_error = median(prior_abs_errors);
  out.prior_max_abs_error = *std::max_element(prior_abs_errors.begin(), prior_abs_errors.end());
  for (const RunResidual& r : out.runs) {
    if (std::abs(r.error) > 0.10) {
      out.notes.push_back({.kind = FitNote::Kind::run_not_explained, .run_label = r.label, .error = r.error});
    }
  }

  if (options.leave_one_out && runs.size() >= 2) {
    const std::size_t folds = std::min<std::size_t>(runs.size(), kMaxHeldOutFits);
    out.held_out_folds = static_cast<int>(folds);
    // The folds' refits (most of the time) are independent: they run on `threads` cores,
    // each from its own copy of the runs, and their models are applied in fold order, so
    // the result does not depend on the number of threads.
    std::vector<std::optional<RunsModel>> without(folds);
    int refitted = 0;
    if (options.on_refit) options.on_refit(0, static_cast<int>(folds));
    const auto refit = [&](std::size_t fold) {
      std::vector<MeasuredRun> others;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        if (k % folds != fold) others.push_back(runs[k]);
      }
      RunsFitOptions inner = options;
      inner.leave_one_out = false;
      inner.on_refit = {};
      inner.threads = 1;  // the folds share the cores
      without[fold] = fit_core(base, others, inner, budget, &core, std::min(folds, cores_for(options))).model;
    };
    const auto reported = [&](std::size_t) {
      ++refitted;
      if (options.on_refit) options.on_refit(refitted, static_cast<int>(folds));
    };
    for_each_on_threads(folds, cores_for(options), refit, reported);  // the first failing fold's error
    std::vector<double> loo(runs.size());
    for (std::size_t fold = 0; fold < folds; ++fold) {
      for (std::size_t i = fold; i < runs.size(); i += folds) {
        const double predicted = problem.predict(i, *without[fold]).iteration_s;
        out.runs[i].leave_one_out = predicted / runs[i].measured.iteration_s - 1.0;
        loo[i] = std::abs(*out.runs[i].leave_one_out);
      }
    }
    out.loo_median_abs_error = median(loo);
    out.loo_max_abs_error = *std::max_element(loo.begin(), loo.end());
  }
  out.charged_search_s = budget.search_s();
  out.charged_refits_s = budget.refits_s();
  return out;
}

BandModels::BandModels(const ClusterProfile::RunsFit& fit, const RunsModel& base, const ClusterOverrides& overrides) {
  const std::size_t n = fit.parameters.size();
  if (fit.model_sigma <= 0.0 || n == 0 || fit.covariance.size() != n * n) return;
  if (!std::all_of(fit.covariance.begin(), fit.covariance.end(), [](double c) { return std::isfinite(c); })) return;
  n_ = n;
  covariance_ = fit.covariance;
  model_sigma_ = fit.model_sigma;
  for (const auto& x : fit.parameters) {
    names_.push_back(x.name);
    mean_u_.push_back(x.mean_u);
  }
  for (std::size_t j = 0; j < n_; ++j) {
    const auto& x = fit.parameters[j];
    const auto p = parse_name<RunParameter>(x.name);
    if (!p || fixed_by(*p, overrides)) continue;  // a what-if gave its value
    const double sd = std::sqrt(std::max(0.0, fit.covariance[j * n_ + j]));
    if (sd <= 0.0) continue;
    // Around the base's own value (the profile may have moved since the fit: an anchor's
    // compute scale on top, a calibration on top of a fitted profile), in the fit's scale.
    const double now = run_parameter(*p, base) / x.unit;
    if (x.log && !(now > 0.0)) continue;
    const double u0 = std::clamp(x.log ? std::log(now) : now, x.low_u, x.high_u);
    const double below = std::max(x.low_u, u0 - 0.1 * sd);
    const double above = std::min(x.high_u, u0 + 0.1 * sd);
    if (above <= below) continue;
    for (const double u : {below, above}) {
      RunsModel m = base;
      const double value = x.unit * (x.log ? std::exp(u) : u);
      if (*p == RunParameter::compute_scale) {
        m.forward_scale *= value / base.forward_scale;
        m.backward_scale *= value / base.forward_scale;
      } else {
        set_run_parameter(*p, value, m);
      }
      models_.push_back(std::move(m));
    }
    moved_.push_back(j);
    step_u_.push_back(above - below);
  }
}

std::vector<double> BandModels::gradient(std::span<const double> times_s) const {
  std::vector<double> g(n_, 0.0);
  for (std::size_t k = 0; k < moved_.size() && 2 * k + 1 < times_s.size(); ++k) {
    const double d = (std::log(times_s[2 * k + 1]) - std::log(times_s[2 * k])) / step_u_[k];
    if (std::isfinite(d)) g[moved_[k]] = d;
  }
  return g;
}

Band BandModels::band(double point_s, std::span<const double> times_s, double residual_scale) const {
  const std::vector<double> g = gradient(times_s);
  const double residual = residual_scale * model_sigma_;
  double variance = residual * residual;
  for (std::size_t a = 0; a < n_; ++a) {
    for (std::size_t b = 0; b < n_; ++b) {
      if (g[a] != 0.0 && g[b] != 0.0) variance += g[a] * covariance_[a * n_ + b] * g[b];
    }
  }
  const double sigma = std::sqrt(std::max(0.0, variance));
  double centre = 0.0;
  for (std::size_t a = 0; a < n_; ++a) centre += g[a] * mean_u_[a];
  return {point_s * std::exp(centre - kP90Sigmas * sigma), point_s * std::exp(centre + kP90Sigmas * sigma)};
}

std::string BandModels::widest(std::span<const double> times_s) const {
  const std::vector<double> g = gradient(times_s);
  std::string name;
  double most = 0.0;
  for (std::size_t j = 0; j < n_; ++j) {
    const double part = g[j] * g[j] * covariance_[j * n_ + j];
    if (part > most) {
      most = part;
      name = names_[j];
    }
  }
  return name;
}

void keep_uncertainty(const RunsFit& fit, ClusterProfile::RunsFit& kept) {
  kept.parameters = fit.uncertainty;
  kept.covariance = fit.covariance;
  kept.model_sigma = fit.model_sigma;
}

BandSource band_source(const ClusterProfile& profile, const std::string& model, bool anchored) {
  const auto& fit = profile.runs_fit;
  if (fit && fit->applies_to(model)) return fit->model_sigma > 0.0 ? BandSource::fitted : BandSource::none;
  return anchored ? BandSource::none : BandSource::datasheet;
}

std::vector<double> band_times(Evaluator& e, const BandModels& models, const Scheme& scheme) {
  const double forward = e.setup().workload.forward_scale;
  const double backward = e.setup().workload.backward_scale;
  const Variability variability = e.setup().variability;
  e.set_variability({});
  std::vector<double> times;
  for (const RunsModel& m : models.models()) {
    e.set_compute_scales(m.forward_scale, m.backward_scale);
    const SchemeOutcome o = e.evaluate_on(m.profile, scheme);
    times.push_back(o.available ? o.iteration.iteration_s : std::numeric_limits<double>::quiet_NaN());
  }
  e.set_compute_scales(forward, backward);
  e.set_variability(variability);
  return times;
}

double student_t90(int dof) {
  // t(0.90; dof) for dof = 1..30.
  static constexpr double kT90[] = {3.0777, 1.8856, 1.6377, 1.5332, 1.4759, 1.4398, 1.4149, 1.3968, 1.3830, 1.3722,
                                    1.3634, 1.3562, 1.3502, 1.3450, 1.3406, 1.3368, 1.3334, 1.3304, 1.3277, 1.3253,
                                    1.3232, 1.3212, 1.3195, 1.3178, 1.3163, 1.3150, 1.3137, 1.3125, 1.3114, 1.3104};
  if (dof < 1) throw std::invalid_argument("student_t90: fewer than one degree of freedom");
  return dof <= 30 ? kT90[dof - 1] : kP90Sigmas;
}

double ClusterSpread::predictive_sd() const {
  if (clusters < 2) return prior_sd_ln;
  return sd_ln * std::sqrt(1.0 + 1.0 / clusters) * student_t90(clusters - 1) / kP90Sigmas;
}

ClusterProfile::RunsFit datasheet_uncertainty(bool flops_compute) {
  ClusterProfile::RunsFit u;
  // u = 0 for each: BandModels moves each around the profile's own value, within the
  // ranges the fit searches (applicable_specs); mean_u places the band where the next
  // cluster's value lies on average.
  const ClusterProfile::RunsFit::Parameter compute{name_of(RunParameter::compute_scale), true, 1.0, 0.0,
                                                   std::log(1e-2), std::log(1e2), kDatasheetCompute.mean_ln};
  const ClusterProfile::RunsFit::Parameter efficiency{name_of(RunParameter::inter_efficiency), true, 1.0, 0.0,
                                                      std::log(1e-3), 0.0, kDatasheetInterEfficiency.mean_ln};
  const double compute_var = std::pow(kDatasheetCompute.predictive_sd(), 2);
  const double efficiency_var = std::pow(kDatasheetInterEfficiency.predictive_sd(), 2);
  if (flops_compute) {
    u.parameters = {compute, efficiency};
    u.covariance = {compute_var, 0.0, 0.0, efficiency_var};
  } else {
    u.parameters = {efficiency};
    u.covariance = {efficiency_var};
  }
  u.model_sigma = kModelError;
  return u;
}

PredictedRun predict_run_with_band(const Setup& base, const RunsFit& fit, const MeasuredRun& run) {
  ClusterProfile::RunsFit kept;
  keep_uncertainty(fit, kept);
  const double point = predict_run(base, fit.fitted, run).iteration_s;
  const BandModels models(kept, fit.fitted, run.config.cluster);
  std::vector<double> at;
  for (const RunsModel& m : models.models()) at.push_back(predict_run(base, m, run).iteration_s);
  const Band band = models.band(point, at);
  return {point, band.p10_s, band.p90_s};
}

}  // namespace dtperf
