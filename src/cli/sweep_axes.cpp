#include "sweep_axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>

#include "dtperf/error.hpp"
#include "dtperf/topology.hpp"

namespace dtperf::cli {

namespace {

const std::vector<std::string> kAxisNames = {"model",         "scheme",      "nodes",
                                             "gpus-per-node", "nic-gbps",    "inter-latency-us",
                                             "batch-per-gpu", "compression", "compute-cv"};

[[noreturn]] void refuse(const std::string& axis, const std::string& reason) {
  throw InputError::in_input("vary", axis.empty() ? reason : fmt::format("{}: {}", axis, reason));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// The model axis: comma-separated names, where a model by size keeps its own key=value
// pairs ("model=resnet50,gpt:layers=24,d=2048" is two models): a piece with '=' and no
// ':' continues the model before it.
std::vector<std::string> model_values(const std::string& values) {
  std::vector<std::string> models;
  for (std::string& piece : split(values, ',')) {
    const bool continues = piece.find('=') != std::string::npos && piece.find(':') == std::string::npos;
    if (continues && !models.empty() && models.back().find(':') != std::string::npos) {
      models.back() += "," + piece;
    } else {
      models.push_back(std::move(piece));
    }
  }
  return models;
}

double number(const std::string& axis, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    refuse(axis, fmt::format("'{}' is not a number", text));
  }
  return value;
}

void push(const std::string& axis, std::vector<double>& out, double value) {
  if (out.size() >= kMaxAxisValues) refuse(axis, fmt::format("more than {} values", kMaxAxisValues));
  out.push_back(value);
}

void expand_item(const std::string& axis, const std::string& item, std::vector<double>& out) {
  const std::vector<std::string> parts = split(item, ':');
  if (parts.size() == 1) {
    push(axis, out, number(axis, item));
    return;
  }
  if (parts.size() > 3) refuse(axis, fmt::format("'{}': a range is START:END[:STEP] or START:END:xFACTOR", item));
  const double start = number(axis, parts[0]);
  const double end = number(axis, parts[1]);
  if (end < start) refuse(axis, fmt::format("'{}': the range ends before it starts", item));
  const double slack = 1e-9 * std::max(std::abs(start), std::abs(end));
  if (parts.size() == 3 && !parts[2].empty() && parts[2].front() == 'x') {
    const double factor = number(axis, parts[2].substr(1));
    if (!(factor > 1.0)) refuse(axis, fmt::format("'{}': the factor must be greater than 1", item));
    if (!(start > 0.0)) refuse(axis, fmt::format("'{}': a geometric range starts above 0", item));
    for (int k = 0;; ++k) {
      const double value = start * std::pow(factor, k);
      if (value > end + slack) break;
      push(axis, out, value);
    }
    return;
  }
  const double step = parts.size() == 3 ? number(axis, parts[2]) : 1.0;
  if (!(step > 0.0)) refuse(axis, fmt::format("'{}': the step must be greater than 0", item));
  if ((end - start) / step >= static_cast<double>(kMaxAxisValues)) {
    refuse(axis, fmt::format("'{}': more than {} values", item, kMaxAxisValues));
  }
  for (std::int64_t k = 0;; ++k) {
    const double value = start + static_cast<double>(k) * step;  // no accumulated rounding
    if (value > end + slack) break;
    push(axis, out, value);
  }
}

std::vector<int> integers(const std::string& axis, const std::vector<double>& values) {
  std::vector<int> out;
  for (const double v : values) {
    if (v != std::round(v) || v < 1 || v > 2'147'483'647.0) {
      refuse(axis, fmt::format("{} is not a whole number of at least 1", v));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<Scheme> schemes(const std::string& values) {
  const std::vector<std::string> known = scheme_names();
  std::vector<Scheme> out;
  for (const std::string& name : split(values, ',')) {
    if (name == "all") {
      for (const std::string& k : known) {
        if (std::find(out.begin(), out.end(), *parse_scheme(k)) != out.end()) refuse("scheme", fmt::format("'{}' is listed twice", k));
        out.push_back(*parse_scheme(k));
      }
      continue;
    }
    const auto scheme = parse_scheme(name);
    if (!scheme) {
      refuse("scheme", fmt::format("unknown scheme '{}'{}; expected all or one of: {}", name, did_you_mean(name, known),
                                   join_names(known)));
    }
    // Each scheme once ("all,ring" lists ring twice): the same rows would be written twice.
    if (std::find(out.begin(), out.end(), *scheme) != out.end()) refuse("scheme", fmt::format("'{}' is listed twice", name));
    out.push_back(*scheme);
  }
  return out;
}

// Each value once: a sweep that lists one twice would write the same rows twice. The first
// repeat in the order given is named; O(n log n), for axes of up to kMaxAxisValues.
template <typename T, typename Name>
void check_distinct(const std::string& axis, const std::vector<T>& values, Name name) {
  std::set<T> seen;
  for (const T& v : values) {
    if (!seen.insert(v).second) refuse(axis, fmt::format("{} is listed twice", name(v)));
  }
}

std::string shown(double v) { return fmt::format("{}", v); }

}  // namespace

std::vector<double> expand_numbers(const std::string& axis, const std::string& values) {
  std::vector<double> out;
  for (const std::string& item : split(values, ',')) expand_item(axis, item, out);
  return out;
}

AxisSpecs parse_axes(const std::vector<std::string>& vary) {
  AxisSpecs specs;
  SweepAxes& a = specs.axes;
  std::set<std::string> seen;
  for (const std::string& spec : vary) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos) refuse("", fmt::format("'{}' is not NAME=VALUES", spec));
    const std::string name = spec.substr(0, eq);
    const std::string values = spec.substr(eq + 1);
    if (std::find(kAxisNames.begin(), kAxisNames.end(), name) == kAxisNames.end()) {
      refuse("", fmt::format("unknown axis '{}'{}; axes: {}", name, did_you_mean(name, kAxisNames), join_names(kAxisNames)));
    }
    if (!seen.insert(name).second) refuse(name, "the axis is given twice");
    if (values.empty()) refuse(name, "no values");
    if (name == "model") {
      specs.models = model_values(values);
      check_distinct(name, specs.models, [](const std::string& m) { return "'" + m + "'"; });
    } else if (name == "scheme") {
      a.schemes = schemes(values);
    } else if (name == "nodes" || name == "gpus-per-node") {
      std::vector<int>& counts = name == "nodes" ? a.nodes : a.gpus_per_node;
      counts = integers(name, expand_numbers(name, values));
      check_distinct(name, counts, [](int v) { return std::to_string(v); });
    } else {
      std::vector<double>& numbers = name == "nic-gbps"           ? a.nic_gbps
                                     : name == "inter-latency-us" ? a.inter_latency_us
                                     : name == "batch-per-gpu"    ? a.batch_per_gpu
                                     : name == "compression"      ? a.compression_ratio
                                                                  : a.compute_cv;
      numbers = expand_numbers(name, values);
      check_distinct(name, numbers, shown);
    }
  }
  return specs;
}

}  // namespace dtperf::cli
