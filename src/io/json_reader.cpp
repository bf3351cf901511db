#include "dtperf/io/json_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace dtperf::io {

namespace {

// Line and column (1-based) of a byte offset, for syntax errors.
std::string line_and_column(const std::string& text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

// A bound as short as {:g} writes it, or in full where that would round it: 1/1024 GiB is
// 0.0009765625, and "0.000976562" would name as the minimum a value that is refused.
std::string bound_text(double x) {
  const std::string short_form = fmt::format("{:g}", x);
  return std::strtod(short_form.c_str(), nullptr) == x ? short_form : fmt::format("{}", x);
}

std::string range_text(const Range& range) {
  if (range.description != nullptr) return range.description;
  return fmt::format("a number from {}{} to {}", bound_text(range.low), range.low_open ? " (excluded)" : "",
                     bound_text(range.high));
}

bool in_range(double x, const Range& range) {
  if (!std::isfinite(x)) return false;
  // Subnormal magnitudes (5e-324) overflow to infinity once divided into: refused.
  if (x != 0.0 && std::abs(x) < limits::kMinMagnitude) return false;
  return range.contains(x);
}

std::string shown(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

std::string type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "a number";
    default: return "a value";
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open the file for reading");
  // Read at most the limit and one byte more: /dev/zero or a runaway file stops there.
  std::string content;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<char> buffer(kChunk);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(kChunk));
    content.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (content.size() > static_cast<std::size_t>(limits::kMaxFileBytes)) {
      throw InputError(path, "", fmt::format("larger than the limit of {} MiB for an input file",
                                             limits::kMaxFileBytes >> 20));
    }
  }
  if (in.bad()) throw InputError(path, "", "read error");
  // A UTF-8 byte order mark (what some Windows editors write first) is not content: without
  // this, a JSON log or calibration with one was taken for a text log and a number on the
  // first line of a list read as not a number.
  if (content.starts_with(kUtf8ByteOrderMark)) content.erase(0, kUtf8ByteOrderMark.size());
  return content;
}

Json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at
    // line 3, column 5: "; keep only the reason after that.
    std::string reason = e.what();
    if (const auto colon = reason.find(": "); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    throw InputError(file, line_and_column(text, offset), "malformed JSON: " + reason);
  } catch (const Json::out_of_range& e) {
    // A number beyond double range ("1e999"): nlohmann names the number but not where it
    // is; its first occurrence in the text is the one the parser stopped at.
    const std::string what = e.what();
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    const std::string number = open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const std::size_t offset = number.empty() ? std::string::npos : text.find(number);
    const std::string shown = number.size() > 20 ? number.substr(0, 20) + "..." : number;
    throw InputError(file, offset == std::string::npos ? "" : line_and_column(text, offset),
                     fmt::format("the number {} is beyond the range of a double", shown));
  }
}

Json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

std::string pointer_append(const std::string& pointer, const std::string& key) {
  std::string escaped;
  for (const char c : key) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return pointer + "/" + escaped;
}

std::string pointer_append(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

double check_number(const Json& value, const std::string& file, const std::string& pointer,
                    const Range& range) {
  if (!value.is_number()) {
    throw InputError(file, pointer, fmt::format("expected {}, got {}", range_text(range), type_name(value)));
  }
  const double x = value.get<double>();
  if (!in_range(x, range)) {
    throw InputError(file, pointer, fmt::format("expected {}, got {}", range_text(range), shown(value)));
  }
  return x;
}

std::pair<double, double> number_pair(const Json& value, const std::string& file,
                                      const std::string& pointer, const Range& first, const Range& second) {
  if (!value.is_array() || value.size() != 2) {
    throw InputError(file, pointer, fmt::format("expected a pair [x, y], got {}", shown(value)));
  }
  return {check_number(value[0], file, pointer_append(pointer, 0), first),
          check_number(value[1], file, pointer_append(pointer, 1), second)};
}

ObjectReader::ObjectReader(const Json& value, std::string file, std::string pointer)
    : value_(value), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!value_.is_object()) {
    throw InputError(file_, pointer_.empty() ? "(root)" : pointer_,
                     "expected an object, got " + type_name(value_));
  }
}

void ObjectReader::fail(const std::string& key, const std::string& reason) const {
  throw InputError(file_, pointer_of(key), reason);
}

void ObjectReader::mark(const std::string& key) {
  if (std::find(read_.begin(), read_.end(), key) == read_.end()) read_.push_back(key);
}

const Json* ObjectReader::find(const std::string& key) {
  mark(key);
  const auto it = value_.find(key);
  return it == value_.end() ? nullptr : &*it;
}

