#include "dtperf/analysis/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <thread>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/error.hpp"
#include "dtperf/limits.hpp"

namespace dtperf {

namespace {

// The axes in index order (first: slowest), with their sizes (an empty axis counts 1).
std::vector<std::uint64_t> radices(const SweepAxes& a, std::size_t schemes) {
  const auto n = [](std::size_t size) { return static_cast<std::uint64_t>(std::max<std::size_t>(size, 1)); };
  return {n(a.models.size()),        n(schemes),
          n(a.nodes.size()),         n(a.gpus_per_node.size()),
          n(a.nic_gbps.size()),      n(a.inter_latency_us.size()),
          n(a.batch_per_gpu.size()), n(a.compression_ratio.size()),
          n(a.compute_cv.size())};
}

template <typename T>
void check_values(const std::vector<T>& values, const char* axis, const limits::Range& range) {
  for (const T v : values) {
    const double x = static_cast<double>(v);
    if (!range.contains(x)) {
      throw InputError::in_input("vary", fmt::format("{}={} is outside {}{}, {}]", axis, x, range.low_open ? "(" : "[",
                                                     range.low, range.high));
    }
  }
}

template <typename T>
std::vector<T> or_base(const std::vector<T>& axis, T base) {
  return axis.empty() ? std::vector<T>{base} : axis;
}

}  // namespace

SweepGrid::SweepGrid(Setup base, SweepAxes axes, ClusterOverrides what_ifs)
    : base_(std::move(base)), axes_(std::move(axes)), fixed_(std::move(what_ifs)) {
  if (!axes_.inter_latency_us.empty()) fixed_.inter_latency_s = 0.0;  // the axis sets it
  schemes_ = axes_.schemes.empty() ? std::vector<Scheme>{Scheme::allreduce()} : axes_.schemes;
  if (base_.model == nullptr && axes_.models.empty()) throw InputError::in_input("model", "no model to sweep");
  check_values(axes_.nodes, "nodes", {1.0, static_cast<double>(limits::kMaxNodes)});
  check_values(axes_.gpus_per_node, "gpus-per-node", {1.0, static_cast<double>(limits::kMaxGpusPerNode)});
  check_values(axes_.nic_gbps, "nic-gbps", limits::kNicGbps);
  check_values(axes_.inter_latency_us, "inter-latency-us", limits::kLatencyUs);
  check_values(axes_.batch_per_gpu, "batch-per-gpu", limits::kSamples);
  check_values(axes_.compression_ratio, "compression", limits::kCompression);
  check_values(axes_.compute_cv, "compute-cv", limits::kComputeCv);
  if (!axes_.batch_per_gpu.empty() && base_.workload.global_batch) {
    throw InputError::in_input("vary", "a batch-per-gpu axis and --global-batch both set the batch; give one");
  }
  if (!axes_.compute_cv.empty() && base_.variability.law == NoiseLaw::empirical) {
    throw InputError::in_input("vary", "a compute-cv axis and measured iteration times both set the compute noise; give one");
  }

  const std::vector<int> nodes = or_base(axes_.nodes, base_.cluster.nodes);
  const std::vector<int> per_node = or_base(axes_.gpus_per_node, base_.cluster.gpus_per_node);
  const int fewest_nodes = *std::min_element(nodes.begin(), nodes.end());
  const int fewest_per_node = *std::min_element(per_node.begin(), per_node.end());
  const std::int64_t most_gpus = static_cast<std::int64_t>(*std::max_element(nodes.begin(), nodes.end())) *
                                 *std::max_element(per_node.begin(), per_node.end());
  if (most_gpus > limits::kMaxGpus) {
    throw InputError::in_input("vary", fmt::format("the grid reaches {} GPUs; at most {} are modelled", most_gpus,
                                                   limits::kMaxGpus));
  }
  for (const auto& [rank, factor] : base_.variability.slow_ranks) {
    if (rank >= static_cast<std::int64_t>(fewest_nodes) * fewest_per_node) {
      throw InputError::in_input("vary", fmt::format("slow rank {} is not in the grid's smallest cluster ({} x {} GPUs)",
                                                     rank, fewest_nodes, fewest_per_node));
    }
  }
  for (const auto& [node, factor] : base_.variability.slow_nodes) {
    if (node >= fewest_nodes) {
      throw InputError::in_input("vary", fmt::format("slow node {} is not in the grid's smallest cluster ({} nodes)",
                                                     node, fewest_nodes));
    }
  }

  size_ = 1;
  for (const std::uint64_t r : radices(axes_, schemes_.size())) {
    if (size_ > kMaxSweepPoints / r) {
      throw InputError::in_input("vary", fmt::format("the grid has more than {} points", kMaxSweepPoints));
    }
    size_ *= r;
  }
}

SweepPoint SweepGrid::point(std::uint64_t index) const {
  std::uint64_t digit[9];
  const std::vector<std::uint64_t> r = radices(axes_, schemes_.size());
  std::uint64_t rest = index;
  for (int i = 8; i >= 0; --i) {
    digit[i] = rest % r[static_cast<std::size_t>(i)];
    rest /= r[static_cast<std::size_t>(i)];
  }
  const auto pick = [&](const auto& axis, std::size_t i, auto base) {
    return axis.empty() ? base : axis[static_cast<std::size_t>(digit[i])];
  };
  SweepPoint p;
  p.index = index;
  p.model = pick(axes_.models, 0, base_.model);
  p.scheme = &schemes_[static_cast<std::size_t>(digit[1])];
  p.nodes = pick(axes_.nodes, 2, base_.cluster.nodes);
  p.gpus_per_node = pick(axes_.gpus_per_node, 3, base_.cluster.gpus_per_node);
  p.nic_gbps = pick(axes_.nic_gbps, 4, base_.cluster.inter.nic_gbps);
  p.inter_latency_us = pick(axes_.inter_latency_us, 5, base_.cluster.inter.latency_s * 1e6);
  const int ranks = p.nodes * p.gpus_per_node;
  const double base_batch = base_.workload.global_batch
                                ? *base_.workload.global_batch / (static_cast<double>(ranks) * base_.workload.accumulation_steps)
                                : base_.workload.batch_per_gpu.value_or(p.model->default_batch_per_gpu);
  p.batch_per_gpu = pick(axes_.batch_per_gpu, 6, base_batch);
  p.compression_ratio = pick(axes_.compression_ratio, 7, base_.workload.compression_ratio);
  p.compute_cv = pick(axes_.compute_cv, 8, base_.variability.law == NoiseLaw::none ? 0.0 : base_.variability.cv);
  return p;
}

// One Evaluator per model (they cache schedules), the cluster being mutated point by
// point, the variability last set on each evaluator and where its points' bands come from.
struct SweepEvaluator::State {
  std::vector<std::pair<const ModelSpec*, std::unique_ptr<Evaluator>>> evaluators;
  ClusterProfile cluster;
  std::vector<double> last_cv;
  std::vector<std::optional<ClusterProfile::RunsFit>> band;  // where the model's points have one
};

SweepEvaluator::SweepEvaluator(const SweepGrid& grid) : grid_(grid), state_(std::make_unique<State>()) {
  state_->cluster = grid.base().cluster;
}

SweepEvaluator::~SweepEvaluator() = default;

BandSource SweepGrid::band_source(const ModelSpec& model) const {
  return dtperf::band_source(base_.cluster, model.name, false);  // a sweep has no anchor
}

std::optional<ClusterProfile::RunsFit> SweepGrid::band_uncertainty(const ModelSpec& model) const {
  switch (band_source(model)) {
    case BandSource::none: break;
    case BandSource::fitted: return *base_.cluster.runs_fit;
    case BandSource::datasheet: {
      const ComputeRequest request = compute_request(model, base_.workload, base_.cluster.ranks());
      return datasheet_uncertainty(resolve_compute_source(model, request) == ComputeSource::flops);
    }
  }
  return std::nullopt;
}

bool SweepGrid::banded() const {
  if (axes_.models.empty()) return band_source(*base_.model) != BandSource::none;
  return std::any_of(axes_.models.begin(), axes_.models.end(),
                     [&](const auto& m) { return band_source(*m) != BandSource::none; });
}

void SweepEvaluator::evaluate(std::uint64_t index, SweepRow& row) {
  const SweepPoint p = grid_.point(index);
  State& s = *state_;
  std::size_t slot = 0;
  while (slot < s.evaluators.size() && s.evaluators[slot].first != p.model) ++slot;
  if (slot == s.evaluators.size()) {
    Setup setup = grid_.base();
    setup.model = p.model;
    s.evaluators.emplace_back(p.model, std::make_unique<Evaluator>(std::move(setup)));
    s.last_cv.push_back(-1.0);
    s.band.push_back(grid_.band_uncertainty(*p.model));
  }
  Evaluator& evaluator = *s.evaluators[slot].second;

  WorkloadOptions workload = grid_.base().workload;
  if (!grid_.axes().batch_per_gpu.empty()) workload.batch_per_gpu = p.batch_per_gpu;
  workload.compression_ratio = p.compression_ratio;
  evaluator.set_workload(workload);
  if (!grid_.axes().compute_cv.empty() && s.last_cv[slot] != p.compute_cv) {
    Variability v = grid_.base().variability;
    v.cv = p.compute_cv;
    if (v.law == NoiseLaw::none) v.law = NoiseLaw::normal;
    evaluator.set_variability(v);
    s.last_cv[slot] = p.compute_cv;
  }

  s.cluster.nodes = p.nodes;
  s.cluster.gpus_per_node = p.gpus_per_node;
  s.cluster.inter.nic_gbps = p.nic_gbps;
  s.cluster.inter.latency_s = p.inter_latency_us * 1e-6;
  SchemeOutcome outcome = evaluator.evaluate_on(s.cluster, *p.scheme);

  row.point = p;
  row.available = outcome.available;
  row.unavailable_reason = std::move(outcome.unavailable_reason);
  row.iteration = outcome.available ? outcome.iteration : IterationResult{};
  row.memory_bytes = outcome.memory.total_bytes();
  row.has_quantiles = outcome.variability.has_value();
  row.iteration_p50_s = row.has_quantiles ? outcome.variability->iteration_p50_s : 0.0;
  row.iteration_p99_s = row.has_quantiles ? outcome.variability->iteration_p99_s : 0.0;
  row.band.reset();
  if (outcome.available && s.band[slot]) {
    const BandModels models(*s.band[slot], RunsModel{s.cluster, workload.forward_scale, workload.backward_scale},
                            grid_.fixed());
    if (!models.empty()) row.band = models.band(row.iteration.iteration_s, band_times(evaluator, models, *p.scheme));
  }
}

std::uint64_t shard_size(std::uint64_t total, std::uint64_t shard, std::uint64_t shards) {
  return shard < total ? (total - shard + shards - 1) / shards : 0;
}

void run_sweep(const SweepGrid& grid, const SweepRun& run) {
  using Clock = std::chrono::steady_clock;
  const int threads = std::max(1, run.threads);
  const auto slots = static_cast<std::size_t>(threads);
  // A round is kChunksPerThread chunks per thread, taken by whichever thread is free
  // (costs differ from point to point); a chunk holds at most block_points / 4 points, so
  // a round holds at most threads x block_points rows.
  constexpr std::uint64_t kChunksPerThread = 4;
  const std::uint64_t most_per_chunk = std::max<std::uint64_t>(1, run.block_points / kChunksPerThread);
  const std::uint64_t shards = std::max<std::uint64_t>(1, run.shards);
  const std::uint64_t total = shard_size(grid.size(), run.shard, shards);
  const auto global_index = [&](std::uint64_t local) { return run.shard + local * shards; };
  std::vector<std::unique_ptr<SweepEvaluator>> evaluators;
  for (std::size_t t = 0; t < slots; ++t) evaluators.push_back(std::make_unique<SweepEvaluator>(grid));
  const std::size_t chunks = slots * kChunksPerThread;
  std::vector<std::vector<SweepRow>> blocks(chunks);
  std::vector<std::string> texts(chunks);
  std::vector<std::exception_ptr> failures(chunks);

  std::uint64_t chunk_points = 1;  // the first round measures the cost per point
  for (std::uint64_t start = 0; start < total;) {
    const auto round_start = Clock::now();
    const std::uint64_t end = std::min(total, start + chunk_points * chunks);
    std::atomic<std::size_t> next{0};
    const auto work = [&](std::size_t t) {
      for (std::size_t c = next++; c < chunks; c = next++) {
        try {
          const std::uint64_t first = std::min(end, start + chunk_points * c);
          const std::uint64_t last = std::min(end, first + chunk_points);
          std::vector<SweepRow>& block = blocks[c];
          block.resize(static_cast<std::size_t>(last - first));
          for (std::uint64_t i = first; i < last; ++i) evaluators[t]->evaluate(global_index(i), block[i - first]);
          texts[c].clear();
          if (run.render && !block.empty()) run.render(block, texts[c]);
        } catch (...) {
          failures[c] = std::current_exception();
        }
      }
    };
    {
      std::vector<std::jthread> workers;
      for (std::size_t t = 1; t < slots; ++t) workers.emplace_back(work, t);
      work(0);
    }
    for (const std::exception_ptr& failure : failures) {  // the first failing point's, in index order
      if (failure) std::rethrow_exception(failure);
    }
    for (std::size_t c = 0; c < chunks; ++c) {
      if (!blocks[c].empty() && run.sink) run.sink(blocks[c], texts[c]);
    }
    // Thread-seconds per point this round; the next chunk is what one thread evaluates in
    // its share of the round time, and at most twice this round's: points further on may
    // cost 10^5 times these (All-Reduce on a few nodes 12 us, AER on 2^20 GPUs 3 s, one
    // core of the 2-core development VM), and a round sized on cheap ones alone takes
    // everything after them, with no row and no progress until it ends (a sweep of nodes
    // 1 to 2^20 over every scheme: 370 of its 378 points in one 10 s round, uncapped).
    const double seconds_per_point = std::chrono::duration<double>(Clock::now() - round_start).count() *
                                     static_cast<double>(threads) / static_cast<double>(end - start);
    const double target = run.round_seconds / static_cast<double>(kChunksPerThread);
    const double fits = seconds_per_point > 0.0 ? target / seconds_per_point : 1e18;
    const double most = static_cast<double>(std::min(most_per_chunk, 2 * chunk_points));
    chunk_points = static_cast<std::uint64_t>(std::clamp(fits, 1.0, most));
    start = end;
    if (run.progress) run.progress(end, total);
  }
}

}  // namespace dtperf
