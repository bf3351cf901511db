#include "dtperf/io/model_files.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/zoo.hpp"

namespace dtperf::io {

namespace {

// A layer's work and saved activations per sample: up to 10^9 GFLOP (10^18 FLOP) and
// 10^9 MB (1 PB), so that a layer's time and memory at the largest batch stay finite.
constexpr Range kGflopPerSample{0.0, 1e9};
constexpr Range kMBPerSample{0.0, 1e9};
// A timing log's wait per tensor, us: within limits::kTimeUs either way (a negative wait
// counts as 0). A reduction's cost, s: up to 10^4 s, as limits::kTimeMs. Iteration times
// for resampling, in any one unit: 10^-9 to 10^10 (only their ratios to the mean count).
constexpr Range kWaitUs{-limits::kTimeUs.high, limits::kTimeUs.high};
constexpr Range kReductionS{0.0, limits::kTimeMs.high * 1e-3};
constexpr Range kIterationTime{1e-9, 1e10};

std::string line_ref(std::size_t line) { return fmt::format("line {}", line); }

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// Splits text into lines, dropping '\r'. Keeps empty lines so numbering stays true.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// Long fields are cut in messages (a 1 MB line stays one short line).
std::string shown(const std::string& s) { return s.size() <= 40 ? s : s.substr(0, 36) + "..."; }

// Adds a tensor's parameters to the model's total, refusing a total past the limit.
void add_params(std::int64_t& total, std::int64_t params, const std::function<void(const std::string&)>& fail) {
  if (params > limits::kMaxModelParams - total) {
    fail(fmt::format("the model's parameters add up to more than {:g}, the limit for a model",
                     static_cast<double>(limits::kMaxModelParams)));
  }
  total += params;
}

double parse_double(const std::string& field, const std::string& file, std::size_t line,
                    const char* what, const Range& range) {
  const std::string s = trim(field);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value)) {
    throw InputError(file, line_ref(line), fmt::format("{} '{}' is not a number", what, shown(s)));
  }
  if (!range.contains(value) || (value != 0.0 && std::abs(value) < limits::kMinMagnitude)) {
    throw InputError(file, line_ref(line),
                     fmt::format("{} {} is outside [{:g}, {:g}]", what, shown(s), range.low, range.high));
  }
  return value;
}

std::int64_t parse_count(const std::string& field, const std::string& file, std::size_t line,
                         const char* what) {
  const std::string s = trim(field);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    throw InputError(file, line_ref(line), fmt::format("{} '{}' is not an integer", what, shown(s)));
  }
  if (value <= 0) {
    throw InputError(file, line_ref(line), fmt::format("{} must be positive, got {}", what, value));
  }
  return value;
}

std::pair<std::string, std::string> split_pair(const std::string& text, const std::string& file,
                                               std::size_t line, const char* expected) {
  const auto comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    throw InputError(file, line_ref(line),
                     fmt::format("expected '{}', got '{}'", expected, trim(text)));
  }
  return {text.substr(0, comma), text.substr(comma + 1)};
}

std::string stem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* suffix : {".json", ".log", ".bk"}) {
    if (name.ends_with(suffix)) name.resize(name.size() - std::string_view(suffix).size());
  }
  return name;
}

}  // namespace

