// Raw calibration files (dtperf.calibration/2, and /1): a good file reads whole, and every
// kind of bad file gets one message at the exact JSON pointer.
#include <catch2/catch.hpp>

#include <string>

#include "dtperf/error.hpp"
#include "dtperf/io/calibration_json.hpp"

using namespace dtperf;
using namespace dtperf::io;

namespace {

// 2 nodes x 2 ranks. all_reduce on the node (2 ranks: factor 2(2-1)/2 = 1) and on the
// world (4 ranks: factor 1.5); 8 B / 10 us = 0.0008 GB/s, 1 MiB / 100 us = 10.48576 GB/s.
// A copy of 1 GiB in 800 us reads and writes 2 x 1073741824 B / 800 us = 2684.35 GB/s.
const char* kGood = R"({
  "schema": "dtperf.calibration/1",
  "tool": "dtperf-calibrate 0.1.0",
  "backend": "nccl",
  "created": "2026-11-21T10:00:00Z",
  "arguments": ["dtperf-calibrate", "--budget-s", "120"],
  "environment": {"NCCL_DEBUG": "WARN"},
  "versions": {"cuda_runtime": "13.0", "nccl": "2.28.3"},
  "world": {"ranks": 4, "nodes": 2, "ranks_per_node": 2, "hosts": ["a", "b"],
            "placement": [{"rank": 0, "host": "a", "local_rank": 0, "device": 0, "device_name": "NVIDIA H100 80GB HBM3",
                           "bus_id": "0000:18:00.0"}]},
  "budget_s": 120, "elapsed_s": 97.5, "truncated": false,
  "collectives": [
    {"collective": "all_reduce", "group": "node", "ranks": 2, "nodes": 1, "concurrent_per_node": 1, "dtype": "float32",
     "warmup_iterations": 5, "iterations": 20, "points": [
       {"bytes": 8, "count": 2, "time_us": 10.0, "time_us_min": 9.5, "time_us_max": 10.0,
        "algbw_GB_per_s": 0.0008, "busbw_GB_per_s": 0.0008, "correct": true},
       {"bytes": 1048576, "count": 262144, "time_us": 100.0, "time_us_min": 99.0, "time_us_max": 100.0,
        "algbw_GB_per_s": 10.48576, "busbw_GB_per_s": 10.48576, "correct": true}]},
    {"collective": "all_reduce", "group": "world", "ranks": 4, "nodes": 2, "concurrent_per_node": 1, "dtype": "float32",
     "warmup_iterations": 5, "iterations": 20, "points": [
       {"bytes": 1048576, "count": 262144, "time_us": 100.0, "time_us_min": 99.0, "time_us_max": 100.0,
        "algbw_GB_per_s": 10.49, "busbw_GB_per_s": 15.73, "correct": true}]}
  ],
  "gemm": [{"dtype": "bf16", "m": 4096, "n": 4096, "k": 4096, "flops": 1.37438953472e11, "time_us": 215.0, "tflops": 639.25}],
  "copy": [{"bytes": 1073741824, "time_us": 800.0, "GB_per_s": 2684.35}],
  "iteration_spread": [{"rank": 0, "iterations": 50, "mean_us": 1234.5, "stddev_us": 12.1, "cv": 0.0098}]
})";

Json good() { return Json::parse(kGood); }

