#pragma once
// Tables, JSON records and CSV from one list of columns. A column says once its table
// header and unit, its JSON key (which carries the value's unit: iteration_ms,
// inter_bytes_per_node) and how to get the value from a row, so a quantity is named and
// converted in one place for every format:
//
//   const Columns<RatePoint> kRates = {
//       {"NIC-rate", "Gbit/s", "nic_gbps", [](const RatePoint& p) { return Cell(p.nic_gbps); }, decimals(1)},
//       ...};
//   table(kRates, points)   -> "#  NIC-rate ...\n#  (Gbit/s) ...\n       1.0 ...\n"
//   records(kRates, points) -> [{"nic_gbps": 1.0, ...}, ...]   (CSV: csv.hpp, from these)
//
// A column with no header is JSON's only; one with no key is the table's only. The table
// shows a number as `shown` says (a fraction as a percentage, bytes as MB), or the
// column's own text. A missing value is null in JSON and "-" in a
// table. The sweep's rows stream and keep their fixed-width writer (sweep_rows.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "dtperf/io/json_reader.hpp"
#include "dtperf/io/table.hpp"

namespace dtperf::io {

/// One value: none (JSON null, table "-"), a number (a double or an integer, which JSON
/// prints as such), a truth value, or text.
using Cell = std::variant<std::monostate, double, std::int64_t, bool, std::string>;

/// An optional number as a cell (none when empty).
inline Cell maybe(const std::optional<double>& value) { return value ? Cell(*value) : Cell(); }

/// How a table prints a number: value * factor, or value / factor, with `decimals`
/// decimals (dividing, bytes / 1e6 is exactly the MB a division gives).
struct Shown {
  double factor = 1.0;
  bool divides = false;
  int decimals = 2;
};
inline constexpr Shown decimals(int digits) { return {1.0, false, digits}; }
inline constexpr Shown per(double divisor, int digits) { return {divisor, true, digits}; }
inline constexpr Shown as_percent(int digits = 1) { return {100.0, false, digits}; }

template <class Row>
struct Column {
  std::string header;                        // table; "" for JSON only
  std::string unit;                          // table: "(unit)"; "" for none
  std::string key;                           // JSON and CSV; "" for the table only
  std::function<Cell(const Row&)> value;     // in the key's unit
  Shown shown{};                             // how the table prints a number
  std::function<std::string(const Row&)> text{};  // the table's cell, when not `value` shown
  bool left = false;                         // left-aligned in the table
};

template <class Row>
using Columns = std::vector<Column<Row>>;

/// A cell as JSON.
Json cell_json(const Cell& cell);
/// A cell as a table prints it: numbers as `shown` says (integers as they are), text as
/// it is, true/false as yes/no, none as "-".
std::string cell_text(const Cell& cell, const Shown& shown);

/// One row as a JSON object of the columns with a key.
template <class Row>
Json record(const Columns<Row>& columns, const Row& row) {
  Json json = Json::object();
  for (const Column<Row>& c : columns) {
    if (!c.key.empty()) json[c.key] = cell_json(c.value(row));
  }
  return json;
}

/// Rows as a JSON array of records.
template <class Row>
Json records(const Columns<Row>& columns, std::span<const Row> rows) {
  Json json = Json::array();
  for (const Row& row : rows) json.push_back(record(columns, row));
  return json;
}

/// Rows as a table (io/table.hpp) of the columns with a header.
template <class Row>
std::string table(const Columns<Row>& columns, std::span<const Row> rows) {
  std::vector<Table::Column> heads;
  for (const Column<Row>& c : columns) {
    if (!c.header.empty()) heads.push_back({c.header, c.unit, c.left});
  }
  Table out(heads);
  for (const Row& row : rows) {
    std::vector<std::string> cells;
    for (const Column<Row>& c : columns) {
      if (c.header.empty()) continue;
      cells.push_back(c.text ? c.text(row) : cell_text(c.value(row), c.shown));
    }
    out.add_row(std::move(cells));
  }
  return out.render();
}

/// One row as a table.
template <class Row>
std::string table(const Columns<Row>& columns, const Row& row) {
  return table(columns, std::span<const Row>(&row, 1));
}

}  // namespace dtperf::io
