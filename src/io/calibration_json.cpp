#include "dtperf/io/calibration_json.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "dtperf/fit.hpp"

namespace dtperf::io {

namespace {

// What a calibration measures. A rate is bytes (or FLOPs) over a time, both in range, and
// checked against them below: any positive value up to the highest of limits::kGBps and
// kTflops (8 bytes in 10 us is 0.0008 GB/s; a bus bandwidth is 0 on one rank). A GEMM's
// dimensions go up to 2^24 each, so 2 m n k stays below 10^23 FLOP; a run's wall time up
// to 10^6 s (11 days).
constexpr Range kMeasuredGBps{0.0, limits::kGBps.high, true};
constexpr Range kMeasuredGBpsOrZero{0.0, limits::kGBps.high};
constexpr Range kMeasuredTflops{0.0, limits::kTflops.high, true};
constexpr std::int64_t kMaxGemmDim = std::int64_t{1} << 24;
constexpr Range kFlops{2.0, 2.0 * 16777216.0 * 16777216.0 * 16777216.0};
constexpr Range kElapsedS{0.0, 1e6};
constexpr Range kBudgetS{1e-3, 1e6};

const std::vector<std::string> kRootKeys = {
    "schema",    "tool",      "backend",   "created",     "arguments", "environment", "versions", "world",
    "budget_s",  "elapsed_s", "truncated", "collectives", "gemm",      "copy",        "iteration_spread",
    "contention"};
const std::vector<std::string> kPointKeys = {"bytes",          "count",          "time_us", "time_us_min", "time_us_max",
                                             "time_us_median",
                                             "algbw_GB_per_s", "busbw_GB_per_s", "correct"};
const std::vector<std::string> kCollectives = {"all_reduce", "sendrecv", "all_gather", "reduce_scatter"};
const std::vector<std::string> kGroups = {"world", "node", "one_per_node", "pair_intra", "pair_inter", "two_nodes", "self"};
const std::vector<std::string> kGemmDtypes = {"fp32", "tf32", "fp16", "bf16", "fp8"};
const std::vector<std::string> kDtypes = {"float32", "float16", "bfloat16", "float64", "int32", "int8", "uint8"};
const std::vector<std::string> kVersionKeys = {"cuda_runtime", "cuda_driver", "nccl", "gpu_driver"};
constexpr double kTolerance = 0.01;  // relative, for redundant derived values

// ObjectReader cannot read booleans; objects with one check their keys here.
void reject_unknown_keys(const Json& object, const std::string& file, const std::string& pointer,
                         const std::vector<std::string>& known) {
  for (const auto& item : object.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      throw InputError(file, pointer_append(pointer, item.key()),
                       fmt::format("unknown key '{}'{}; expected one of: {}", item.key(), did_you_mean(item.key(), known),
                                   join_names(known)));
    }
  }
}

bool boolean(const Json& object, const std::string& key, const std::string& file, const std::string& pointer) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError(file, pointer_append(pointer, key), "missing required field '" + key + "'");
  if (!it->is_boolean()) {
    throw InputError(file, pointer_append(pointer, key), "expected true or false, got " + type_name(*it));
  }
  return it->get<bool>();
}

int whole(ObjectReader& r, const std::string& key, std::int64_t min_value, std::int64_t max_value = limits::kMaxCount) {
  return static_cast<int>(r.integer(key, min_value, max_value));
}

bool near(double value, double expected) {
  return std::abs(value - expected) <= kTolerance * std::abs(expected);
}

const char* shape_rule(const std::string& group) {
  if (group == "world") return "all ranks";
  if (group == "node") return "the ranks of one node";
  if (group == "one_per_node") return "one rank on every node";
  if (group == "pair_intra") return "2 ranks on 1 node";
  if (group == "pair_inter") return "2 ranks on 2 nodes";
  if (group == "self") return "one rank alone";
  return "the ranks of 2 nodes";
}

