// nccl-tests -J output (src/util.cu of nccl-tests, JSON_FILE_VERSION 2); the rules are
// in dtperf/io/nccl_tests.hpp. Keys this reader does not use are ignored on purpose:
// nccl-tests adds keys between versions and the file is not dtperf's format.
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"
#include "nccl_tests_checks.hpp"

namespace dtperf::io::detail {

namespace {

// nccl-tests writes doubles with "%lf": six decimals.
constexpr double kHalfUnit = 5e-7;

const Json& member(const Json& object, const char* key, const std::string& file, const std::string& pointer) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError(file, pointer, fmt::format("missing required field '{}'", key));
  return *it;
}

double number(const Json& object, const char* key, const std::string& file, const std::string& pointer,
              const Range& range) {
  const Json& value = member(object, key, file, pointer);
  return check_number(value, file, pointer_append(pointer, key), range);
}

// A count of wrong elements: up to 2^53, where a double still counts exactly.
constexpr Range kWrongCount{0.0, 9007199254740992.0};

std::int64_t whole(const Json& object, const char* key, const std::string& file, const std::string& pointer,
                   std::int64_t most) {
  const Json& value = member(object, key, file, pointer);
  // An unsigned value is read as unsigned: 2^63 and above would turn negative as int64.
  const bool negative = value.is_number_integer() && !value.is_number_unsigned() && value.get<std::int64_t>() < 0;
  if (!value.is_number_integer() || negative) {
    throw InputError(file, pointer_append(pointer, key), "expected an integer >= 0, got " + type_name(value));
  }
  if (value.is_number_unsigned() ? value.get<std::uint64_t>() > static_cast<std::uint64_t>(most)
                                 : value.get<std::int64_t>() > most) {
    throw InputError(file, pointer_append(pointer, key),
                     fmt::format("expected an integer up to {}, got {}", most, value.dump()));
  }
  return value.get<std::int64_t>();
}

std::string text(const Json& object, const char* key, const std::string& file, const std::string& pointer) {
  const Json& value = member(object, key, file, pointer);
  if (!value.is_string()) throw InputError(file, pointer_append(pointer, key), "expected a string, got " + type_name(value));
  return value.get<std::string>();
}

std::optional<ReadResult> read_result(const Json& row, const char* key, const std::string& file,
                                      const std::string& pointer) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return std::nullopt;
  const std::string at = pointer_append(pointer, key);
  if (!it->is_object()) throw InputError(file, at, "expected an object or null, got " + type_name(*it));
  ReadResult r;
  r.value.time_us = number(*it, it->contains("cpu_time") ? "cpu_time" : "time", file, at, detail::kTimeUs);
  r.value.algbw_GB_per_s = number(*it, "alg_bw", file, at, detail::kRateGBps);
  r.value.busbw_GB_per_s = number(*it, "bus_bw", file, at, detail::kRateGBps);
  if (const auto wrong = it->find("nwrong"); wrong != it->end() && !wrong->is_null()) {
    r.value.wrong = static_cast<std::int64_t>(check_number(*wrong, file, pointer_append(at, "nwrong"), kWrongCount));
  }
  r.time_half_us = r.algbw_half = r.busbw_half = kHalfUnit;
  return r;
}

ReadRow read_row(const Json& row, const std::string& file, const std::string& pointer) {
  if (!row.is_object()) throw InputError(file, pointer, "expected an object, got " + type_name(row));
  ReadRow r;
  r.where = pointer;
  r.bytes = static_cast<double>(whole(row, "size", file, pointer, limits::kMaxBytes));
  r.count = whole(row, "count", file, pointer, limits::kMaxBytes);
  r.type = text(row, "type", file, pointer);
  r.redop = text(row, "redop", file, pointer);
  r.out_of_place = read_result(row, "out_of_place", file, pointer);
  r.in_place = read_result(row, "in_place", file, pointer);
  if (!r.out_of_place && !r.in_place) throw InputError(file, pointer, "neither an out-of-place nor an in-place result");
  return r;
}

// Ranks, nodes and GPU from "config": one "devices" entry per process.
void read_config(const Json& json, const std::string& file, ReadFacts& facts) {
  const auto config = json.find("config");
  if (config == json.end() || !config->is_object()) return;
  const auto devices = config->find("devices");
  if (devices == config->end() || !devices->is_array() || devices->empty()) return;
  const int per_process = static_cast<int>(whole(*config, "nthreads", file, "/config", limits::kMaxGpusPerNode) *
                                           whole(*config, "ngpus", file, "/config", limits::kMaxGpusPerNode));
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const std::string at = pointer_append("/config/devices", i);
    hosts.insert(text((*devices)[i], "hostname", file, at));
    if (i == 0 && (*devices)[i].contains("device_info")) facts.gpu = text((*devices)[i], "device_info", file, at);
  }
  const std::int64_t processes = static_cast<std::int64_t>(devices->size());
  if (processes * per_process > limits::kMaxGpus) {
    throw InputError(file, "/config/devices",
                     fmt::format("{} process(es) x {} GPU(s) is more than the {} GPUs modelled", processes, per_process,
                                 limits::kMaxGpus));
  }
  facts.ranks = Stated<int>{static_cast<int>(processes * per_process), "/config/devices",
                            fmt::format("{} process(es) x {} GPU(s) in /config", processes, per_process)};
  facts.nodes = Stated<int>{static_cast<int>(hosts.size()), "/config/devices",
                            fmt::format("{} host(s) in /config/devices", hosts.size())};
}

}  // namespace

NcclTestsLog parse_nccl_tests_json(const std::string& text_in, const std::string& file, const NcclTestsOptions& options) {
  const Json json = parse_json_text(text_in, file);
  if (!json.is_object() || !json.contains("results")) {
    throw InputError(file, "(root)", "not nccl-tests -J output: no \"results\"");
  }
  ReadFacts facts;
  if (const auto args = json.find("args"); args != json.end() && args->is_array() && !args->empty() &&
                                            (*args)[0].is_string()) {
    const std::string name = collective_of_program((*args)[0].get<std::string>());
    if (!name.empty()) facts.collective = Stated<std::string>{name, "/args/0", "the program name"};
  }
  read_config(json, file, facts);
  if (const auto oob = json.find("out_of_bounds"); oob != json.end() && oob->is_object() && oob->contains("count")) {
    facts.out_of_bounds = Stated<int>{static_cast<int>(whole(*oob, "count", file, "/out_of_bounds", limits::kMaxCount)), "/out_of_bounds/count", ""};
  }
  const Json& results = json.at("results");
  if (!results.is_array()) throw InputError(file, "/results", "expected an array, got " + type_name(results));
  std::vector<ReadRow> rows;
  for (std::size_t i = 0; i < results.size(); ++i) rows.push_back(read_row(results[i], file, pointer_append("/results", i)));
  facts.end_where = "/results";
  return finish_log(std::move(rows), std::move(facts), file, options);
}

}  // namespace dtperf::io::detail
