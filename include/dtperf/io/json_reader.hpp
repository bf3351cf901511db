#pragma once
// Strict reading of JSON input. Every value is read through an ObjectReader that knows
// the file and the JSON pointer of what it reads, checks type and range, and rejects
// keys nobody asked for (with a "did you mean"). All failures are InputError.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtperf/limits.hpp"
#include "dtperf/error.hpp"

namespace dtperf::io {

using Json = nlohmann::json;

/// Parses `text`; a syntax error names the line and column.
Json parse_json_text(const std::string& text, const std::string& file);
/// Reads and parses a file; a missing file is an InputError too.
Json read_json_file(const std::string& path);
/// The UTF-8 byte order mark some editors write at the start of a text file.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";
/// Reads a whole text file (InputError if it cannot be read), without a leading UTF-8 byte
/// order mark.
std::string read_text_file(const std::string& path);

/// Appends a key to a JSON pointer, escaping '~' and '/' (RFC 6901).
std::string pointer_append(const std::string& pointer, const std::string& key);
std::string pointer_append(const std::string& pointer, std::size_t index);

// The generic ranges (Range::positive...) and the physical ones (limits::kNicGbps...).
using limits::Range;

class ObjectReader {
 public:
  /// Throws unless `value` is an object.
  ObjectReader(const Json& value, std::string file, std::string pointer);

  bool has(const std::string& key) const;

  double number(const std::string& key, const Range& range = Range::any);
  std::optional<double> optional_number(const std::string& key, const Range& range = Range::any);
  /// An integer min_value <= x <= max_value (default: limits::kMaxCount, safe as an int).
  std::int64_t integer(const std::string& key, std::int64_t min_value,
                       std::int64_t max_value = limits::kMaxCount);
  std::optional<std::int64_t> optional_integer(const std::string& key, std::int64_t min_value,
                                               std::int64_t max_value = limits::kMaxCount);
  std::string string(const std::string& key);
  bool boolean(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  /// A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices);
  std::vector<std::string> string_list(const std::string& key);
  ObjectReader object(const std::string& key);
  std::optional<ObjectReader> optional_object(const std::string& key);
  /// The array at `key` (type-checked); read its elements with element helpers.
  const Json& array(const std::string& key);
  const Json* optional_array(const std::string& key);

  /// Reads "schema" and refuses any not in `schemas` (newest first, as the message lists
  /// them); returns the one given.
  std::string expect_schema(const std::vector<std::string>& schemas);
  std::string expect_schema(const std::string& schema) { return expect_schema(std::vector<std::string>{schema}); }

  /// Rejects every key that was not read.
  void finish() const;

  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  std::string pointer_of(const std::string& key) const { return pointer_append(pointer_, key); }
  [[noreturn]] void fail(const std::string& key, const std::string& reason) const;

 private:
  void mark(const std::string& key);
  const Json& get(const std::string& key);
  const Json* find(const std::string& key);

  const Json& value_;
  std::string file_;
  std::string pointer_;
  std::vector<std::string> read_;
};

/// Checks a number against a range; on failure throws at `pointer`.
double check_number(const Json& value, const std::string& file, const std::string& pointer,
                    const Range& range);
/// A [x, y] pair of numbers (e.g. a measured point).
std::pair<double, double> number_pair(const Json& value, const std::string& file,
                                      const std::string& pointer, const Range& first, const Range& second);

/// A short description of a JSON value's type for messages ("a string", "null").
std::string type_name(const Json& value);

}  // namespace dtperf::io