std::pair<int, int> expected_shape(const std::string& group, const CalibrationWorld& w) {
  if (group == "world") return {w.ranks, w.nodes};
  if (group == "node") return {w.ranks_per_node, 1};
  if (group == "one_per_node") return {w.nodes, w.nodes};
  if (group == "pair_intra") return {2, 1};
  if (group == "pair_inter") return {2, 2};
  if (group == "self") return {1, 1};
  return {2 * w.ranks_per_node, 2};
}

void check_date_time(const std::string& text, const std::string& file, const std::string& pointer) {
  const bool ok = text.size() >= 10 && std::isdigit(static_cast<unsigned char>(text[0])) && text[4] == '-' &&
                  text[7] == '-' &&
                  std::all_of(text.begin(), text.begin() + 10, [](char c) { return c == '-' || std::isdigit(static_cast<unsigned char>(c)); }) &&
                  (text.size() == 10 || text[10] == 'T');
  if (!ok) throw InputError(file, pointer, fmt::format("expected an ISO date-time like 2026-11-21T10:00:00Z, got '{}'", text));
}

CalibrationWorld read_world(ObjectReader r) {
  CalibrationWorld w;
  w.ranks = whole(r, "ranks", 1, limits::kMaxGpus);
  w.nodes = whole(r, "nodes", 1, limits::kMaxGpus);
  w.ranks_per_node = whole(r, "ranks_per_node", 1, limits::kMaxGpus);
  if (w.ranks != w.nodes * w.ranks_per_node) {
    r.fail("ranks", fmt::format("{} ranks is not {} nodes x {} ranks per node", w.ranks, w.nodes, w.ranks_per_node));
  }
  w.hosts = r.string_list("hosts");
  if (static_cast<int>(w.hosts.size()) != w.nodes) {
    r.fail("hosts", fmt::format("{} host(s) for {} node(s)", w.hosts.size(), w.nodes));
  }
  const Json& placement = r.array("placement");
  std::set<int> seen;
  for (std::size_t i = 0; i < placement.size(); ++i) {
    ObjectReader p(placement[i], r.file(), pointer_append(r.pointer_of("placement"), i));
    CalibrationPlacement entry;
    entry.rank = whole(p, "rank", 0, limits::kMaxGpus);
    if (entry.rank >= w.ranks) p.fail("rank", fmt::format("rank {} is not below the {} ranks", entry.rank, w.ranks));
    if (!seen.insert(entry.rank).second) p.fail("rank", fmt::format("rank {} is placed twice", entry.rank));
    entry.host = p.string("host");
    if (std::find(w.hosts.begin(), w.hosts.end(), entry.host) == w.hosts.end()) {
      p.fail("host", fmt::format("unknown host '{}'{}; /world/hosts has: {}", entry.host, did_you_mean(entry.host, w.hosts),
                                 join_names(w.hosts)));
    }
    entry.local_rank = whole(p, "local_rank", 0, limits::kMaxGpus);
    if (entry.local_rank >= w.ranks_per_node) {
      p.fail("local_rank", fmt::format("local rank {} is not below the {} ranks per node", entry.local_rank, w.ranks_per_node));
    }
    if (const auto device = p.optional_integer("device", 0)) entry.device = static_cast<int>(*device);
    entry.device_name = p.optional_string("device_name").value_or("");
    entry.bus_id = p.optional_string("bus_id").value_or("");
    p.finish();
    w.placement.push_back(entry);
  }
  r.finish();
  return w;
}

