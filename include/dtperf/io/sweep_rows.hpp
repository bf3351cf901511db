#pragma once
// Sweep rows as text, streamed: JSON lines, CSV or a fixed-width table, all three from one
// list of columns (sweep_rows.cpp), so a column added there appears in every format with
// the same name and unit. Keys carry their units (iteration_ms, nic_gbps). A value a row
// does not have (the times of a topology that does not fit; quantiles without variable
// compute) is null in JSON, empty in CSV and "-" in the table.
#include <string>
#include <vector>

#include "dtperf/analysis/sweep.hpp"

namespace dtperf::io {

enum class RowFormat { table, jsonl, csv };

/// Writes the rows of one grid in one format. JSON lines and CSV carry every column; the
/// table, for people, the axes the grid varies, the times, and the reason a topology does
/// not fit.
class SweepWriter {
 public:
  SweepWriter(RowFormat format, const SweepGrid& grid);

  /// What comes before the first row: the CSV header line, the table's two header lines
  /// (names and units, starting with '#'), nothing for JSON lines.
  std::string header() const;
  /// Appends one row and its newline.
  void append(std::string& out, const SweepRow& row) const;

 private:
  RowFormat format_;
  std::vector<int> columns_;  // indices into the column list
};

/// The column names, in order (the CSV header's fields, the JSON keys).
std::vector<std::string> sweep_column_names();

/// A string as a JSON string literal (quotes and escapes added).
std::string json_quoted(const std::string& text);

}  // namespace dtperf::io
