#include "dtperf/io/csv.hpp"

#include <map>
#include <stdexcept>
#include <vector>

namespace dtperf::io {

namespace {

using Row = std::map<std::string, std::string>;

std::string cell(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);  // numbers, booleans, arrays
}

void flatten(const Json& object, const std::string& prefix, Row& row, std::vector<std::string>& columns,
             std::map<std::string, bool>& known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      flatten(*it, key, row, columns, known);
      continue;
    }
    if (!known[key]) {
      known[key] = true;
      columns.push_back(key);
    }
    row[key] = cell(*it);
  }
}

}  // namespace

void append_csv_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (const char ch : field) {
    if (ch == '"') out.push_back('"');
    out.push_back(ch);
  }
  out.push_back('"');
}

std::string csv_from_records(const Json& records) {
  if (!records.is_array() && !records.is_object()) throw std::invalid_argument("CSV records must be objects");
  std::vector<Row> rows;
  std::vector<std::string> columns;
  std::map<std::string, bool> known;
  const auto add = [&](const Json& record) {
    if (!record.is_object()) throw std::invalid_argument("CSV records must be objects");
    rows.emplace_back();
    flatten(record, "", rows.back(), columns, known);
  };
  if (records.is_object()) {
    add(records);
  } else {
    for (const Json& record : records) add(record);
  }
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out.push_back(',');
    append_csv_field(out, columns[i]);
  }
  out.push_back('\n');
  for (const Row& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) out.push_back(',');
      const auto it = row.find(columns[i]);
      if (it != row.end()) append_csv_field(out, it->second);
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace dtperf::io
