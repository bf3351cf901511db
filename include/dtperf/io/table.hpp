#pragma once
// Human tables in the nccl-tests manner: a header row and a units row, both starting
// with '#', then right-aligned data rows that a script can split on whitespace.
#include <string>
#include <vector>

namespace dtperf::io {

class Table {
 public:
  struct Column {
    std::string name;
    std::string unit;  // printed as "(unit)"; empty for none
    bool left = false; // left-align (text columns)
  };
  explicit Table(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Fixed-point with `decimals` digits; large values keep their integer digits.
std::string fixed(double value, int decimals);
/// A percentage of a fraction, e.g. 0.974 -> "97.4".
std::string percent(double fraction, int decimals = 1);

}  // namespace dtperf::io