std::string error_of(const Json& json) {
  try {
    parse_calibration(json, "raw.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Json& point(Json& j, int collective, int index) { return j["collectives"][collective]["points"][index]; }

}  // namespace

TEST_CASE("a raw calibration file reads into its typed form", "[calibration_json]") {
  const RawCalibration raw = parse_calibration(good(), "raw.json");
  CHECK(raw.backend == "nccl");
  CHECK(raw.created_date() == "2026-11-21");
  CHECK(raw.environment.at("NCCL_DEBUG") == "WARN");
  CHECK(raw.versions.at("nccl") == "2.28.3");
  CHECK(raw.world.ranks == 4);
  CHECK(raw.world.placement.at(0).device_name == "NVIDIA H100 80GB HBM3");
  REQUIRE(raw.collectives.size() == 2);
  CHECK(raw.collectives[0].pointer == "/collectives/0");
  CHECK(raw.collectives[0].group == "node");
  CHECK(raw.collectives[0].points[1].time_us == 100.0);
  CHECK(raw.gemm.at(0).dtype == DType::bf16);
  CHECK(raw.copy.at(0).GB_per_s == 2684.35);
  CHECK(raw.iteration_spread.at(0).cv == 0.0098);
  CHECK_FALSE(raw.truncated);
}

TEST_CASE("unknown keys are refused with a suggestion", "[calibration_json][errors]") {
  Json j = good();
  point(j, 0, 1)["corect"] = true;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/points/1/corect: unknown key 'corect' (did you mean 'correct'?); expected one of: "
        "bytes, count, time_us, time_us_min, time_us_max, time_us_median, algbw_GB_per_s, busbw_GB_per_s, correct");
  j = good();
  j["budget"] = 1;
  CHECK(error_of(j) ==
        "raw.json: at /budget: unknown key 'budget' (did you mean 'budget_s'?); expected one of: schema, tool, backend, "
        "created, arguments, environment, versions, world, budget_s, elapsed_s, truncated, collectives, gemm, copy, "
        "iteration_spread, contention");
  j = good();
  j["versions"]["cuda"] = "13.0";
  CHECK(error_of(j) ==
        "raw.json: at /versions/cuda: unknown key 'cuda'; expected one of: cuda_runtime, cuda_driver, nccl, gpu_driver");
}

TEST_CASE("a failed result check refuses the measurement", "[calibration_json][errors]") {
  Json j = good();
  point(j, 0, 1)["correct"] = false;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/points/1/correct: the result check failed at 1048576 bytes: the measurement is "
        "invalid (fix the cause and calibrate again)");
  point(j, 0, 1)["correct"] = "yes";
  CHECK(error_of(j) == "raw.json: at /collectives/0/points/1/correct: expected true or false, got a string");
}

TEST_CASE("points are sorted, and their derived values agree", "[calibration_json][errors]") {
  Json j = good();
  point(j, 0, 1) = point(j, 0, 0);
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/points/1/bytes: points must be sorted by strictly increasing bytes: 8 after 8");
  j = good();
  point(j, 0, 1)["algbw_GB_per_s"] = 11.0;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/points/1/algbw_GB_per_s: algbw 11 GB/s is not bytes / time = 1048576 B / 100 us "
        "= 10.49 GB/s");
  j = good();
  j["collectives"][1]["points"][0]["busbw_GB_per_s"] = 10.49;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/1/points/0/busbw_GB_per_s: busbw 10.49 GB/s is not algbw x 1.5 = 15.73 GB/s for "
        "all_reduce on 4 ranks");
  j = good();
  point(j, 0, 1)["time_us_max"] = 90.0;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/points/1/time_us: expected time_us_min <= time_us <= time_us_max, got 99 <= 100 "
        "<= 90");
  j = good();
  j["collectives"][0]["points"] = Json::array();
  CHECK(error_of(j) == "raw.json: at /collectives/0/points: expected at least one point");
}

