// Measured runs files (dtperf.runs/1): both forms, every key, and the messages for bad
// input (file, line or JSON pointer, reason).
#include <catch2/catch.hpp>

#include "dtperf/error.hpp"
#include "dtperf/io/runs_file.hpp"

using namespace dtperf;
using Catch::Matchers::Contains;

namespace {

std::string error_of(const std::string& text) {
  try {
    io::parse_runs(text, "runs.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a runs file as one JSON object", "[runs]") {
  const auto runs = io::parse_runs(R"({"schema": "dtperf.runs/1", "description": "two runs", "runs": [
      {"label": "ar-8", "scheme": "all-reduce", "nodes": 2, "gpus_per_node": 4, "global_batch": 25000,
       "bucket_cap_mib": 50, "algorithm": "ring", "nic_gbps": 25, "dtype": "fp16",
       "iteration_ms": {"median": 73.0, "p10": 72.0, "p90": 75.0},
       "breakdown_ms": {"forward": 20, "backward": 40, "exposed_comm": 10, "optimizer": 2}},
      {"scheme": "alternating-exp-ring", "nodes": 4, "gossip_bucket_mib": 100, "node_level": true, "iteration_ms": 45.8}]})",
                                   "runs.json");
  REQUIRE(runs.size() == 2);
  const MeasuredRun& a = runs[0];
  CHECK(a.label == "ar-8");
  CHECK(a.config.scheme.kind == Scheme::Kind::allreduce);
  CHECK(*a.config.cluster.nodes == 2);
  CHECK(*a.config.cluster.gpus_per_node == 4);
  CHECK(*a.config.cluster.nic_gbps == 25.0);
  CHECK(*a.config.cluster.dtype == DType::fp16);
  CHECK(*a.config.workload.global_batch == 25000.0);
  CHECK(a.config.allreduce.bucket_cap_bytes == 50.0 * 1024 * 1024);
  CHECK(a.config.allreduce.algorithm == Algorithm::ring);
  CHECK(a.measured.iteration_s == Approx(73e-3));
  CHECK(*a.measured.p10_s == Approx(72e-3));
  CHECK(*a.measured.p90_s == Approx(75e-3));
  CHECK(*a.measured.exposed_comm_s == Approx(10e-3));
  CHECK(a.measured.has_breakdown());
  const MeasuredRun& b = runs[1];
  CHECK(b.label == "run 2");  // unlabelled runs are numbered
  CHECK(b.config.scheme.topology == "alternating-exp-ring");
  CHECK(b.config.gossip.bucket_cap_bytes == 100.0 * 1024 * 1024);
  CHECK(b.config.gossip.node_level);
  CHECK(b.measured.iteration_s == Approx(45.8e-3));
  CHECK(!b.measured.has_breakdown());
}

TEST_CASE("a runs file as JSON lines: a header, then a run per line", "[runs]") {
  const auto runs = io::parse_runs(
      "{\"schema\": \"dtperf.runs/1\"}\n"
      "{\"label\": \"a\", \"scheme\": \"all-reduce\", \"nodes\": 1, \"iteration_ms\": 10}\n"
      "\n"
      "{\"label\": \"b\", \"scheme\": \"sgp\", \"nodes\": 2, \"iteration_ms\": 12}\n",
      "runs.jsonl");
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].file == "runs.jsonl:4");
  CHECK(runs[1].config.scheme.kind == Scheme::Kind::sgp);
}

TEST_CASE("a DiLoCo run carries its round: inner steps, groups, outer synchronisation and codec", "[runs][local-sgd]") {
  const auto runs = io::parse_runs(R"({"schema": "dtperf.runs/1", "runs": [
      {"scheme": "diloco", "nodes": 8, "inner_steps": 500, "group_nodes": 2, "outer": "gossip",
       "outer_sync": "streaming", "fragments": 5, "overlap_steps": 2, "outer_codec": "top-k",
       "top_k_fraction": 0.05, "iteration_ms": 40}]})",
                                   "runs.json");
  REQUIRE(runs.size() == 1);
  const LocalSgdOptions& l = runs[0].config.local_sgd;
  CHECK(runs[0].config.scheme.kind == Scheme::Kind::diloco);
  CHECK(l.inner_steps == 500);
  CHECK(l.group_nodes == 2);
  CHECK(l.outer_gossip);
  CHECK(l.sync == OuterSync::streaming);
  CHECK(l.fragments == 5);
  CHECK(l.overlap_steps == 2);
  CHECK(l.codec == OuterCodec::top_k);
  CHECK(l.top_k_fraction == 0.05);
}

TEST_CASE("a run with gradient accumulation carries its micro-steps", "[runs][accumulation]") {
  const auto runs = io::parse_runs(R"({"schema": "dtperf.runs/1", "runs": [
      {"scheme": "fsdp", "nodes": 4, "global_batch": 512, "grad_accum_steps": 8, "iteration_ms": 900}]})",
                                   "runs.json");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].config.workload.accumulation_steps == 8);
  CHECK(*runs[0].config.workload.global_batch == 512.0);
}

TEST_CASE("PyTorch's bucket_cap_mb is read as bucket_cap_mib (both count MiB), one of them per run", "[runs]") {
  const std::string head = R"({"schema": "dtperf.runs/1", "runs": [)";
  const auto runs = io::parse_runs(head + R"({"scheme": "all-reduce", "nodes": 2, "bucket_cap_mb": 50,
      "iteration_ms": 100}]})", "runs.json");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].config.allreduce.bucket_cap_bytes == 50.0 * 1024 * 1024);
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodes": 2, "bucket_cap_mb": 50, "bucket_cap_mib": 50,
      "iteration_ms": 100}]})"), Contains("/runs/0/bucket_cap_mb") && Contains("give one of them"));
}

