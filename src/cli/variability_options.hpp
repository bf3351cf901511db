#pragma once
// Variable-compute options of the commands that predict: a CV with its law, measured
// iteration times, persistent slow ranks and nodes, and the simulation's seed and length.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dtperf/cluster.hpp"
#include "dtperf/variability.hpp"

namespace dtperf::cli {

struct VariabilityCliOptions {
  void add_to(CLI::App& app);
  /// Checks the values against the cluster (rank and node indices) and reads the file of
  /// measured times; InputError on any problem.
  Variability resolve(const ClusterProfile& cluster) const;
  /// The law --cv-law names (also when no CV is given: a sweep's compute-cv axis uses it).
  NoiseLaw law() const { return law_ == "lognormal" ? NoiseLaw::lognormal : NoiseLaw::normal; }

 private:
  double cv_ = 0.0;
  std::string law_ = "normal";
  std::string iteration_times_;
  std::vector<std::string> slow_ranks_;
  std::vector<std::string> slow_nodes_;
  std::uint64_t seed_ = 1;
  int iterations_ = 1000;
  int warmup_ = 50;
  CLI::Option* o_cv_ = nullptr;
};

}  // namespace dtperf::cli
