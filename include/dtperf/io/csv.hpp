#pragma once
// CSV (RFC 4180): fields with a comma, quote or line break are quoted, quotes doubled.
// Reports become CSV from the same JSON they print: each record (an object) is a row,
// nested objects are flattened into dotted column names ("at_line_rate.iteration_ms"),
// arrays inside a record become one cell holding their JSON text, null is an empty cell.
#include <string>
#include <string_view>

#include "dtperf/io/json_reader.hpp"

namespace dtperf::io {

/// Appends one field, quoted where it must be.
void append_csv_field(std::string& out, std::string_view field);

/// `records`: an array of objects (one row each) or one object (one row). The columns
/// are every key met, in the order first met; a record without one leaves it empty.
/// std::invalid_argument if `records` is neither.
std::string csv_from_records(const Json& records);

}  // namespace dtperf::io
