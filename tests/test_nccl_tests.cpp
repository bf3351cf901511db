// nccl-tests logs: the table as printed, the variations people post (rank prefixes,
// indents, stripped '#'), -J JSON, and the message each kind of bad log gets.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "dtperf/error.hpp"
#include "dtperf/io/nccl_tests.hpp"

using namespace dtperf;
using namespace dtperf::io;

namespace {

// all_reduce on 4 ranks (2 per node): busbw = algbw x 2(4-1)/4 = 1.5 x algbw, and
// algbw = size / time, e.g. 1048576 B / 100 us = 10.49 GB/s, busbw 15.73 GB/s.
const std::vector<std::string> kLines = {
    "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0",
    "#",
    "# Collective test starting: all_reduce_perf",
    "# Using devices",
    "#  Rank  0 Group  0 Pid   1001 on     node-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid   1001 on     node-a device  1 [0000:2a:00] NVIDIA H100 80GB HBM3",
    "#  Rank  2 Group  0 Pid   1002 on     node-b device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
    "#  Rank  3 Group  0 Pid   1002 on     node-b device  1 [0000:2a:00] NVIDIA H100 80GB HBM3",
    "#",
    "#                                                              out-of-place                       in-place",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "     1048576        262144     float     sum      -1   100.00   10.49   15.73       0   101.00   10.38   15.57       0",
    "     2097152        524288     float     sum      -1   150.00   13.98   20.97       0   151.00   13.89   20.83       0",
    "     4194304       1048576     float     sum      -1   250.00   16.78   25.17       0   252.00   16.64   24.97       0",
    "     8388608       2097152     float     sum      -1   450.00   18.64   27.96       0   455.00   18.44   27.65       0",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 22.3",
    "#",
};

// all_gather on 2 ranks in nccl-tests' older layout: no root column, and "error" (a
// deviation, not a count) where newer versions print #wrong.
const std::string kOldHeader =
    "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
const std::string kOldRows =
    "        1024           128     float    none    10.11    0.10    0.05  0e+00    10.31    0.10    0.05  0e+00\n"
    "        2048           256     float    none    10.02    0.20    0.10  0e+00     9.99    0.20    0.10  0e+00\n";

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// The log with line `number` (1-based) replaced; an empty `text` removes it.
std::string with_line(std::size_t number, const std::string& text) {
  std::vector<std::string> lines = kLines;
  if (text.empty()) {
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(number - 1));
  } else {
    lines[number - 1] = text;
  }
  return join(lines);
}

template <typename F>
std::vector<std::string> mapped(F&& f) {
  std::vector<std::string> out;
  for (const auto& l : kLines) out.push_back(f(l));
  return out;
}

