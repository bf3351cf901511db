#include "dtperf/io/table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace dtperf::io {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = std::max(columns_[c].name.size(), columns_[c].unit.empty() ? 0 : columns_[c].unit.size() + 2);
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  const auto line = [&](const auto& cell_of, bool header) {
    std::string out = header ? "#" : " ";
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string cell = cell_of(c);
      out += "  ";
      out += columns_[c].left ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("{:>{}}", cell, width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line([&](std::size_t c) { return columns_[c].name; }, true);
  bool any_unit = false;
  for (const auto& column : columns_) any_unit = any_unit || !column.unit.empty();
  if (any_unit) {
    out += line([&](std::size_t c) { return columns_[c].unit.empty() ? std::string{} : "(" + columns_[c].unit + ")"; },
                true);
  }
  for (const auto& row : rows_) out += line([&](std::size_t c) { return row[c]; }, false);
  return out;
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string percent(double fraction, int decimals) { return fixed(100.0 * fraction, decimals); }

}  // namespace dtperf::io