CalibrationPoint read_point(const Json& json, const std::string& file, const std::string& pointer,
                            const CalibrationCollective& c, double factor) {
  ObjectReader r(json, file, pointer);
  CalibrationPoint p;
  p.bytes = static_cast<double>(r.integer("bytes", 1, limits::kMaxBytes));
  p.count = r.integer("count", 0);
  p.time_us = r.number("time_us", limits::kTimeUs);
  p.time_us_min = r.number("time_us_min", limits::kTimeUs);
  p.time_us_max = r.number("time_us_max", limits::kTimeUs);
  p.time_us_median = r.optional_number("time_us_median", limits::kTimeUs);
  p.algbw_GB_per_s = r.number("algbw_GB_per_s", kMeasuredGBps);
  p.busbw_GB_per_s = r.number("busbw_GB_per_s", kMeasuredGBpsOrZero);  // 0 on one rank
  const bool correct = boolean(json, "correct", file, pointer);
  reject_unknown_keys(json, file, pointer, kPointKeys);
  if (!correct) {
    r.fail("correct", fmt::format("the result check failed at {} bytes: the measurement is invalid (fix the cause and "
                                  "calibrate again)",
                                  p.bytes));
  }
  if (p.time_us_min > p.time_us * (1.0 + 1e-9) || p.time_us > p.time_us_max * (1.0 + 1e-9)) {
    r.fail("time_us", fmt::format("expected time_us_min <= time_us <= time_us_max, got {:g} <= {:g} <= {:g}",
                                  p.time_us_min, p.time_us, p.time_us_max));
  }
  const double algbw = p.bytes / (p.time_us * 1e3);
  if (!near(p.algbw_GB_per_s, algbw)) {
    r.fail("algbw_GB_per_s", fmt::format("algbw {:g} GB/s is not bytes / time = {} B / {:g} us = {:.4g} GB/s",
                                         p.algbw_GB_per_s, p.bytes, p.time_us, algbw));
  }
  if (!near(p.busbw_GB_per_s, p.algbw_GB_per_s * factor)) {
    r.fail("busbw_GB_per_s", fmt::format("busbw {:g} GB/s is not algbw x {:.4g} = {:.4g} GB/s for {} on {} ranks",
                                         p.busbw_GB_per_s, factor, p.algbw_GB_per_s * factor, c.collective, c.ranks));
  }
  return p;
}

/// "ranks" and "nodes", which must be the shape of `group` in world `w`.
std::pair<int, int> read_shape(ObjectReader& r, const std::string& group, const CalibrationWorld& w) {
  const int ranks = whole(r, "ranks", 1, limits::kMaxGpus);
  const int nodes = whole(r, "nodes", 1, limits::kMaxGpus);
  const auto [expected_ranks, expected_nodes] = expected_shape(group, w);
  if (ranks != expected_ranks || nodes != expected_nodes) {
    r.fail("ranks", fmt::format("group '{}' is {}: expected {} ranks on {} node(s), got {} on {}", group,
                                shape_rule(group), expected_ranks, expected_nodes, ranks, nodes));
  }
  return {ranks, nodes};
}

CalibrationCollective read_collective(ObjectReader r, const CalibrationWorld& w) {
  CalibrationCollective c;
  c.pointer = r.pointer();
  c.collective = r.choice("collective", kCollectives);
  c.group = r.choice("group", kGroups);
  std::tie(c.ranks, c.nodes) = read_shape(r, c.group, w);
  if (c.collective == "sendrecv" && c.ranks != 2) r.fail("ranks", "sendrecv runs on pairs: expected 2 ranks");
  if (c.group == "self" && c.collective != "all_reduce") r.fail("group", "group 'self' is measured with all_reduce only");
  if (c.group != "self" && c.ranks < 2) r.fail("ranks", "a collective needs at least 2 ranks, except on group 'self'");
  c.concurrent_per_node = whole(r, "concurrent_per_node", 1, limits::kMaxGpus);
  if (c.concurrent_per_node * (c.ranks / c.nodes) > w.ranks_per_node) {
    r.fail("concurrent_per_node", fmt::format("{} groups of {} rank(s) per node do not fit on {} ranks per node",
                                              c.concurrent_per_node, c.ranks / c.nodes, w.ranks_per_node));
  }
  c.dtype = r.choice("dtype", kDtypes);
  c.warmup_iterations = whole(r, "warmup_iterations", 0);
  c.iterations = whole(r, "iterations", 1);
  const Json& points = r.array("points");
  if (points.empty()) r.fail("points", "expected at least one point");
  const double factor = *bus_factor(c.collective, c.ranks);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = pointer_append(r.pointer_of("points"), i);
    c.points.push_back(read_point(points[i], r.file(), at, c, factor));
    if (i > 0 && c.points[i].bytes <= c.points[i - 1].bytes) {
      throw InputError(r.file(), pointer_append(at, "bytes"),
                       fmt::format("points must be sorted by strictly increasing bytes: {} after {}", c.points[i].bytes,
                                   c.points[i - 1].bytes));
    }
  }
  r.finish();
  return c;
}

