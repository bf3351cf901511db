#include "raw_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <numeric>

#include "dtperf/io/temporary_file_guard.hpp"
#include "error.hpp"

extern char** environ;

namespace dtperf::calibrate {

RawPoint make_raw_point(const PlanEntry& entry, std::size_t point, const PointResult& result) {
  RawPoint raw;
  raw.bytes = entry.sizes_bytes.at(point);
  raw.count = raw.bytes / 4;
  raw.time_us = result.time_s * 1e6;
  raw.time_us_min = result.time_min_s * 1e6;
  raw.time_us_max = result.time_max_s * 1e6;
  raw.time_us_median = result.time_median_s > 0.0 ? result.time_median_s * 1e6 : -1.0;
  raw.algbw_GB_per_s = result.time_s > 0.0 ? static_cast<double>(raw.bytes) / result.time_s / 1e9 : 0.0;
  raw.busbw_GB_per_s = raw.algbw_GB_per_s * busbw_factor(entry.kind, entry.ranks);
  raw.correct = result.correct;
  return raw;
}

RawCollective make_raw_collective(const PlanEntry& entry, const std::vector<PointResult>& results,
                                  const SweepCounts& counts) {
  RawCollective raw;
  raw.collective = kind_name(entry.kind);
  raw.group = group_name(entry.group);
  raw.ranks = entry.ranks;
  raw.nodes = entry.nodes;
  raw.concurrent_per_node = entry.concurrent_per_node;
  raw.dtype = entry.dtype;
  raw.warmup_iterations = counts.warmup;
  raw.iterations = counts.iterations;
  for (std::size_t p = 0; p < results.size() && p < entry.sizes_bytes.size(); ++p) {
    if (results[p].measured) raw.points.push_back(make_raw_point(entry, p, results[p]));
  }
  return raw;
}

RawSpread make_raw_spread(int rank, const std::vector<double>& samples_s) {
  RawSpread spread;
  spread.rank = rank;
  spread.iterations = static_cast<int>(samples_s.size());
  if (samples_s.empty()) return spread;
  const double n = static_cast<double>(samples_s.size());
  const double mean_s = std::accumulate(samples_s.begin(), samples_s.end(), 0.0) / n;
  double sum_sq = 0.0;
  for (double sample : samples_s) sum_sq += (sample - mean_s) * (sample - mean_s);
  const double stddev_s = std::sqrt(sum_sq / n);
  spread.mean_us = mean_s * 1e6;
  spread.stddev_us = stddev_s * 1e6;
  spread.cv = mean_s > 0.0 ? stddev_s / mean_s : 0.0;
  std::vector<double> sorted = samples_s;
  std::sort(sorted.begin(), sorted.end());
  const auto quantile = [&](double q) {
    const double at = q * (n - 1.0);
    const auto below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (at - std::floor(at)) * (sorted[above] - sorted[below]);
  };
  const double median_s = quantile(0.5);
  // A normal law's interquartile range is 1.349 standard deviations.
  constexpr double kNormalIqrSigmas = 1.349;
  spread.median_us = median_s * 1e6;
  spread.robust_cv = median_s > 0.0 ? (quantile(0.75) - quantile(0.25)) / kNormalIqrSigmas / median_s : 0.0;
  return spread;
}

void set_world(RawRun& run, const Topology& topology) {
  run.placement = topology.places();
  run.hosts = topology.node_names();
  run.nodes = topology.node_count();
  run.ranks_per_node = topology.ranks_per_node();
}

namespace {

nlohmann::ordered_json world_json(const RawRun& run) {
  nlohmann::ordered_json placement = nlohmann::ordered_json::array();
  for (const RankPlace& place : run.placement) {
    placement.push_back({{"rank", place.rank}, {"host", place.host}, {"local_rank", place.local_rank},
                         {"device", place.device}, {"device_name", place.device_name}, {"bus_id", place.bus_id}});
  }
  return {{"ranks", run.placement.size()}, {"nodes", run.nodes}, {"ranks_per_node", run.ranks_per_node},
          {"hosts", run.hosts}, {"placement", placement}};
}

nlohmann::ordered_json collective_json(const RawCollective& c) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const RawPoint& p : c.points) {
    nlohmann::ordered_json point = {{"bytes", p.bytes}, {"count", p.count}, {"time_us", p.time_us},
                                    {"time_us_min", p.time_us_min}, {"time_us_max", p.time_us_max}};
    if (p.time_us_median > 0.0) point["time_us_median"] = p.time_us_median;
    point["algbw_GB_per_s"] = p.algbw_GB_per_s;
    point["busbw_GB_per_s"] = p.busbw_GB_per_s;
    point["correct"] = p.correct;
    points.push_back(std::move(point));
  }
  return {{"collective", c.collective}, {"group", c.group}, {"ranks", c.ranks}, {"nodes", c.nodes},
          {"concurrent_per_node", c.concurrent_per_node}, {"dtype", c.dtype},
          {"warmup_iterations", c.warmup_iterations}, {"iterations", c.iterations}, {"points", points}};
}

}  // namespace