TEST_CASE("group shapes must match the world", "[calibration_json][errors]") {
  Json j = good();
  j["collectives"][0]["ranks"] = 4;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/ranks: group 'node' is the ranks of one node: expected 2 ranks on 1 node(s), got 4 "
        "on 1");
  j = good();
  j["collectives"][1] = j["collectives"][0];
  CHECK(error_of(j) ==
        "raw.json: at /collectives/1: all_reduce on group 'node' with 1 concurrent per node is already at "
        "/collectives/0");
  j = good();
  j["collectives"][0]["concurrent_per_node"] = 2;
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/concurrent_per_node: 2 groups of 2 rank(s) per node do not fit on 2 ranks per node");
  j = good();
  j["collectives"][0]["group"] = "nodes";
  CHECK(error_of(j) ==
        "raw.json: at /collectives/0/group: unknown value 'nodes' (did you mean 'node'?); expected one of: world, node, "
        "one_per_node, pair_intra, pair_inter, two_nodes, self");
  j = good();
  j["world"]["ranks"] = 5;
  CHECK(error_of(j) == "raw.json: at /world/ranks: 5 ranks is not 2 nodes x 2 ranks per node");
  j = good();
  j["world"]["placement"][0]["host"] = "c";
  CHECK(error_of(j) == "raw.json: at /world/placement/0/host: unknown host 'c' (did you mean 'a'?); /world/hosts has: a, b");
}

TEST_CASE("GEMM, copy and spread entries are checked", "[calibration_json][errors]") {
  Json j = good();
  j["gemm"][0]["flops"] = 1e11;
  CHECK(error_of(j) == "raw.json: at /gemm/0/flops: flops 1e+11 is not 2 m n k = 1.37439e+11");
  j = good();
  j["copy"][0]["GB_per_s"] = 1342.18;  // read only: half the traffic
  CHECK(error_of(j) == "raw.json: at /copy/0/GB_per_s: GB_per_s 1342.18 is not 2 x bytes / time = 2684 (read + written)");
  j = good();
  j["iteration_spread"][0]["cv"] = 0.02;
  CHECK(error_of(j) == "raw.json: at /iteration_spread/0/cv: cv 0.02 is not stddev / mean = 0.009802");
  j = good();
  j["created"] = "21.11.2026";
  CHECK(error_of(j) == "raw.json: at /created: expected an ISO date-time like 2026-11-21T10:00:00Z, got '21.11.2026'");
  j = good();
  j["schema"] = "dtperf.calibration/4";
  CHECK(error_of(j) == "raw.json: at /schema: unsupported schema 'dtperf.calibration/4'; this dtperf reads "
                       "'dtperf.calibration/3', 'dtperf.calibration/2' and 'dtperf.calibration/1'");
  j = good();
  j.erase("truncated");
  CHECK(error_of(j) == "raw.json: at /truncated: missing required field 'truncated'");
}

namespace {

// Version 2's additions on one GPU: NCCL on one rank (busbw 0: 2(1-1)/1), an fp8 GEMM,
// and a GEMM beside an all-reduce. 1 MiB in 5 us: 1048576 / 5e3 = 209.7152 GB/s.
Json one_gpu() {
  Json j = good();
  j["schema"] = "dtperf.calibration/2";
  j["world"] = Json::parse(R"({"ranks": 1, "nodes": 1, "ranks_per_node": 1, "hosts": ["a"],
                               "placement": [{"rank": 0, "host": "a", "local_rank": 0}]})");
  j["collectives"] = Json::parse(R"([{"collective": "all_reduce", "group": "self", "ranks": 1, "nodes": 1,
      "concurrent_per_node": 1, "dtype": "float32", "warmup_iterations": 5, "iterations": 20, "points": [
        {"bytes": 1048576, "count": 262144, "time_us": 5.0, "time_us_min": 5.0, "time_us_max": 5.0,
         "algbw_GB_per_s": 209.7152, "busbw_GB_per_s": 0, "correct": true}]}])");
  j["gemm"][0]["dtype"] = "fp8";
  j["iteration_spread"].clear();
  j["contention"] = Json::parse(R"([{"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192, "collective": "all_reduce",
      "group": "self", "ranks": 1, "nodes": 1, "bytes": 268435456, "calls": 20, "gemm_time_us_alone": 1241.0,
      "gemm_time_us_beside": 1395.7, "collective_time_us_alone": 128.3, "collective_time_us_beside": 488.6,
      "covered": true}])");
  return j;
}

}  // namespace