CalibrationGemm read_gemm(ObjectReader r) {
  CalibrationGemm g;
  g.dtype = *parse_name<DType>(r.choice("dtype", kGemmDtypes));
  g.m = r.integer("m", 1, kMaxGemmDim);
  g.n = r.integer("n", 1, kMaxGemmDim);
  g.k = r.integer("k", 1, kMaxGemmDim);
  g.flops = r.number("flops", kFlops);
  const double expected = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (!near(g.flops, expected)) {
    r.fail("flops", fmt::format("flops {:g} is not 2 m n k = {:g}", g.flops, expected));
  }
  g.time_us = r.number("time_us", limits::kTimeUs);
  g.tflops = r.number("tflops", kMeasuredTflops);
  if (!near(g.tflops, g.flops / g.time_us / 1e6)) {
    r.fail("tflops", fmt::format("tflops {:g} is not flops / time = {:.4g}", g.tflops, g.flops / g.time_us / 1e6));
  }
  r.finish();
  return g;
}

CalibrationCopy read_copy(ObjectReader r) {
  CalibrationCopy c;
  c.bytes = static_cast<double>(r.integer("bytes", 1, limits::kMaxBytes));
  c.time_us = r.number("time_us", limits::kTimeUs);
  c.GB_per_s = r.number("GB_per_s", kMeasuredGBps);
  const double traffic = 2.0 * c.bytes / (c.time_us * 1e3);  // read and written
  if (!near(c.GB_per_s, traffic)) {
    r.fail("GB_per_s", fmt::format("GB_per_s {:g} is not 2 x bytes / time = {:.4g} (read + written)", c.GB_per_s, traffic));
  }
  r.finish();
  return c;
}

CalibrationSpread read_spread(ObjectReader r, const CalibrationWorld& w, bool robust_allowed) {
  CalibrationSpread s;
  s.rank = whole(r, "rank", 0, limits::kMaxGpus);
  if (s.rank >= w.ranks) r.fail("rank", fmt::format("rank {} is not below the {} ranks", s.rank, w.ranks));
  s.iterations = whole(r, "iterations", 1);
  s.mean_us = r.number("mean_us", limits::kTimeUs);
  s.stddev_us = r.number("stddev_us", limits::kTimeOrZeroUs);
  s.cv = r.number("cv", limits::kComputeCv);
  const double cv = s.stddev_us / s.mean_us;
  if (std::abs(s.cv - cv) > std::max(1e-4, kTolerance * cv)) {
    r.fail("cv", fmt::format("cv {:g} is not stddev / mean = {:.4g}", s.cv, cv));
  }
  if (robust_allowed) {
    s.median_us = r.optional_number("median_us", limits::kTimeUs);
    s.robust_cv = r.optional_number("robust_cv", limits::kComputeCv);
    if (s.median_us.has_value() != s.robust_cv.has_value()) {
      r.fail(s.median_us ? "median_us" : "robust_cv", "median_us and robust_cv come together (calibrate/FORMAT.md)");
    }
  }
  r.finish();
  return s;
}

CalibrationContention read_contention(ObjectReader r, const CalibrationWorld& w) {
  CalibrationContention c;
  c.dtype = *parse_name<DType>(r.choice("dtype", kGemmDtypes));
  c.m = r.integer("m", 1, kMaxGemmDim);
  c.n = r.integer("n", 1, kMaxGemmDim);
  c.k = r.integer("k", 1, kMaxGemmDim);
  c.collective = r.choice("collective", {"all_reduce"});
  c.group = r.choice("group", {"world", "self"});
  std::tie(c.ranks, c.nodes) = read_shape(r, c.group, w);
  c.bytes = static_cast<double>(r.integer("bytes", 1, limits::kMaxBytes));
  c.calls = whole(r, "calls", 1);
  c.gemm_time_us_alone = r.number("gemm_time_us_alone", limits::kTimeUs);
  c.gemm_time_us_beside = r.number("gemm_time_us_beside", limits::kTimeUs);
  c.collective_time_us_alone = r.number("collective_time_us_alone", limits::kTimeUs);
  c.collective_time_us_beside = r.number("collective_time_us_beside", limits::kTimeUs);
  c.covered = r.boolean("covered");
  r.finish();
  return c;
}