const Json& ObjectReader::get(const std::string& key) {
  const Json* value = find(key);
  if (value == nullptr) {
    // A misspelt key is the usual cause: name it.
    std::vector<std::string> present;
    for (const auto& item : value_.items()) present.push_back(item.key());
    const std::string typo = closest_name(key, present);
    fail(key, "missing required field '" + key + "'" + (typo.empty() ? "" : " (is '" + typo + "' a typo?)"));
  }
  return *value;
}

bool ObjectReader::has(const std::string& key) const { return value_.contains(key); }

double ObjectReader::number(const std::string& key, const Range& range) {
  return check_number(get(key), file_, pointer_of(key), range);
}

std::optional<double> ObjectReader::optional_number(const std::string& key, const Range& range) {
  const Json* value = find(key);
  if (value == nullptr) return std::nullopt;
  return check_number(*value, file_, pointer_of(key), range);
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t min_value, std::int64_t max_value) {
  const Json& value = get(key);
  const std::string wanted = fmt::format("an integer from {} to {}", min_value, max_value);
  if (!value.is_number_integer()) {
    fail(key, fmt::format("expected {}, got {}", wanted, value.is_number() ? shown(value) : type_name(value)));
  }
  // Unsigned values above the int64 range would wrap: compare before converting.
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max_value)) {
    fail(key, fmt::format("expected {}, got {} (over the limit)", wanted, shown(value)));
  }
  const std::int64_t x = value.get<std::int64_t>();
  if (x < min_value || x > max_value) fail(key, fmt::format("expected {}, got {}", wanted, x));
  return x;
}

std::optional<std::int64_t> ObjectReader::optional_integer(const std::string& key, std::int64_t min_value,
                                                           std::int64_t max_value) {
  if (!has(key)) {
    mark(key);
    return std::nullopt;
  }
  return integer(key, min_value, max_value);
}

std::string ObjectReader::string(const std::string& key) {
  const Json& value = get(key);
  if (!value.is_string()) fail(key, "expected a string, got " + type_name(value));
  return value.get<std::string>();
}

bool ObjectReader::boolean(const std::string& key) {
  const Json& value = get(key);
  if (!value.is_boolean()) fail(key, "expected true or false, got " + type_name(value));
  return value.get<bool>();
}

std::optional<std::string> ObjectReader::optional_string(const std::string& key) {
  if (!has(key)) {
    mark(key);
    return std::nullopt;
  }
  return string(key);
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& choices) {
  const std::string value = string(key);
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    fail(key, fmt::format("unknown value '{}'{}; expected one of: {}", value,
                          did_you_mean(value, choices), join_names(choices)));
  }
  return value;
}

std::vector<std::string> ObjectReader::string_list(const std::string& key) {
  const Json& value = array(key);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      throw InputError(file_, pointer_append(pointer_of(key), i),
                       "expected a string, got " + type_name(value[i]));
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

ObjectReader ObjectReader::object(const std::string& key) {
  const Json& value = get(key);
  return ObjectReader(value, file_, pointer_of(key));
}

std::optional<ObjectReader> ObjectReader::optional_object(const std::string& key) {
  const Json* value = find(key);
  if (value == nullptr) return std::nullopt;
  return ObjectReader(*value, file_, pointer_of(key));
}

const Json& ObjectReader::array(const std::string& key) {
  const Json& value = get(key);
  if (!value.is_array()) fail(key, "expected an array, got " + type_name(value));
  return value;
}

const Json* ObjectReader::optional_array(const std::string& key) {
  if (!has(key)) {
    mark(key);
    return nullptr;
  }
  return &array(key);
}

std::string ObjectReader::expect_schema(const std::vector<std::string>& schemas) {
  const std::string given = string("schema");
  if (std::find(schemas.begin(), schemas.end(), given) == schemas.end()) {
    std::string reads;
    for (std::size_t i = 0; i < schemas.size(); ++i) {
      reads += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == schemas.size() ? " and " : ", ", schemas[i]);
    }
    fail("schema", fmt::format("unsupported schema '{}'; this dtperf reads {}", given, reads));
  }
  return given;
}

void ObjectReader::finish() const {
  for (const auto& [key, value] : value_.items()) {
    if (std::find(read_.begin(), read_.end(), key) == read_.end()) {
      throw InputError(file_, pointer_of(key),
                       fmt::format("unknown key '{}'{}; expected one of: {}", key,
                                   did_you_mean(key, read_), join_names(read_)));
    }
  }
}

}  // namespace dtperf::io