ModelSpec parse_timing_log(const std::string& text, const std::string& file) {
  const std::vector<std::string> lines = split_lines(text);
  if (lines.size() < 3) {
    throw InputError(file, line_ref(lines.size() + 1),
                     "truncated: a timing log starts with a comment line, the number of batches "
                     "and the number of tensors");
  }
  const std::int64_t batches = parse_count(lines[1], file, 2, "number of batches");
  const std::int64_t tensors = parse_count(lines[2], file, 3, "number of tensors");
  if (tensors > limits::kMaxTensors) {
    throw InputError(file, line_ref(3), fmt::format("{} tensors is over the limit of {} per model", tensors,
                                                    limits::kMaxTensors));
  }
  ModelSpec model;
  model.name = stem(file);
  model.description = fmt::format("per-layer backward timings from {} ({} tensors, mean of {} batch{})",
                                  file, tensors, batches, batches == 1 ? "" : "es");
  model.citation = "measured per-layer log ([NET] .bk.log format)";
  // Grown line by line: memory follows the file's length, not the count it declares.
  std::vector<double> wait_sum_s;
  std::int64_t total_params = 0;

  std::size_t index = 3;  // 0-based line index of the next data line
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t t = 0; t < tensors; ++t, ++index) {
      const std::size_t line = index + 1;
      if (index >= lines.size() || trim(lines[index]).empty()) {
        throw InputError(file, line_ref(line),
                         fmt::format("truncated: expected {} tensors x {} batches, the data ends "
                                     "at tensor {} of batch {}", tensors, batches, t + 1, b + 1));
      }
      const auto [wait_text, bytes_text] = split_pair(lines[index], file, line, "wait_us,bytes");
      const double wait_us = parse_double(wait_text, file, line, "wait_us", kWaitUs);
      const std::int64_t bytes = parse_count(bytes_text, file, line, "bytes");
      if (bytes > limits::kMaxBytes) {
        throw InputError(file, line_ref(line), fmt::format("{} bytes is over the limit of 1 PiB for a tensor", bytes));
      }
      if (bytes % 4 != 0) {
        throw InputError(file, line_ref(line),
                         fmt::format("{} bytes is not a whole number of 4-byte (fp32) gradients", bytes));
      }
      if (b == 0) {
        model.tensors.push_back(TensorSpec{});
        model.tensors.back().name = fmt::format("tensor{}", t);
        model.tensors.back().params = bytes / 4;
        add_params(total_params, bytes / 4, [&](const std::string& reason) { throw InputError(file, line_ref(line), reason); });
        wait_sum_s.push_back(0.0);
      }
      const TensorSpec& spec = model.tensors[static_cast<std::size_t>(t)];
      if (spec.params != bytes / 4) {
        throw InputError(file, line_ref(line),
                         fmt::format("tensor {} has {} bytes here but {} bytes in the first batch",
                                     t + 1, bytes, spec.params * 4));
      }
      wait_sum_s[static_cast<std::size_t>(t)] += std::max(0.0, wait_us) * 1e-6;
    }
  }
  for (std::size_t i = index; i < lines.size(); ++i) {
    if (!trim(lines[i]).empty()) {
      throw InputError(file, line_ref(i + 1),
                       fmt::format("unexpected data after the {} declared tensors", tensors));
    }
  }
  for (std::size_t t = 0; t < model.tensors.size(); ++t) {
    model.tensors[t].measured_backward_s = wait_sum_s[t] / static_cast<double>(batches);
  }
  return model;
}

ModelSpec read_timing_log(const std::string& path) { return parse_timing_log(read_text_file(path), path); }

ModelSpec parse_layer_json(const std::string& text, const std::string& file) {
  const Json json = parse_json_text(text, file);
  ObjectReader r(json, file, "");
  r.expect_schema(kModelSchema);
  ModelSpec model;
  model.name = r.string("name");
  model.description = r.optional_string("description").value_or("layer file " + file);
  model.citation = r.optional_string("citation").value_or(file);
  model.sample_unit = r.optional_string("sample_unit").value_or("sample");
  model.default_batch_per_gpu = r.optional_number("batch_per_gpu", limits::kSamples).value_or(32.0);
  model.param_bytes = static_cast<int>(r.optional_integer("param_bytes", 1, 16).value_or(4));
  if (r.has("optimizer")) {
    model.default_optimizer = *parse_name<Optimizer>(r.choice("optimizer", {"sgd", "sgd-momentum", "adam"}));
  }
  if (auto measured = r.optional_object("measured")) {
    model.measured_iteration_s = measured->optional_number("single_gpu_iteration_ms", limits::kTimeMs);
    if (model.measured_iteration_s) *model.measured_iteration_s *= 1e-3;
    model.measured_batch_per_gpu = measured->optional_number("batch_per_gpu", limits::kSamples);
    if (auto ms = measured->optional_number("forward_ms", limits::kTimeMs)) model.measured_forward_s = *ms * 1e-3;
    if (auto ms = measured->optional_number("optimizer_ms", limits::kTimeOrZeroMs)) model.measured_optimizer_s = *ms * 1e-3;
    // What a collector records beside them, for the reader (checked, not used).
    measured->optional_number("backward_ms", limits::kTimeOrZeroMs);
    const auto p10 = measured->optional_number("iteration_p10_ms", limits::kTimeMs);
    const auto p90 = measured->optional_number("iteration_p90_ms", limits::kTimeMs);
    if (p10 && p90 && *p10 > *p90) measured->fail("iteration_p10_ms", "p10 is above p90");
    measured->optional_integer("iterations", 1);
    model.measured_saved_bytes_per_sample = measured->optional_number("saved_bytes_per_sample", limits::kBytes);
    model.measured_device = measured->optional_string("device").value_or("");
    measured->optional_string("tool");
    measured->finish();
  }
  const Json& layers = r.array("layers");
  if (layers.empty()) r.fail("layers", "a model needs at least one layer");
  if (layers.size() > static_cast<std::size_t>(limits::kMaxTensors)) {
    r.fail("layers", fmt::format("{} layers is over the limit of {} tensors per model", layers.size(),
                                 limits::kMaxTensors));
  }
  std::int64_t total_params = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    ObjectReader l(layers[i], file, pointer_append(r.pointer_of("layers"), i));
    TensorSpec t;
    t.name = l.optional_string("name").value_or(fmt::format("layer{}", i));
    t.params = l.integer("params", 1, limits::kMaxParams);
    add_params(total_params, t.params, [&](const std::string& reason) { l.fail("params", reason); });
    t.forward_flops_per_sample = l.optional_number("forward_gflop_per_sample", kGflopPerSample).value_or(0.0) * 1e9;
    t.backward_flops_per_sample =
        l.optional_number("backward_gflop_per_sample", kGflopPerSample).value_or(2.0 * t.forward_flops_per_sample / 1e9) * 1e9;
    t.forward_memory_bytes_per_sample =
        l.optional_number("forward_memory_MB_per_sample", kMBPerSample).value_or(0.0) * 1e6;
    const std::string kind = l.has("kind") ? l.choice("kind", {"gemm", "elementwise"}) : "gemm";
    t.forward_gemm_flops_per_sample = kind == "gemm" ? t.forward_flops_per_sample : 0.0;
    // A layer is one operator: a GEMM moves its own traffic.
    t.forward_gemm_memory_bytes_per_sample = kind == "gemm" ? t.forward_memory_bytes_per_sample : 0.0;
    if (const auto us = l.optional_number("backward_us", limits::kTimeOrZeroUs)) t.measured_backward_s = *us * 1e-6;
    // A collector's record of the tensor's dtype and the DDP bucket PyTorch assigns it.
    l.optional_string("dtype");
    l.optional_integer("ddp_bucket", 0);
    l.finish();
    if (i > 0 && t.measured_backward_s.has_value() != model.tensors.front().measured_backward_s.has_value()) {
      throw InputError(file, l.pointer_of("backward_us"),
                       "give backward_us for every layer or for none (layer 0 " +
                           std::string(model.tensors.front().measured_backward_s ? "has" : "has not") + " it)");
    }
    model.tensors.push_back(std::move(t));
  }
  r.finish();
  return model;
}

