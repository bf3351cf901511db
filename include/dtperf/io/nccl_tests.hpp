#pragma once
// nccl-tests results (all_reduce_perf, all_gather_perf, reduce_scatter_perf, sendrecv_perf,
// alltoall_perf, broadcast_perf, reduce_perf) as printed or as written with -J.
//
// Text. The table nccl-tests prints: a column header ("size count type redop root time
// algbw busbw #wrong time algbw busbw #wrong", older versions without root, "error" for
// "#wrong", "cputime" for "time"), then one row per size with an out-of-place and an
// in-place group of columns. Logs as people post them vary, and all of these read:
//  - a prefix on every line: a Slurm task label ("0: "), mpirun --tag-output
//    ("[1,0]<stdout>:"), or an indent (markdown); the column header's prefix is the one
//    data rows must carry, so rows of another process in the same log are refused;
//  - the leading '#' of comment lines stripped (some web pages do);
//  - no column header at all, when the first data row has the standard 13 columns (or the
//    older 12, without root): the standard header stands in, and the row checks below
//    confirm the columns;
//  - other text between the lines (NCCL INFO lines, shell prompts) is ignored.
// Rows of size 0 (nccl-tests rounds tiny -b sizes down to zero elements) measure nothing
// and are dropped. Everything else is checked, and a bad log is an InputError at
// "line N": a row with the wrong number of columns (cut off or joined), sizes that do not
// increase, a second collective, dtype or reduction in the same log (one run per file),
// algbw that is not size / time within the printed rounding, busbw / algbw that is not
// the collective's factor for the number of ranks (2(n-1)/n all_reduce; (n-1)/n
// all_gather, reduce_scatter, alltoall; 1 sendrecv, broadcast, reduce), a nonzero #wrong
// or "Out of bounds values : N FAILED" (the results are wrong, so are the times), a table
// that stops a step or more short of the sizes its parameter line asks for ("minBytes ...
// maxBytes ... step: ...") in a log without nccl-tests' closing "# Avg bus bandwidth" line
// (a run stopped early or a log cut after a row), or no data rows at all. A single rank is
// refused (it communicates nothing).
//
// The collective comes from the caller (--collective: nccl-tests itself prints no program
// name), "# collective: NAME_perf" (the header of the logs under validation/data),
// "# Collective test starting: NAME_perf", or the program's name anywhere in the log (a
// command line); failing those, busbw > algbw means all_reduce. A caller's name that
// contradicts the log is an error.
//
// The number of ranks, in order: the caller's override (--ranks), "# total_ranks: N" or
// "# gpus_per_node: G" x "# nodes: M" header keys, the count of nccl-tests'
// "#  Rank  N Group ..." lines, else the busbw / algbw ratio of the rows where the
// printed precision singles out one n. The nodes: the override, "# nodes: M", the
// distinct hosts of the Rank lines, else 0 (unknown). A stated rank count that the
// ratios contradict is an error at the first contradicting row.
//
// JSON (-J, nccl-tests' src/util.cu, JSON_FILE_VERSION 2): an object with "config"
// (nthreads, ngpus, "devices": one entry per process with hostname and device_info),
// "args" (the command line; its program name gives the collective) and "results": per
// size "size", "count", "type", "redop", "out_of_place" (null when not run) and
// "in_place" objects of "time" (or "cpu_time", us), "alg_bw", "bus_bw" (GB/s) and
// "nwrong" (null when not checked). Ranks = devices x nthreads x ngpus, nodes = distinct
// hostnames. Keys not named here are ignored (nccl-tests adds keys between versions);
// the same checks apply, at JSON pointers, with the %lf precision nccl-tests writes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtperf::io {

struct NcclTestsResult {
  double time_us = 0.0;
  double algbw_GB_per_s = 0.0;
  double busbw_GB_per_s = 0.0;
  std::optional<std::int64_t> wrong;  // nullopt: not checked ("N/A", or the old "error" column)
};

struct NcclTestsRow {
  int line = 0;  // 1-based line in the text (0 for JSON)
  double bytes = 0.0;
  std::int64_t count = 0;
  // nccl-tests prints out-of-place then in-place; a log with one group of columns has
  // out-of-place only, a -J record may have either.
  std::optional<NcclTestsResult> out_of_place;
  std::optional<NcclTestsResult> in_place;
};

struct NcclTestsLog {
  std::string collective;  // "all_reduce", "all_gather", "reduce_scatter", "sendrecv", "alltoall", ...
  int ranks = 0;
  int nodes = 0;               // 0: not stated
  std::string ranks_source;    // where `ranks` came from, for messages
  std::string dtype;           // nccl-tests' type name ("float", "half", "bfloat16", ...)
  std::string redop;           // "sum", "none", ...
  std::string gpu;             // the GPU's name where the log states it
  std::vector<NcclTestsRow> rows;  // by strictly increasing size, none of size 0
};

struct NcclTestsOptions {
  std::optional<int> ranks;
  std::optional<int> nodes;
  std::optional<std::string> collective;  // "all_reduce" or "all_reduce_perf"; logs do not print it
};

/// True if `text` is nccl-tests -J output (a JSON object with "results").
bool is_nccl_tests_json(const std::string& text);

/// Parses a text log or -J JSON (decided by content). `file` is for messages.
NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file,
                              const NcclTestsOptions& options = {});

NcclTestsLog read_nccl_tests_file(const std::string& path, const NcclTestsOptions& options = {});

/// Which measured time to use per size.
enum class NcclTestsColumn : std::uint8_t {
  out_of_place,  // nccl-tests' first group (in-place where a row has no out-of-place)
  in_place,      // (out-of-place where a row has no in-place)
  faster,        // the faster of the two at each size
};

/// (bytes, seconds) per row.
std::vector<std::pair<double, double>> bytes_and_time_s(const NcclTestsLog& log, NcclTestsColumn column);

}  // namespace dtperf::io