std::string error_of(const std::string& text, const NcclTestsOptions& options = {}) {
  try {
    parse_nccl_tests(text, "log.txt", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void check_standard(const NcclTestsLog& log) {
  CHECK(log.collective == "all_reduce");
  CHECK(log.ranks == 4);
  CHECK(log.nodes == 2);
  CHECK(log.dtype == "float");
  CHECK(log.redop == "sum");
  CHECK(log.gpu == "NVIDIA H100 80GB HBM3");
  REQUIRE(log.rows.size() == 4);
  CHECK(log.rows[0].line == 13);
  CHECK(log.rows[0].bytes == 1048576);
  CHECK(log.rows[0].count == 262144);
  CHECK(log.rows[0].out_of_place->time_us == 100.0);
  CHECK(log.rows[0].out_of_place->busbw_GB_per_s == 15.73);
  CHECK(log.rows[3].in_place->time_us == 455.0);
  CHECK(log.rows[3].in_place->wrong.value() == 0);
}

}  // namespace

TEST_CASE("a log as nccl-tests prints it gives collective, ranks, nodes and rows", "[nccl_tests]") {
  const NcclTestsLog log = parse_nccl_tests(join(kLines), "log.txt");
  check_standard(log);
  CHECK(log.ranks_source == "4 '#  Rank' lines from line 5");
}

TEST_CASE("rank prefixes, markdown indents and stripped '#' parse the same", "[nccl_tests][variants]") {
  check_standard(parse_nccl_tests(join(mapped([](const std::string& l) { return "0: " + l; })), "slurm.txt"));
  check_standard(parse_nccl_tests(join(mapped([](const std::string& l) { return "[1,0]<stdout>:" + l; })), "mpi.txt"));
  check_standard(parse_nccl_tests(join(mapped([](const std::string& l) { return "    " + l; })), "markdown.md"));
  check_standard(parse_nccl_tests(join(mapped([](std::string l) {
                                    if (l.starts_with("#")) l[0] = ' ';  // headers lost their '#'
                                    return l;
                                  })),
                                  "web.txt"));
  // Other text between the lines (NCCL INFO of another rank) is ignored.
  check_standard(parse_nccl_tests(with_line(9, "node-b:1002:1010 [1] NCCL INFO comm 0x5 rank 3 nRanks 4 - Init COMPLETE"),
                                  "info.txt"));
}

TEST_CASE("the number of ranks comes from busbw / algbw when the log states none", "[nccl_tests][ranks]") {
  std::vector<std::string> lines = kLines;
  lines.erase(lines.begin() + 4, lines.begin() + 8);  // no Rank lines
  const NcclTestsLog log = parse_nccl_tests(join(lines), "bare.txt");
  // 15.73 / 10.48576 = 1.5001 (within the printing precision of 1.5 only): 2(n-1)/n = 1.5 -> n = 4.
  CHECK(log.ranks == 4);
  CHECK(log.ranks_source == "busbw / algbw");
  CHECK(log.nodes == 0);
  // The caller's numbers win, and are checked against the rows.
  NcclTestsOptions options;
  options.nodes = 4;
  CHECK(parse_nccl_tests(join(lines), "bare.txt", options).nodes == 4);
  // Header keys of the shared data files: total ranks, or GPUs per node x nodes.
  lines.insert(lines.begin(), {"# gpus_per_node: 2", "# nodes: 2 (two hosts)"});
  const NcclTestsLog keyed = parse_nccl_tests(join(lines), "keyed.txt");
  CHECK(keyed.ranks == 4);
  CHECK(keyed.nodes == 2);
  CHECK(keyed.ranks_source == "# gpus_per_node on line 1 x # nodes on line 2");
}

TEST_CASE("rows of size zero are dropped and an old header without root reads", "[nccl_tests]") {
  const std::string log = "# collective: all_gather_perf\n" + kOldHeader +
                          "           0             0     float    none     0.33    0.00    0.00  0e+00     0.36    "
                          "0.00    0.00  0e+00\n" +
                          kOldRows;
  NcclTestsOptions options;
  options.ranks = 2;
  const NcclTestsLog parsed = parse_nccl_tests(log, "ag.txt", options);
  CHECK(parsed.collective == "all_gather");
  REQUIRE(parsed.rows.size() == 2);
  CHECK(parsed.rows[0].bytes == 1024);
  CHECK_FALSE(parsed.rows[0].out_of_place->wrong.has_value());  // the old column is a deviation, not a count
}

TEST_CASE("a table posted without its column header reads when its columns are the standard ones",
          "[nccl_tests][variants]") {
  // The 13 standard columns: the same log, its rows one line up.
  const NcclTestsLog log = parse_nccl_tests(with_line(11, ""), "log.txt");
  REQUIRE(log.rows.size() == 4);
  CHECK(log.rows[0].line == 12);
  CHECK(log.rows[0].bytes == 1048576);
  CHECK(log.rows[3].in_place->time_us == 455.0);
  CHECK(log.rows[3].in_place->wrong.value() == 0);
  CHECK(log.ranks == 4);
  // With a Slurm prefix on every line, too.
  std::vector<std::string> prefixed = mapped([](const std::string& l) { return "0: " + l; });
  prefixed.erase(prefixed.begin() + 10);
  CHECK(parse_nccl_tests(join(prefixed), "slurm.txt").rows.size() == 4);
  // The older 12 (no root; "error" is a deviation, not a count).
  const std::string old = "# collective: all_gather_perf\n" + kOldRows;
  NcclTestsOptions options;
  options.ranks = 2;
  const NcclTestsLog parsed = parse_nccl_tests(old, "ag.txt", options);
  REQUIRE(parsed.rows.size() == 2);
  CHECK(parsed.rows[1].in_place->time_us == 9.99);
  CHECK_FALSE(parsed.rows[0].out_of_place->wrong.has_value());
  // Columns taken for what they are not fail the row checks: time and algbw swapped.
  CHECK_THROWS_AS(parse_nccl_tests(with_line(11, "").replace(with_line(11, "").find("100.00   10.49"), 14,
                                                             "10.49   100.00"),
                                   "log.txt"),
                  InputError);
}

TEST_CASE("nccl-tests -J JSON gives the same log", "[nccl_tests][json]") {
  const std::string json = R"({"version": 2, "args": ["./build/all_reduce_perf", "-b", "1M"],
    "config": {"nthreads": 1, "ngpus": 2, "devices": [
      {"rank": 0, "hostname": "node-a", "device_info": "NVIDIA H100 80GB HBM3"},
      {"rank": 2, "hostname": "node-b", "device_info": "NVIDIA H100 80GB HBM3"}]},
    "results": [
      {"size": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": "    -1",
       "out_of_place": {"time": 100.0, "alg_bw": 10.485760, "bus_bw": 15.728640, "nwrong": 0.0},
       "in_place": {"time": 101.0, "alg_bw": 10.381941, "bus_bw": 15.572911, "nwrong": null},
       "actual_iterations": 20, "experiment_name": ""}],
    "out_of_bounds": {"count": 0, "okay": "true"}})";
  const NcclTestsLog log = parse_nccl_tests(json, "run.json");
  CHECK(log.collective == "all_reduce");
  CHECK(log.ranks == 4);  // 2 processes x 1 thread x 2 GPUs
  CHECK(log.nodes == 2);
  REQUIRE(log.rows.size() == 1);
  CHECK(log.rows[0].line == 0);
  CHECK(log.rows[0].out_of_place->algbw_GB_per_s == 10.48576);
  CHECK_FALSE(log.rows[0].in_place->wrong.has_value());
  CHECK(is_nccl_tests_json(json));
  CHECK_FALSE(is_nccl_tests_json(join(kLines)));

  std::string bad = json;
  bad.replace(bad.find("\"bus_bw\": 15.728640"), 19, "\"bus_bw\": 17.000000");
  CHECK(error_of(bad) ==
        "log.txt: at /results/0: out-of-place busbw / algbw = 1.6212 does not match all_reduce on 4 ranks (2 "
        "process(es) x 2 GPU(s) in /config), which needs 2(n-1)/n = 1.5000");
  // A size of 2^63 is unsigned in JSON: over the 1 PiB limit, not "a number" turned negative.
  std::string huge = json;
  const std::string size = "\"size\": 1048576";
  huge.replace(huge.find(size), size.size(), "\"size\": 9223372036854775808");
  CHECK(error_of(huge) == "log.txt: at /results/0/size: expected an integer up to 1125899906842624, got "
                          "9223372036854775808");
}