ModelSpec read_layer_file(const std::string& path) { return parse_layer_json(read_text_file(path), path); }

ModelSpec load_model(const std::string& name_or_path) {
  if (name_or_path.ends_with(".json")) return read_layer_file(name_or_path);
  if (name_or_path.ends_with(".log")) return read_timing_log(name_or_path);
  if (auto model = zoo_model(name_or_path)) return *model;
  if (auto model = sized_model(name_or_path)) return *model;
  std::vector<std::string> names;
  for (const auto& entry : model_zoo()) names.emplace_back(entry.name);
  throw InputError::in_input("model",
                   fmt::format("unknown model '{}'{}; built-in models: {} (or a model by size, gpt:layers=L,d=D,... "
                               "or llama:layers=L,d=D,..., or a .json layer file or a .log timing log)",
                               name_or_path, did_you_mean(name_or_path, names), join_names(names)));
}

std::vector<std::pair<double, double>> parse_reduction_log(const std::string& text, const std::string& file) {
  std::vector<std::pair<double, double>> points;
  const std::vector<std::string> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty() || trim(lines[i]).front() == '#') continue;
    const auto [bytes_text, seconds_text] = split_pair(lines[i], file, i + 1, "bytes,seconds");
    const double bytes = parse_double(bytes_text, file, i + 1, "bytes", limits::kBytes);
    const double seconds = parse_double(seconds_text, file, i + 1, "seconds", kReductionS);
    if (!points.empty() && bytes <= points.back().first) {
      throw InputError(file, line_ref(i + 1), "sizes must increase from line to line");
    }
    points.emplace_back(bytes, seconds);
  }
  if (points.empty()) throw InputError(file, "", "no 'bytes,seconds' lines found");
  return points;
}

std::vector<double> parse_iteration_times(const std::string& text, const std::string& file) {
  std::vector<double> times;
  const std::vector<std::string> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    const double t = parse_double(line, file, i + 1, "iteration time", kIterationTime);
    times.push_back(t);
  }
  if (times.size() < 2) {
    throw InputError(file, "", fmt::format("expected at least two measured iteration times, found {}", times.size()));
  }
  return times;
}

std::vector<double> read_iteration_times(const std::string& path) {
  return parse_iteration_times(read_text_file(path), path);
}

std::vector<std::pair<double, double>> read_reduction_log(const std::string& path) {
  return parse_reduction_log(read_text_file(path), path);
}

}  // namespace dtperf::io
