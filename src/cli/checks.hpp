#pragma once
// Checks for numeric command-line options. CLI11's own (PositiveNumber, Range) let NaN
// through (every comparison with NaN is false) and accept any finite value: 1e308 Gbit/s,
// 1e9 nodes. These reject anything that is not a finite number inside the option's
// documented limits, naming the limit; the limits are docs/MANUAL.md's ("Limits").
#include <CLI/CLI.hpp>

#include <string>

#include "dtperf/limits.hpp"
#include "dtperf/names.hpp"

namespace dtperf::cli {

/// A finite number x with low <= x <= high (low < x when low_open).
CLI::Validator number_in(double low, double high, bool low_open = false);
/// A finite number in `range` (limits.hpp: the range files use for the same quantity).
CLI::Validator number_in(const limits::Range& range);
/// 0 (the quantity is absent: "0: none") or a number in `range`.
CLI::Validator zero_or(const limits::Range& range);

/// An integer count 1 <= n <= high.
CLI::Validator count_up_to(double high);

/// A whole number written in decimal digits, with `unit_suffix` optionally followed by
/// letters (a size's K, M, G); leading zeros dropped. Run first (a transform), ahead of the
/// conversion, which would read 010 as octal 8 and 0x10 as 16.
CLI::Validator decimal_digits(bool unit_suffix);

/// `option` takes one of the names of E (names.hpp): its metavar lists them ("a|b|c") and
/// its check refuses any other, so help, parsing and reports share one list.
template <class E>
CLI::Option* one_of(CLI::Option* option) {
  const std::vector<std::string> names = names_of<E>();
  std::string metavar;
  for (const std::string& name : names) metavar += (metavar.empty() ? "" : "|") + name;
  return option->type_name(metavar)->check(CLI::IsMember(names));
}

// The limits (dtperf/limits.hpp), as doubles for the checks above.
inline constexpr double kMaxNodes = static_cast<double>(limits::kMaxNodes);
inline constexpr double kMaxGpusPerNode = static_cast<double>(limits::kMaxGpusPerNode);
inline constexpr double kMaxGpus = static_cast<double>(limits::kMaxGpus);
inline constexpr double kMaxInnerSteps = static_cast<double>(limits::kMaxInnerSteps);
using limits::kMaxFactor;

}  // namespace dtperf::cli