TEST_CASE("the faster of out-of-place and in-place can be taken per size", "[nccl_tests]") {
  const NcclTestsLog log = parse_nccl_tests(join(kLines), "log.txt");
  const auto faster = bytes_and_time_s(log, NcclTestsColumn::faster);
  const auto in_place = bytes_and_time_s(log, NcclTestsColumn::in_place);
  CHECK(faster[0].second == Approx(100e-6));
  CHECK(in_place[0].second == Approx(101e-6));
}

TEST_CASE("bad logs name the line and the reason", "[nccl_tests][errors]") {
  // Cut off, or two rows joined.
  CHECK(error_of(with_line(14, "     2097152        524288     float     sum      -1   150.00   13.98")) ==
        "log.txt: line 14: the row has 7 columns, the column header (line 11) has 13: the row is cut off");
  CHECK(error_of(with_line(14, kLines[13] + " 0")) ==
        "log.txt: line 14: the row has 14 columns, the column header (line 11) has 13");
  // Sizes must increase (two runs pasted together).
  CHECK(error_of(with_line(15, kLines[12])) ==
        "log.txt: line 15: size 1048576 B does not increase over 2097152 B on line 14 (two runs in one log?)");
  // One dtype, one collective, one table per log.
  CHECK(error_of(with_line(14, "     2097152       1048576      half     sum      -1   150.00   13.98   20.97       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: type 'half' differs from 'float' on line 13: one dtype per log");
  CHECK(error_of(with_line(2, "# Collective test starting: all_gather_perf")) ==
        "log.txt: line 3: 'all_reduce' here but 'all_gather' on line 2: one collective per log");
  CHECK(error_of(with_line(17, kLines[10])) ==
        "log.txt: line 17: a second table starts here (the first on line 11): one run per log");
  // Inconsistent numbers: algbw is not size / time; busbw / algbw not the rank count's.
  CHECK(error_of(with_line(14, "     2097152        524288     float     sum      -1   150.00   13.89   20.97       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: out-of-place algbw 13.89 GB/s is not size / time = 2097152 B / 150 us = 13.98 GB/s");
  CHECK(error_of(with_line(14, "     2097152        524288     float     sum      -1   150.00   13.98   24.47       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: out-of-place busbw / algbw = 1.7502 does not match all_reduce on 4 ranks (4 '#  Rank' lines "
        "from line 5), which needs 2(n-1)/n = 1.5000");
  NcclTestsOptions eight;
  eight.ranks = 8;
  CHECK(error_of(join(kLines), eight) ==
        "log.txt: line 13: out-of-place busbw / algbw = 1.5001 does not match all_reduce on 8 ranks (given), which "
        "needs 2(n-1)/n = 1.7500");
  // Wrong results make the times meaningless.
  CHECK(error_of(with_line(15, "     4194304       1048576     float     sum      -1   250.00   16.78   25.17       3   "
                               "252.00   16.64   24.97       0")) ==
        "log.txt: line 15: 3 wrong elements in the out-of-place result: the measurement is invalid");
  CHECK(error_of(with_line(17, "# Out of bounds values : 3 FAILED")) ==
        "log.txt: line 17: nccl-tests reports 3 out-of-bounds values: the measurement is invalid");
  CHECK(error_of(with_line(15, "     4194304       1048576     float     sum      -1     0.00   16.78   25.17       0   "
                               "252.00   16.64   24.97       0")) ==
        "log.txt: line 15: out-of-place time 0 us is not a measurement");
  CHECK(error_of(with_line(15, "     4194304       1048576     float     sum      -1   250.00   16.78   25.17    yes   "
                               "252.00   16.64   24.97       0")) ==
        "log.txt: line 15: #wrong 'yes' is not a count");
  // A count past 2^53 (the JSON log's limit too) is named as written, not clamped to 2^63 - 1.
  CHECK(error_of(with_line(15, "     4194304       1048576     float     sum      -1   250.00   16.78   25.17 "
                               "99999999999999999999   252.00   16.64   24.97       0")) ==
        "log.txt: line 15: #wrong '99999999999999999999' is over the limit of 2^53 elements");
  // A row whose size is not a number is named, not skipped as text.
  CHECK(error_of(with_line(14, "         nan        524288     float     sum      -1   150.00   13.98   20.97       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: size 'nan' is not a whole number");
  CHECK(error_of(with_line(14, "    -2097152        524288     float     sum      -1   150.00   13.98   20.97       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: size '-2097152' is not a whole number");
}

TEST_CASE("logs without a table, header or consistent prefix are refused", "[nccl_tests][errors]") {
  CHECK(error_of("# nThread 1 nGpus 2\n# Using devices\n") ==
        "log.txt: line 3: no data rows: expected nccl-tests' table (size, count, type, redop, root, then time, algbw, "
        "busbw and #wrong out-of-place and in-place)");
  // A table of another layout without its header cannot be read: 9 columns (one group).
  std::vector<std::string> one_group = kLines;
  one_group.erase(one_group.begin() + 10);  // the column header
  one_group[11] = "     1048576        262144     float     sum      -1   100.00   10.49   15.73       0";
  CHECK(error_of(join(one_group)) ==
        "log.txt: line 12: a data row before the column header ('size count type redop root time algbw busbw #wrong "
        "...'), and its 9 columns are not the standard 13 (or the older 12): the table has no header");
  std::vector<std::string> mixed = mapped([](const std::string& l) { return "[1,0]<stdout>:" + l; });
  mixed[13] = "[1,1]<stdout>:" + kLines[13];
  CHECK(error_of(join(mixed)) ==
        "log.txt: line 14: the row's prefix '[1,1]<stdout>:' differs from the column header's '[1,0]<stdout>:' (line "
        "11): output of another process?");
  CHECK(error_of(with_line(14, "0: " + kLines[13])) ==
        "log.txt: line 14: the row's prefix '0:' differs from the column header's '' (line 11): output of another "
        "process?");
  CHECK(error_of(with_line(14, "     2097152        524288     floot     sum      -1   150.00   13.98   20.97       0   "
                               "151.00   13.89   20.83       0")) ==
        "log.txt: line 14: unknown type 'floot' (did you mean 'float'?); nccl-tests types: int8, uint8, int32, uint32, "
        "int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2, char, int");
}

TEST_CASE("a log that ends short of the sizes its parameters ask for is refused", "[nccl_tests][errors]") {
  // The parameter line asks for 1 MiB to 8 MiB, doubling: 1, 2, 4, 8 MiB. Cut after the
  // 4 MiB row (line 15) and without the closing lines, the log ends on line 16 (the text
  // ends with a newline).
  const std::vector<std::string> head(kLines.begin(), kLines.begin() + 15);
  CHECK(error_of(join(head)) ==
        "log.txt: line 16: truncated: the table ends at 4194304 B (line 15), short of the 8388608 B that the run's "
        "parameters (line 1: minBytes 1048576, maxBytes 8388608, step x2) ask for, and the log has no closing '# Avg "
        "bus bandwidth' line: the run stopped early or the log was cut");
  // The same cut with nccl-tests' closing lines: the run itself stopped there, as printed.
  std::vector<std::string> closed = head;
  closed.insert(closed.end(), kLines.begin() + 16, kLines.end());
  CHECK(parse_nccl_tests(join(closed), "log.txt").rows.size() == 3);
  // Every size present but the closing lines cut: nothing is missing.
  const std::vector<std::string> rows_only(kLines.begin(), kLines.begin() + 16);
  CHECK(parse_nccl_tests(join(rows_only), "log.txt").rows.size() == 4);
  // No parameter line (a table posted alone): nothing says where it should end.
  std::vector<std::string> bare(head.begin() + 1, head.end());
  CHECK(parse_nccl_tests(join(bare), "log.txt").rows.size() == 3);
  // A step in bytes: 1 MiB + k x 1 MiB up to 16 MiB asks for 16 MiB (k = 15); the table's
  // largest is 8 MiB. Up to 8.5 MiB it asks for 8 MiB (k = 7), which the table has.
  std::vector<std::string> bytes_step = rows_only;
  bytes_step[0] = "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 16777216 step: 1048576(bytes) warmup iters: 5";
  CHECK(error_of(join(bytes_step)) ==
        "log.txt: line 17: truncated: the table ends at 8388608 B (line 16), short of the 16777216 B that the run's "
        "parameters (line 1: minBytes 1048576, maxBytes 16777216, step +1048576) ask for, and the log has no closing "
        "'# Avg bus bandwidth' line: the run stopped early or the log was cut");
  bytes_step[0] = "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 8912896 step: 1048576(bytes) warmup iters: 5";
  CHECK(parse_nccl_tests(join(bytes_step), "log.txt").rows.size() == 4);
}

TEST_CASE("the rank count must be known, above one and fit the nodes", "[nccl_tests][errors]") {
  std::vector<std::string> bare = kLines;
  bare.erase(bare.begin() + 4, bare.begin() + 8);
  bare[2] = "# Collective test starting: sendrecv_perf";
  // sendrecv's busbw equals its algbw: the rows cannot tell.
  std::vector<std::string> sendrecv = bare;
  for (std::size_t i = 8; i < 12; ++i) {
    sendrecv[i] = "     1048576        262144     float     sum      -1   100.00   10.49   10.49       0   101.00   "
                  "10.38   10.38       0";
  }
  sendrecv.resize(9);
  sendrecv[0] = "#";  // one row of four: without the parameter line it is not a cut log
  CHECK(error_of(join(sendrecv)) ==
        "log.txt: cannot tell the number of ranks: the log states none (no '# total_ranks:' or '#  Rank' lines) and "
        "sendrecv's busbw equals its algbw for any number (give: ranks)");
  NcclTestsOptions one;
  one.ranks = 1;
  CHECK(error_of(join(sendrecv), one) == "log.txt: 1 rank(s): a single rank communicates nothing");
  NcclTestsOptions three_nodes;
  three_nodes.nodes = 3;
  CHECK(error_of(join(kLines), three_nodes) ==
        "log.txt: 4 ranks (4 '#  Rank' lines from line 5) do not split evenly over 3 nodes (given)");
  bare[2] = "#";
  CHECK(error_of(join({"#       size         count      type   redop    root     time   algbw   busbw #wrong",
                       "        1024           256     float     sum      -1    10.00    0.10    0.10       0"})) ==
        "log.txt: cannot tell which collective (all_reduce, all_gather, reduce_scatter, alltoall or sendrecv) the log "
        "measures: it names no nccl-tests program (e.g. all_reduce_perf) (give: collective)");
}

TEST_CASE("--collective names what a bare log measures, and must agree with the log", "[nccl_tests][errors]") {
  const std::string bare = join({"#       size         count      type   redop    root     time   algbw   busbw #wrong",
                                 "        1024           256     float     sum      -1    10.00    0.10    0.10       0"});
  NcclTestsOptions options;
  options.collective = "all_reduce_perf";
  options.ranks = 2;
  CHECK(parse_nccl_tests(bare, "log.txt", options).collective == "all_reduce");
  options.collective = "sendrecv";
  CHECK(error_of("# collective: all_reduce_perf\n" + bare, options) ==
        "log.txt: line 1: the log says 'all_reduce' but the collective given is 'sendrecv'");
}
