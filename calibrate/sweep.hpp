#pragma once
// The measurement loop both backends share. For each point of a plan entry, every member
// rank runs the operation once on fresh data and checks the result, runs `warmup` untimed
// calls, then times `iterations` calls back to back (mean per call). After each point all
// ranks of the world take part in one small control exchange in which rank 0 says whether
// the next point still fits the budget, so every rank stops at the same point. At the end
// of an entry the per-rank times are reduced over the world: the reported time is the
// slowest rank's mean (as nccl-tests reports), with the fastest and slowest rank's means,
// and, where calls are timed one by one (host backend), the slowest rank's median. All
// ranks start each point's timed calls together (one small exchange after the warm-up).
#include <chrono>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "plan.hpp"

namespace dtperf::calibrate {

/// Collective agreement among all ranks of the world. Every rank calls `max_all` the same
/// number of times with vectors of the same length; afterwards each element holds the
/// maximum over all ranks on every rank.
class Control {
 public:
  virtual ~Control() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual void max_all(std::vector<double>& values) = 0;
};

/// What one rank does at each point of one entry (null for ranks that idle during it).
class PointOps {
 public:
  virtual ~PointOps() = default;
  /// Runs the operation once on freshly initialised data; true when the result is right.
  virtual bool run_checked(std::size_t point) = 0;
  /// Runs `calls` calls and waits for them (warm-up).
  virtual void run(std::size_t point, int calls) = 0;
  /// Runs `calls` calls back to back; returns the mean seconds per call.
  virtual double time_s(std::size_t point, int calls) = 0;
  /// The median seconds per call of the last `time_s`, where calls are timed one by one
  /// (robust to the occasional stall of a busy host); negative where they are not.
  virtual double last_median_s() const { return -1.0; }
};

/// The time left, as rank 0 sees it (only rank 0's decisions count).
class Budget {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Budget(double budget_s, Clock::time_point start = Clock::now()) : budget_s_(budget_s), start_(start) {}
  double budget_s() const { return budget_s_; }
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double remaining_s() const { return budget_s_ - elapsed_s(); }
  /// The share of the remaining time an entry may use: remaining * entry / (entry + later).
  double allowance_s(double entry_nominal_s, double later_nominal_s) const;
  bool truncated = false;  // set when a planned point was not measured for lack of time

 private:
  double budget_s_;
  Clock::time_point start_;
};

/// One point after the world reduction (valid on every rank).
struct PointResult {
  bool measured = false;
  double time_s = 0.0;      // slowest rank's mean
  double time_min_s = 0.0;  // fastest member rank's mean
  double time_max_s = 0.0;  // = time_s
  double time_median_s = -1.0;  // slowest rank's median per-call time; negative: not timed per call
  bool correct = false;     // every member's check passed
};

struct SweepCounts {
  int warmup = 5;
  int iterations = 20;
};

/// Runs every point of `entry` that fits `allowance_s` (rank 0's value counts) and returns
/// one result per planned point. `ops` is null on ranks outside the entry's communicators.
/// Sets `budget.truncated` on rank 0 when points were left out.
std::vector<PointResult> run_sweep(Control& control, PointOps* ops, const PlanEntry& entry,
                                   const SweepCounts& counts, double allowance_s, Budget& budget);

/// Rank 0's estimate of how long `point` takes, given the measured mean call time of an
/// earlier point `known` (time scales with the work, never below the known time).
double estimate_point_s(const PlanEntry& entry, std::size_t point, std::size_t known, double known_call_s,
                        const SweepCounts& counts);

/// Gathers one value per rank (index = rank) on every rank; values must be >= 0.
std::vector<double> gather_nonnegative(Control& control, double value);

}  // namespace dtperf::calibrate