template <typename T, typename F>
std::vector<T> read_list(ObjectReader& r, const std::string& key, F&& read) {
  std::vector<T> out;
  if (const Json* list = r.optional_array(key)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      out.push_back(read(ObjectReader((*list)[i], r.file(), pointer_append(r.pointer_of(key), i))));
    }
  }
  return out;
}

void check_duplicates(const std::vector<CalibrationCollective>& collectives, const std::string& file) {
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& a = collectives[j];
      const auto& b = collectives[i];
      if (a.collective == b.collective && a.group == b.group && a.concurrent_per_node == b.concurrent_per_node) {
        throw InputError(file, b.pointer,
                         fmt::format("{} on group '{}' with {} concurrent per node is already at {}", b.collective,
                                     b.group, b.concurrent_per_node, a.pointer));
      }
    }
  }
}

}  // namespace

RawCalibration parse_calibration(const Json& json, const std::string& file) {
  ObjectReader r(json, file, "");
  RawCalibration raw;
  raw.schema = r.expect_schema(std::vector<std::string>{kCalibrationSchema, kCalibrationSchemaV2, kCalibrationSchemaV1});
  raw.tool = r.string("tool");
  raw.backend = r.choice("backend", {"nccl", "host"});
  raw.created = r.string("created");
  check_date_time(raw.created, file, "/created");
  raw.arguments = r.string_list("arguments");
  if (r.optional_object("environment")) {
    for (const auto& item : json.at("environment").items()) {
      if (!item.value().is_string()) {
        throw InputError(file, pointer_append("/environment", item.key()), "expected a string, got " + type_name(item.value()));
      }
      raw.environment[item.key()] = item.value().get<std::string>();
    }
  }
  if (auto versions = r.optional_object("versions")) {
    for (const auto& key : kVersionKeys) {
      if (const auto value = versions->optional_string(key)) raw.versions[key] = *value;
    }
    versions->finish();
  }
  raw.world = read_world(r.object("world"));
  raw.budget_s = r.number("budget_s", kBudgetS);
  raw.elapsed_s = r.number("elapsed_s", kElapsedS);
  raw.truncated = boolean(json, "truncated", file, "");
  raw.collectives = read_list<CalibrationCollective>(r, "collectives", [&](ObjectReader c) {
    return read_collective(std::move(c), raw.world);
  });
  check_duplicates(raw.collectives, file);
  raw.gemm = read_list<CalibrationGemm>(r, "gemm", [](ObjectReader g) { return read_gemm(std::move(g)); });
  raw.copy = read_list<CalibrationCopy>(r, "copy", [](ObjectReader c) { return read_copy(std::move(c)); });
  raw.iteration_spread = read_list<CalibrationSpread>(r, "iteration_spread", [&](ObjectReader s) {
    return read_spread(std::move(s), raw.world, raw.schema == kCalibrationSchema);
  });
  raw.contention = read_list<CalibrationContention>(r, "contention", [&](ObjectReader c) {
    return read_contention(std::move(c), raw.world);
  });
  if (!raw.contention.empty() && raw.schema == kCalibrationSchemaV1) {
    throw InputError(file, "/contention", fmt::format("contention is new in '{}'; this file says '{}'",
                                                      kCalibrationSchemaV2, kCalibrationSchemaV1));
  }
  reject_unknown_keys(json, file, "", kRootKeys);
  return raw;
}

RawCalibration read_calibration_file(const std::string& path) { return parse_calibration(read_json_file(path), path); }

}  // namespace dtperf::io
