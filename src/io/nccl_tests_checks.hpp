#pragma once
// Shared between the text and the JSON readers of nccl-tests results: rows as read, with
// the precision their numbers were printed at, and the checks that turn them into an
// NcclTestsLog (see dtperf/io/nccl_tests.hpp for the rules).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/limits.hpp"

namespace dtperf::io::detail {

/// A rate as nccl-tests prints it: 0 (a bus bandwidth on one rank) up to limits::kGBps.
inline constexpr limits::Range kRateGBps{0.0, limits::kGBps.high};
/// A time as printed: up to limits::kTimeUs, 0 included ("0.00" is refused by the checks,
/// naming the row's side).
inline constexpr limits::Range kTimeUs{0.0, limits::kTimeUs.high};

/// One group of columns (out-of-place or in-place) with half a unit of the last printed
/// digit of each number: the true value lies within +- that.
struct ReadResult {
  NcclTestsResult value;
  double time_half_us = 0.0;
  double algbw_half = 0.0;
  double busbw_half = 0.0;
};

struct ReadRow {
  std::string where;  // "line 12" or a JSON pointer
  int line = 0;
  double bytes = 0.0;
  std::int64_t count = 0;
  std::string type;
  std::string redop;
  std::optional<ReadResult> out_of_place;
  std::optional<ReadResult> in_place;
};

/// A value stated by the log, with where it was stated (for messages).
template <typename T>
struct Stated {
  T value{};
  std::string where;   // "line 7", a JSON pointer, "" when given by the caller
  std::string source;  // "# total_ranks", "24 Rank lines", "given", ...
};

/// The sizes a run's parameter line asks for ("minBytes 8 maxBytes 1073741824 step: 2(factor)").
struct Sweep {
  double min_bytes = 0.0;
  double max_bytes = 0.0;
  double step = 0.0;    // a factor (>= 2) or bytes added per size
  bool factor = true;
  std::string where;    // the parameter line

  /// The last size the sweep reaches: min x factor^k or min + k x step, at most max.
  double last_bytes() const;
  /// Whether a table whose largest size is `largest` stopped at least one step short of
  /// it (half a step of margin for nccl-tests' rounding to whole elements).
  bool ends_short(double largest) const;
};

struct ReadFacts {
  std::optional<Stated<std::string>> collective;
  std::optional<Stated<int>> ranks;
  std::optional<Stated<int>> nodes;
  std::optional<Stated<int>> out_of_bounds;  // nccl-tests' count of wrong values, when reported
  std::string gpu;
  std::string end_where;  // where the input ends, for "no data rows"
  std::optional<Sweep> sweep;  // text logs that print their parameters
  bool closed = false;         // nccl-tests' closing '# Avg bus bandwidth' line was read
};

/// Checks the rows and facts and builds the log; throws InputError on the first problem.
NcclTestsLog finish_log(std::vector<ReadRow> rows, ReadFacts facts, const std::string& file,
                        const NcclTestsOptions& options);

/// Half a unit of the last digit of a printed number ("12.90" -> 0.005, "15791" -> 0.5,
/// "1.0e+08" -> 5e6).
double half_unit(const std::string& printed);

/// The collective of a program name ("./build/all_reduce_perf_mpi" -> "all_reduce"), or "".
std::string collective_of_program(const std::string& token);

NcclTestsLog parse_nccl_tests_json(const std::string& text, const std::string& file,
                                   const NcclTestsOptions& options);

}  // namespace dtperf::io::detail