nlohmann::ordered_json to_json(const RawRun& run) {
  nlohmann::ordered_json json;
  json["schema"] = kRawSchema;
  json["tool"] = kToolName;
  json["backend"] = run.backend;
  json["created"] = run.created;
  json["arguments"] = run.arguments;
  json["environment"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : run.environment) json["environment"][name] = value;
  json["versions"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : run.versions) json["versions"][name] = value;
  json["world"] = world_json(run);
  json["budget_s"] = run.budget_s;
  json["elapsed_s"] = run.elapsed_s;
  json["truncated"] = run.truncated;
  json["collectives"] = nlohmann::ordered_json::array();
  for (const RawCollective& c : run.collectives) json["collectives"].push_back(collective_json(c));
  json["gemm"] = nlohmann::ordered_json::array();
  for (const RawGemm& g : run.gemm) {
    json["gemm"].push_back({{"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"flops", g.flops},
                            {"time_us", g.time_us}, {"tflops", g.tflops}});
  }
  json["copy"] = nlohmann::ordered_json::array();
  for (const RawCopy& c : run.copy) {
    json["copy"].push_back({{"bytes", c.bytes}, {"time_us", c.time_us}, {"GB_per_s", c.GB_per_s}});
  }
  json["contention"] = nlohmann::ordered_json::array();
  for (const RawContention& c : run.contention) {
    json["contention"].push_back(
        {{"dtype", c.dtype}, {"m", c.m}, {"n", c.n}, {"k", c.k}, {"collective", c.collective}, {"group", c.group},
         {"ranks", c.ranks}, {"nodes", c.nodes}, {"bytes", c.bytes}, {"calls", c.calls},
         {"gemm_time_us_alone", c.gemm_time_us_alone}, {"gemm_time_us_beside", c.gemm_time_us_beside},
         {"collective_time_us_alone", c.collective_time_us_alone},
         {"collective_time_us_beside", c.collective_time_us_beside}, {"covered", c.covered}});
  }
  json["iteration_spread"] = nlohmann::ordered_json::array();
  for (const RawSpread& s : run.iteration_spread) {
    json["iteration_spread"].push_back({{"rank", s.rank},
                                        {"iterations", s.iterations},
                                        {"mean_us", s.mean_us},
                                        {"stddev_us", s.stddev_us},
                                        {"cv", s.cv},
                                        {"median_us", s.median_us},
                                        {"robust_cv", s.robust_cv}});
  }
  return json;
}

void write_json_file(const nlohmann::ordered_json& json, const std::string& path) {
  const std::string text = json.dump(2) + "\n";
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const io::TemporaryFileGuard guard(temporary);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw CalibrationError("cannot write " + temporary + ": " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw CalibrationError("cannot rename " + temporary + " to " + path + ": " + reason);
  }
}

void check_writable(const std::string& path) {
  if (path == "-") return;
  const std::string probe = path + ".tmp." + std::to_string(::getpid());
  std::ofstream out(probe, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError("cannot write -o " + path + ": " + std::strerror(errno));
  out.close();
  std::remove(probe.c_str());
}

std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::map<std::string, std::string> captured_environment() {
  static const char* const prefixes[] = {"NCCL_", "CUDA_", "OMPI_", "PMI_", "PMIX_", "SLURM_", "DTPERF_"};
  std::map<std::string, std::string> captured;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    for (const char* prefix : prefixes) {
      if (name.rfind(prefix, 0) == 0) captured[name] = text.substr(equals + 1);
    }
  }
  return captured;
}

}  // namespace dtperf::calibrate