TEST_CASE("version 2: NCCL on one rank, fp8 GEMMs and contention read", "[calibration_json]") {
  const RawCalibration raw = parse_calibration(one_gpu(), "raw.json");
  CHECK(raw.schema == "dtperf.calibration/2");
  REQUIRE(raw.collectives.size() == 1);
  CHECK(raw.collectives[0].group == "self");
  CHECK(raw.collectives[0].points[0].busbw_GB_per_s == 0.0);
  CHECK(raw.gemm[0].dtype == DType::fp8);
  REQUIRE(raw.contention.size() == 1);
  CHECK(raw.contention[0].bytes == 268435456.0);
  CHECK(raw.contention[0].collective_time_us_beside == 488.6);
  CHECK(raw.contention[0].covered);
}

TEST_CASE("version 2's additions are checked", "[calibration_json][errors]") {
  Json j = one_gpu();
  j["collectives"][0]["points"][0]["busbw_GB_per_s"] = 209.7152;  // one rank moves nothing over a bus
  CHECK(error_of(j) == "raw.json: at /collectives/0/points/0/busbw_GB_per_s: busbw 209.715 GB/s is not algbw x 0 = 0 "
                       "GB/s for all_reduce on 1 ranks");
  j = one_gpu();
  j["collectives"][0]["collective"] = "sendrecv";
  CHECK(error_of(j) == "raw.json: at /collectives/0/ranks: sendrecv runs on pairs: expected 2 ranks");
  j = one_gpu();
  j["collectives"][0]["group"] = "world";
  CHECK(error_of(j) == "raw.json: at /collectives/0/ranks: a collective needs at least 2 ranks, except on group 'self'");
  j = one_gpu();
  j["contention"][0]["group"] = "world";
  j["contention"][0]["ranks"] = 2;
  CHECK(error_of(j) == "raw.json: at /contention/0/ranks: group 'world' is all ranks: expected 1 ranks on 1 node(s), "
                       "got 2 on 1");
  j = one_gpu();
  j["contention"][0]["gemm_time_us_beside"] = 0;
  CHECK(error_of(j) == "raw.json: at /contention/0/gemm_time_us_beside: expected a number from 0.001 to 1e+10, got 0");
  j = one_gpu();
  j["contention"][0].erase("covered");
  CHECK(error_of(j) == "raw.json: at /contention/0/covered: missing required field 'covered'");
  j = one_gpu();
  j["schema"] = "dtperf.calibration/1";  // version 1 had no contention
  CHECK(error_of(j) == "raw.json: at /contention: contention is new in 'dtperf.calibration/2'; this file says "
                       "'dtperf.calibration/1'");
}

TEST_CASE("version 3's spread without stalls is read, and checked", "[calibration_json][errors]") {
  const Json spread = good()["iteration_spread"][0];
  Json j = one_gpu();
  j["schema"] = "dtperf.calibration/3";
  j["iteration_spread"] = Json::array({spread});
  j["iteration_spread"][0]["median_us"] = 1232.0;
  j["iteration_spread"][0]["robust_cv"] = 0.0071;
  const RawCalibration raw = parse_calibration(j, "raw.json");
  CHECK(raw.iteration_spread.at(0).median_us == 1232.0);
  CHECK(raw.iteration_spread.at(0).robust_cv == 0.0071);
  // Both or neither.
  j["iteration_spread"][0].erase("robust_cv");
  CHECK(error_of(j) == "raw.json: at /iteration_spread/0/median_us: median_us and robust_cv come together "
                       "(calibrate/FORMAT.md)");
  // Version 2 had neither: an unknown key there.
  j = one_gpu();
  j["iteration_spread"] = Json::array({spread});
  j["iteration_spread"][0]["robust_cv"] = 0.0071;
  CHECK(error_of(j).find("raw.json: at /iteration_spread/0/robust_cv: unknown key") == 0);
}
