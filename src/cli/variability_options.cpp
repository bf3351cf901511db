#include "variability_options.hpp"
#include "checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"

namespace dtperf::cli {

namespace {

// "INDEX=FACTOR" with INDEX in [0, count) and FACTOR in [1/kMaxFactor, kMaxFactor].
std::pair<int, double> index_factor(const std::string& text, const char* option, const char* what, int count) {
  const auto equals = text.find('=');
  int index = -1;
  double factor = 0.0;
  const bool parsed =
      equals != std::string::npos &&
      std::from_chars(text.data(), text.data() + equals, index).ptr == text.data() + equals &&
      std::from_chars(text.data() + equals + 1, text.data() + text.size(), factor).ptr == text.data() + text.size();
  if (!parsed) throw InputError(option, "", fmt::format("expected {}=FACTOR (e.g. 3=1.5), got '{}'", what, text));
  if (index < 0 || index >= count) {
    throw InputError(option, "", fmt::format("{} {} does not exist: the cluster has {} {}s (0 to {})", what, index,
                                             count, what, count - 1));
  }
  if (!(factor >= 1.0 / kMaxFactor) || !(factor <= kMaxFactor)) {
    throw InputError(option, "", fmt::format("the factor of {} {} must be from {:g} to {:g}, got '{}'", what, index,
                                             1.0 / kMaxFactor, kMaxFactor, text.substr(equals + 1, 24)));
  }
  return {index, factor};
}

}  // namespace

void VariabilityCliOptions::add_to(CLI::App& app) {
  const char* group = "Variable compute (stragglers)";
  o_cv_ = app.add_option("--compute-cv", cv_, "Coefficient of variation of each rank's compute time per iteration")
              ->type_name("FRACTION")->check(number_in(limits::kComputeCv))->group(group);
  app.add_option("--cv-law", law_, "Law of the compute factors (mean 1)")
      ->type_name("normal|lognormal")->check(CLI::IsMember({"normal", "lognormal"}))->capture_default_str()->group(group);
  app.add_option("--iteration-times", iteration_times_,
                 "Measured iteration times, one per line: factors are resampled from them (instead of a CV)")
      ->type_name("FILE")->excludes(o_cv_)->group(group);
  app.add_option("--slow-rank", slow_ranks_, "A persistently slower rank, e.g. 5=1.2 (repeatable)")
      ->type_name("RANK=FACTOR")->group(group);
  app.add_option("--slow-node", slow_nodes_, "A persistently slower node, e.g. 0=2.5 for a T4 node among A100s (repeatable)")
      ->type_name("NODE=FACTOR")->group(group);
  app.add_option("--seed", seed_, "Seed of the simulated draws")->type_name("N")->capture_default_str()->group(group);
  app.add_option("--sim-iterations", iterations_, "Iterations simulated when compute varies")
      ->type_name("K")->transform(count_up_to(1e6))->capture_default_str()->group(group);
  app.add_option("--warmup-iterations", warmup_, "Iterations simulated before measuring")
      ->type_name("K")->check(number_in(0.0, 1e6))->capture_default_str()->group(group);
}

Variability VariabilityCliOptions::resolve(const ClusterProfile& cluster) const {
  Variability v;
  v.seed = seed_;
  v.iterations = iterations_;
  v.warmup_iterations = warmup_;
  if (!iteration_times_.empty()) {
    const std::vector<double> times = io::read_iteration_times(iteration_times_);
    double mean = 0.0;
    for (const double t : times) mean += t;
    mean /= static_cast<double>(times.size());
    v.law = NoiseLaw::empirical;
    for (const double t : times) v.empirical_factors.push_back(t / mean);
  } else if (cv_ > 0.0) {
    v.law = law();
    v.cv = cv_;
  }
  for (const auto& text : slow_ranks_) v.slow_ranks.push_back(index_factor(text, "--slow-rank", "rank", cluster.ranks()));
  for (const auto& text : slow_nodes_) v.slow_nodes.push_back(index_factor(text, "--slow-node", "node", cluster.nodes));
  // Factors given for the same rank (its node's and its own, or one repeated) multiply:
  // the product is held to the range one factor has, [1/kMaxFactor, kMaxFactor].
  const std::vector<double> combined = persistent_factors(v, cluster.ranks(), cluster.gpus_per_node);
  for (std::size_t r = 0; r < combined.size(); ++r) {
    const double f = combined[r];
    if (f >= 1.0 / kMaxFactor && f <= kMaxFactor) continue;
    const int rank = static_cast<int>(r);
    const bool own = std::any_of(v.slow_ranks.begin(), v.slow_ranks.end(), [&](const auto& p) { return p.first == rank; });
    throw InputError(own ? "--slow-rank" : "--slow-node", "",
                     fmt::format("the factors given for rank {} (node {}) multiply to {:.4g}, outside [{:g}, {:g}]: "
                                 "give each rank and node one factor",
                                 rank, rank / cluster.gpus_per_node, f, 1.0 / kMaxFactor, kMaxFactor));
  }
  return v;
}

}  // namespace dtperf::cli
