// The raw calibration file: point arithmetic, spread statistics, keys, atomic writing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "loopback_world.hpp"
#include "options.hpp"
#include "raw_format.hpp"

using namespace dtperf::calibrate;
using dtperf::calibrate::testing::TemporaryFolder;

namespace {

std::vector<std::string> keys_of(const nlohmann::ordered_json& json) {
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  return keys;
}

RawRun small_run() {
  RawRun run;
  run.backend = "host";
  run.created = "2026-11-21T10:00:00Z";
  run.arguments = {"dtperf-calibrate"};
  set_world(run, Topology::uniform(2, 1));
  RawCollective collective;
  collective.collective = "sendrecv";
  collective.group = "pair_inter";
  collective.points.push_back(RawPoint{8, 2, 10, 9, 10, 0.0008, 0.0008, true});
  run.collectives.push_back(collective);
  run.iteration_spread.push_back(make_raw_spread(0, {1e-3, 1e-3}));
  return run;
}

}  // namespace

TEST_CASE("A raw point reports algbw = bytes / time and busbw = algbw * 2(n-1)/n", "[calibrate][raw]") {
  PlanEntry entry;
  entry.kind = EntryKind::all_reduce;
  entry.ranks = 4;
  entry.sizes_bytes = {1 << 20};
  PointResult result;
  result.measured = result.correct = true;
  result.time_s = result.time_max_s = 1e-3;
  result.time_min_s = 0.9e-3;
  const RawPoint point = make_raw_point(entry, 0, result);
  // 1048576 B in 1 ms: 1.048576 GB/s; busbw * 2 * 3 / 4 = 1.572864 GB/s.
  CHECK(point.count == 262144);
  CHECK(point.time_us == Approx(1000));
  CHECK(point.time_us_min == Approx(900));
  CHECK(point.algbw_GB_per_s == Approx(1.048576));
  CHECK(point.busbw_GB_per_s == Approx(1.572864));
  CHECK(point.time_us_median < 0.0);  // not timed per call: not written
  result.time_median_s = 0.8e-3;
  CHECK(make_raw_point(entry, 0, result).time_us_median == Approx(800));
}

TEST_CASE("The iteration spread is the population standard deviation over the mean", "[calibrate][raw]") {
  // 1, 2, 3 ms: mean 2 ms, stddev sqrt(2/3) ms = 816.5 us, cv 0.408.
  const RawSpread spread = make_raw_spread(3, {1e-3, 2e-3, 3e-3});
  CHECK(spread.rank == 3);
  CHECK(spread.iterations == 3);
  CHECK(spread.mean_us == Approx(2000));
  CHECK(spread.stddev_us == Approx(816.4966).epsilon(1e-6));
  CHECK(spread.cv == Approx(0.4082483).epsilon(1e-6));
  // Quartiles by linear interpolation: 1.5, 2, 2.5 ms; robust cv = 1 / 1.349 / 2 = 0.3706.
  CHECK(spread.median_us == Approx(2000));
  CHECK(spread.robust_cv == Approx(0.3706449).epsilon(1e-6));
}

TEST_CASE("A stall moves the iteration spread's CV, not its robust CV", "[calibrate][raw]") {
  // 19 iterations of 1.00-1.09 ms (steps of 5 us), and one stall of 10 ms.
  std::vector<double> samples_s;
  for (int i = 0; i < 19; ++i) samples_s.push_back(1e-3 + i * 5e-6);
  samples_s.push_back(10e-3);
  const RawSpread spread = make_raw_spread(0, samples_s);
  // Sorted: the 19 steady ones, then the stall. Quartiles at positions 4.75, 9.5, 14.25:
  // 1.02375, 1.0475, 1.07125 ms; (1.07125 - 1.02375) / 1.349 / 1.0475 = 0.03361.
  CHECK(spread.median_us == Approx(1047.5));
  CHECK(spread.robust_cv == Approx(0.0336143).epsilon(1e-5));
  // Mean 1.4775 ms, population sd 1.9656 ms: cv 1.33.
  CHECK(spread.cv > 1.3);
}

TEST_CASE("The raw JSON has the keys of FORMAT.md in order", "[calibrate][raw]") {
  const nlohmann::ordered_json json = to_json(small_run());
  CHECK(keys_of(json) == std::vector<std::string>{"schema", "tool", "backend", "created", "arguments", "environment",
                                                  "versions", "world", "budget_s", "elapsed_s", "truncated",
                                                  "collectives", "gemm", "copy", "contention", "iteration_spread"});
  CHECK(keys_of(json["world"]) == std::vector<std::string>{"ranks", "nodes", "ranks_per_node", "hosts", "placement"});
  CHECK(keys_of(json["world"]["placement"][0]) ==
        std::vector<std::string>{"rank", "host", "local_rank", "device", "device_name", "bus_id"});
  CHECK(keys_of(json["collectives"][0]) ==
        std::vector<std::string>{"collective", "group", "ranks", "nodes", "concurrent_per_node", "dtype",
                                 "warmup_iterations", "iterations", "points"});
  CHECK(keys_of(json["collectives"][0]["points"][0]) ==
        std::vector<std::string>{"bytes", "count", "time_us", "time_us_min", "time_us_max", "algbw_GB_per_s",
                                 "busbw_GB_per_s", "correct"});
  CHECK(keys_of(json["iteration_spread"][0]) ==
        std::vector<std::string>{"rank", "iterations", "mean_us", "stddev_us", "cv", "median_us", "robust_cv"});
  CHECK(json["schema"] == "dtperf.calibration/3");
  CHECK(json["world"]["hosts"] == nlohmann::ordered_json::array({"node0", "node1"}));
}

TEST_CASE("The raw file is written whole and read back equal, leaving no temporary file", "[calibrate][raw]") {
  TemporaryFolder folder;
  const std::string path = folder.str() + "/raw.json";
  const nlohmann::ordered_json json = to_json(small_run());
  write_json_file(json, path);
  write_json_file(json, path);  // replacing an existing file works too
  std::ifstream in(path);
  CHECK(nlohmann::ordered_json::parse(in) == json);
  std::size_t files = 0;
  for (const auto& item : std::filesystem::directory_iterator(folder.str())) files += item.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
}

TEST_CASE("A raw file that cannot be written fails with the path in the message", "[calibrate][raw]") {
  CHECK_THROWS_WITH(write_json_file(to_json(small_run()), "/nonexistent-folder/raw.json"),
                    Catch::Contains("/nonexistent-folder/raw.json"));
}

TEST_CASE("Sizes on the command line take binary K, M and G", "[calibrate][options]") {
  CHECK(parse_bytes("8", "--min-bytes") == 8);
  CHECK(parse_bytes("64K", "--max-bytes") == 65536);
  CHECK(parse_bytes("16M", "--max-bytes") == 16u << 20);
  CHECK(parse_bytes("1G", "--max-bytes") == std::uint64_t{1} << 30);
  CHECK_THROWS_AS(parse_bytes("12Q", "--max-bytes"), UsageError);
  CHECK_THROWS_WITH(parse_bytes("lots", "--max-bytes"), Catch::Contains("--max-bytes lots"));
  CHECK_THROWS_AS(parse_bytes("0", "--min-bytes"), UsageError);
}