TEST_CASE("a run may name the model it trained", "[runs][sized]") {
  const auto runs = io::parse_runs(R"({"schema": "dtperf.runs/1", "runs": [
      {"model": "gpt:layers=2,d=128,seq=256", "scheme": "fsdp", "nodes": 2, "iteration_ms": 90},
      {"scheme": "all-reduce", "nodes": 2, "iteration_ms": 80}]})",
                                   "runs.json");
  REQUIRE(runs.size() == 2);
  REQUIRE(runs[0].config.model);
  CHECK(runs[0].config.model_name == "gpt:layers=2,d=128,seq=256");
  // 2 x (12 x 128^2 + 13 x 128) + 2 x 128 + 50,257 x 128 + 256 x 128
  CHECK(runs[0].config.model->total_params() == 2 * (12 * 128 * 128 + 13 * 128) + 2 * 128 + 50257 * 128 + 256 * 128);
  CHECK_FALSE(runs[1].config.model);
  CHECK(error_of(R"({"schema": "dtperf.runs/1", "runs": [
      {"model": "gpt:layers=2", "scheme": "fsdp", "nodes": 2, "iteration_ms": 90}]})") ==
        "runs.json: at /runs/0/model: gpt:layers=2: give d=");
}

TEST_CASE("bad runs files name the place and the reason", "[runs][errors]") {
  const std::string head = R"({"schema": "dtperf.runs/1", "runs": [)";
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodez": 2, "iteration_ms": 1}]})"),
             Contains("/runs/0") && Contains("nodez") && Contains("nodes"));
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodes": 2}]})"),
             Contains("/runs/0/iteration_ms") && Contains("required"));
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodes": 0, "iteration_ms": 1}]})"),
             Contains("/runs/0/nodes"));
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodes": 1, "iteration_ms": -3}]})"),
             Contains("/runs/0/iteration_ms"));
  // Physical ranges (limits.hpp): 1e308 ms, and 2^20 nodes of 1,024 GPUs (a ring of 10^9
  // GPUs that never finished).
  CHECK(error_of(head + R"({"scheme": "all-reduce", "nodes": 1, "iteration_ms": 1e308}]})") ==
        "runs.json: at /runs/0/iteration_ms: expected a number from 1e-06 to 1e+07, got 1e+308");
  CHECK(error_of(head + R"({"scheme": "ring", "nodes": 1048576, "gpus_per_node": 1024, "iteration_ms": 1}]})") ==
        "runs.json: at /runs/0/gpus_per_node: 1048576 nodes x 1024 GPUs is over the limit of 1048576 GPUs");
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduce", "nodes": 1, "iteration_ms": {"median": 5, "p10": 6}}]})"),
             Contains("/runs/0/iteration_ms/p10") && Contains("above the median"));
  CHECK_THAT(error_of(head + R"({"scheme": "all-reduc", "nodes": 1, "iteration_ms": 1}]})"),
             Contains("/runs/0/scheme") && Contains("all-reduce"));
  CHECK_THAT(error_of(head + R"({"scheme": "sgp", "nodes": 1, "batch_per_gpu": 8, "global_batch": 64, "iteration_ms": 1}]})"),
             Contains("not both"));
  CHECK_THAT(error_of(head + R"({"label": "x", "scheme": "sgp", "nodes": 1, "iteration_ms": 1},
                                {"label": "x", "scheme": "sgp", "nodes": 1, "iteration_ms": 1}]})"),
             Contains("/runs/1") && Contains("label 'x'"));
  CHECK_THAT(error_of(head + R"({"scheme": "diloco", "nodes": 2, "inner_steps": 0, "iteration_ms": 1}]})"),
             Contains("/runs/0/inner_steps"));
  CHECK_THAT(error_of(head + R"({"scheme": "fsdp", "nodes": 2, "grad_accum_steps": 0, "iteration_ms": 1}]})"),
             Contains("/runs/0/grad_accum_steps"));
  CHECK_THAT(error_of(head + R"({"scheme": "fsdp", "nodes": 2, "grad_accum_steps": 2.5, "iteration_ms": 1}]})"),
             Contains("/runs/0/grad_accum_steps"));
  CHECK_THAT(error_of(head + R"({"scheme": "diloco", "nodes": 2, "outer_codec": "fp8", "iteration_ms": 1}]})"),
             Contains("/runs/0/outer_codec") && Contains("int4"));
  CHECK_THAT(error_of(head + R"({"scheme": "diloco", "nodes": 2, "top_k_fraction": 1.5, "iteration_ms": 1}]})"),
             Contains("/runs/0/top_k_fraction"));
  CHECK_THAT(error_of(head + "]}"), Contains("no runs"));
  CHECK_THAT(error_of(R"({"schema": "dtperf.runs/2", "runs": []})"), Contains("/schema"));
  CHECK_THAT(error_of(head + R"({"scheme": "sgp", "nodes": 4294967296, "iteration_ms": 1}]})"),
             Contains("/runs/0/nodes"));
  CHECK_THAT(error_of("{\"schema\": \"dtperf.runs/1\"}\n{\"scheme\": \"sgp\", \"nodes\": 1, \"iteration_ms\": 1\n"),
             Contains("runs.json:2"));
}
