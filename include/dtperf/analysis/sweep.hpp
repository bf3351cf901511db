#pragma once
// Sweeps for capacity planning: the Cartesian product of what-if axes (models, schemes,
// nodes, GPUs per node, NIC rate, inter-node latency, batch, compression, compute CV)
// over one base setup, evaluated point by point.
//
// Point i of a grid is fixed by the axes alone (mixed-radix: the last axis, compute CV,
// varies fastest; the first, model, slowest), and its row depends on nothing but i, so
// any number of threads gives the same rows; run_sweep hands them to the caller in index
// order, a block at a time, so memory stays constant however large the grid.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/analysis/fit_runs.hpp"

namespace dtperf {

/// The values each axis takes. An empty axis keeps the base setup's value (one point).
struct SweepAxes {
  std::vector<const ModelSpec*> models;  // not owned; empty: the base setup's model
  std::vector<Scheme> schemes;           // empty: All-Reduce
  std::vector<int> nodes;
  std::vector<int> gpus_per_node;
  std::vector<double> nic_gbps;
  std::vector<double> inter_latency_us;
  std::vector<double> batch_per_gpu;
  std::vector<double> compression_ratio;
  std::vector<double> compute_cv;  // the law is the base variability's (normal if it has none)
};

/// One point of a grid: the value of every axis there.
struct SweepPoint {
  std::uint64_t index = 0;
  const ModelSpec* model = nullptr;
  const Scheme* scheme = nullptr;
  int nodes = 0;
  int gpus_per_node = 0;
  double nic_gbps = 0.0;
  double inter_latency_us = 0.0;
  double batch_per_gpu = 0.0;  // as evaluated (a global batch split over the point's GPUs)
  double compression_ratio = 1.0;
  double compute_cv = 0.0;
};

/// A point and what the engine predicts there.
struct SweepRow {
  SweepPoint point;
  bool available = true;
  std::string unavailable_reason;  // the topology does not fit the point's cluster
  IterationResult iteration;
  double memory_bytes = 0.0;       // per GPU (memory.hpp)
  bool has_quantiles = false;      // with variable compute
  double iteration_p50_s = 0.0;
  double iteration_p99_s = 0.0;
  // From a profile fitted to runs of the point's model: the iteration's P10-P90 band
  // (fit_runs.hpp; a what-if of the base or an axis fixes the parameter it sets).
  std::optional<Band> band;
};

/// The most points a grid may have.
inline constexpr std::uint64_t kMaxSweepPoints = 1'000'000'000;

class SweepGrid {
 public:
  /// Checks the axes against the base (InputError naming the axis, as input "vary"):
  /// every value in range, clusters within the limits, slow ranks and nodes present in
  /// every cluster of the grid, no batch axis beside a global batch, no CV axis beside
  /// measured iteration times, at most kMaxSweepPoints points.
  SweepGrid(Setup base, SweepAxes axes, ClusterOverrides what_ifs = {});

  std::uint64_t size() const { return size_; }
  SweepPoint point(std::uint64_t index) const;
  const Setup& base() const { return base_; }
  const SweepAxes& axes() const { return axes_; }
  /// The base's what-ifs, and the axes that set a fitted parameter (latency).
  const ClusterOverrides& fixed() const { return fixed_; }
  /// Where the bands of `model`'s points come from: the base profile's fit where it
  /// applies to the model, else the datasheet's; and that uncertainty.
  BandSource band_source(const ModelSpec& model) const;
  std::optional<ClusterProfile::RunsFit> band_uncertainty(const ModelSpec& model) const;
  /// Whether any point gets a band.
  bool banded() const;

 private:
  Setup base_;
  SweepAxes axes_;
  ClusterOverrides fixed_;
  std::vector<Scheme> schemes_;  // the axis, or All-Reduce
  std::uint64_t size_ = 0;
};

/// Evaluates points of one grid; one per thread (it caches schedules and predictors).
class SweepEvaluator {
 public:
  explicit SweepEvaluator(const SweepGrid& grid);
  ~SweepEvaluator();
  SweepEvaluator(const SweepEvaluator&) = delete;
  SweepEvaluator& operator=(const SweepEvaluator&) = delete;

  void evaluate(std::uint64_t index, SweepRow& row);

 private:
  struct State;
  const SweepGrid& grid_;
  std::unique_ptr<State> state_;
};

/// Renders a block of rows as text on the worker thread that evaluated them (so that
/// formatting runs on every core too); may be empty.
using SweepRender = std::function<void(std::span<const SweepRow> rows, std::string& text)>;
/// Receives each block, in index order, with its rendered text (on the caller's thread).
using SweepSink = std::function<void(std::span<const SweepRow> rows, const std::string& text)>;
/// Points done so far, of the grid's size (called from the caller's thread).
using SweepProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct SweepRun {
  int threads = 1;                    // >= 1
  std::uint64_t block_points = 4096;  // the most rows per thread and round
  // Work is shared by cost, not count: a round is 4 chunks per thread, which the threads
  // take as each comes free, and a chunk is what one thread evaluates in a quarter of this
  // at the previous round's cost per point (the first round: one point per chunk), and at
  // most twice the previous round's chunk. A few costly points still spread over every
  // thread, and progress arrives about this often, or after each costly point.
  double round_seconds = 0.25;
  // A deterministic 1/shards of the grid: the points whose index is `shard` modulo
  // `shards` (interleaved, so every shard gets the same mix of cheap and costly points).
  std::uint64_t shard = 0;
  std::uint64_t shards = 1;
  SweepRender render;
  SweepSink sink;
  SweepProgress progress;  // points of this shard
};

/// The points of shard `shard` of `shards` in a grid of `total`.
std::uint64_t shard_size(std::uint64_t total, std::uint64_t shard, std::uint64_t shards);

/// Evaluates the grid (or the run's shard of it): each round, the threads evaluate (and
/// render) the round's chunks; the caller's thread then gives them to the sink in order.
/// Memory: threads x block_points rows and their text. The compute model's refusals
/// (std::invalid_argument) and InputErrors propagate to the caller: the first failing
/// point's, whatever the thread count.
void run_sweep(const SweepGrid& grid, const SweepRun& run);

}  // namespace dtperf
