// Sweeps: grid indexing, rows equal to single evaluations, thread-count independence,
// refused axes, and the three row formats from one column list.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../src/cli/sweep_axes.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/csv.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/sweep_rows.hpp"
#include "dtperf/analysis/sweep.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;

namespace {

struct Base {
  ModelSpec model = *zoo_model("resnet50");
  Setup setup;
  Base() {
    setup.cluster = io::load_profile("p3dn-24xlarge");  // 8 nodes x 8 V100, 100 Gbit/s
    setup.model = &model;
  }
};

SweepAxes three_axes() {
  SweepAxes a;
  a.schemes = {Scheme::allreduce(), Scheme::gossip("ring")};
  a.nodes = {1, 2, 4};
  a.nic_gbps = {10.0, 100.0};
  return a;
}

std::vector<SweepRow> all_rows(const SweepGrid& grid, int threads, std::uint64_t block) {
  std::vector<SweepRow> rows;
  SweepRun run;
  run.threads = threads;
  run.block_points = block;
  run.sink = [&](std::span<const SweepRow> part, const std::string&) { rows.insert(rows.end(), part.begin(), part.end()); };
  run_sweep(grid, run);
  return rows;
}

}  // namespace

TEST_CASE("sweep grid: mixed-radix points, the last axis fastest", "[sweep]") {
  Base b;
  const SweepGrid grid(b.setup, three_axes());
  // 2 schemes x 3 node counts x 2 rates = 12 points; the other axes keep the base.
  REQUIRE(grid.size() == 12);
  // Index 5 = scheme 0 * 6 + nodes 2 * 2 + rate 1: All-Reduce, 4 nodes, 100 Gbit/s.
  const SweepPoint p = grid.point(5);
  CHECK(p.scheme->name() == "all-reduce");
  CHECK(p.nodes == 4);
  CHECK(p.nic_gbps == 100.0);
  CHECK(p.gpus_per_node == 8);  // the profile's
  CHECK(p.batch_per_gpu == b.model.default_batch_per_gpu);
  // Index 6 = scheme 1, nodes 0, rate 0: ring, 1 node, 10 Gbit/s.
  const SweepPoint q = grid.point(6);
  CHECK(q.scheme->name() == "ring");
  CHECK(q.nodes == 1);
  CHECK(q.nic_gbps == 10.0);
}

TEST_CASE("sweep rows equal single evaluations and do not depend on the thread count", "[sweep]") {
  Base b;
  SweepAxes axes = three_axes();
  axes.compression_ratio = {1.0, 4.0};
  const SweepGrid grid(b.setup, axes);
  const std::vector<SweepRow> one = all_rows(grid, 1, 1000);
  const std::vector<SweepRow> three = all_rows(grid, 3, 5);  // blocks of 5 over 3 threads
  REQUIRE(one.size() == 24);
  REQUIRE(three.size() == 24);
  for (std::size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].point.index == i);
    CHECK(three[i].point.index == i);
    CHECK(one[i].iteration.iteration_s == three[i].iteration.iteration_s);  // bitwise
  }
  // The text rendered on the workers arrives whole and in order too.
  const io::SweepWriter csv(io::RowFormat::csv, grid);
  const auto rendered = [&](int threads) {
    std::string all;
    SweepRun run;
    run.threads = threads;
    run.block_points = 5;
    run.render = [&](std::span<const SweepRow> rows, std::string& out) {
      for (const SweepRow& row : rows) csv.append(out, row);
    };
    run.sink = [&](std::span<const SweepRow>, const std::string& text) { all += text; };
    run_sweep(grid, run);
    return all;
  };
  const std::string text = rendered(1);
  CHECK(std::count(text.begin(), text.end(), '\n') == 24);
  CHECK(text == rendered(3));
  // Row 19 = scheme 1 * 12 + nodes 1 * 4 + rate 1 * 2 + compression 1: ring on 2 nodes
  // at 100 Gbit/s with 4x compression, evaluated on its own:
  Setup setup = b.setup;
  setup.workload.compression_ratio = 4.0;
  Evaluator evaluator(setup);
  ClusterProfile cluster = b.setup.cluster;
  cluster.nodes = 2;
  cluster.inter.nic_gbps = 100.0;
  const SchemeOutcome alone = evaluator.evaluate_on(cluster, Scheme::gossip("ring"));
  CHECK(one[19].point.scheme->name() == "ring");
  CHECK(one[19].iteration.iteration_s == alone.iteration.iteration_s);
  // More nodes at 10 Gbit/s: All-Reduce is slower per iteration (rows 0, 4, 8 at 1x).
  CHECK(one[0].iteration.iteration_s < one[4].iteration.iteration_s);
  CHECK(one[4].iteration.iteration_s < one[8].iteration.iteration_s);
}

TEST_CASE("sweep shards: shard K holds the points K, K+N, ...; together they are the grid", "[sweep]") {
  Base b;
  const SweepGrid grid(b.setup, three_axes());  // 12 points
  const std::vector<SweepRow> whole = all_rows(grid, 1, 4096);
  // 12 points in 5 shards: 3, 3, 2, 2, 2 rows.
  CHECK(shard_size(12, 0, 5) == 3);
  CHECK(shard_size(12, 1, 5) == 3);
  CHECK(shard_size(12, 2, 5) == 2);
  CHECK(shard_size(12, 4, 5) == 2);
  CHECK(shard_size(3, 4, 5) == 0);
  std::vector<int> seen(12, 0);
  for (std::uint64_t k = 0; k < 5; ++k) {
    std::vector<SweepRow> rows;
    std::vector<std::uint64_t> progress;
    SweepRun run;
    run.threads = 2;
    run.shard = k;
    run.shards = 5;
    run.sink = [&](std::span<const SweepRow> part, const std::string&) { rows.insert(rows.end(), part.begin(), part.end()); };
    run.progress = [&](std::uint64_t done, std::uint64_t total) {
      CHECK(total == shard_size(12, k, 5));
      progress.push_back(done);
    };
    run_sweep(grid, run);
    REQUIRE(rows.size() == shard_size(12, k, 5));
    REQUIRE_FALSE(progress.empty());
    CHECK(progress.back() == rows.size());
    for (std::size_t j = 0; j < rows.size(); ++j) {
      const std::uint64_t index = k + 5 * j;
      CHECK(rows[j].point.index == index);
      CHECK(rows[j].iteration.iteration_s == whole[index].iteration.iteration_s);  // bitwise
      ++seen[index];
    }
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("sweep chunks follow the cost: costly points are shared one at a time", "[sweep]") {
  Base b;
  SweepAxes axes = three_axes();
  axes.compression_ratio = {1.0, 2.0, 4.0, 8.0};
  const SweepGrid grid(b.setup, axes);  // 48 points
  // A round time far below one point's cost: every chunk is one point, taken by whichever
  // of the 3 threads is free (not one thread's block of 48).
  std::vector<std::size_t> sizes;
  std::vector<std::uint64_t> indices;
  SweepRun run;
  run.threads = 3;
  run.round_seconds = 1e-12;
  run.sink = [&](std::span<const SweepRow> part, const std::string&) {
    sizes.push_back(part.size());
    for (const SweepRow& row : part) indices.push_back(row.point.index);
  };
  run_sweep(grid, run);
  CHECK(sizes == std::vector<std::size_t>(48, 1));
  for (std::size_t i = 0; i < indices.size(); ++i) CHECK(indices[i] == i);
  // Cheap points at a round time of an hour: the first round's 12 chunks (4 per thread) of
  // one point measure the cost, then chunks double each round up to the cap,
  // block_points / 4 = 4: 12 chunks of 2 (24 points), and the 12 points left are 3
  // chunks of 4.
  sizes.clear();
  run.round_seconds = 3600.0;
  run.block_points = 16;
  run_sweep(grid, run);
  std::vector<std::size_t> expected(12, 1);
  expected.insert(expected.end(), 12, 2);
  expected.insert(expected.end(), 3, 4);
  CHECK(sizes == expected);
  // With no cap in sight (4096 per chunk), rounds grow 12, 24, 48, ... points: none
  // takes all the rest after a first round of cheap points, as a costly point further on
  // would then hold every row and the progress until the whole grid ends.
  std::vector<std::uint64_t> done;
  run.block_points = 4096;
  run.sink = nullptr;
  run.progress = [&](std::uint64_t d, std::uint64_t) { done.push_back(d); };
  run_sweep(grid, run);
  CHECK(done == std::vector<std::uint64_t>{12, 36, 48});
}

TEST_CASE("sweep rows: a topology that does not fit is a row with its reason", "[sweep]") {
  Base b;
  SweepAxes axes;
  axes.schemes = {Scheme::gossip("one-peer-exp")};
  axes.nodes = {2, 3};
  axes.gpus_per_node = {1};
  const std::vector<SweepRow> rows = all_rows(SweepGrid(b.setup, axes), 2, 1);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].available);
  CHECK_FALSE(rows[1].available);  // 3 ranks: not a power of two
  CHECK(rows[1].unavailable_reason.find("power-of-two") != std::string::npos);
}

TEST_CASE("sweep with a compute-cv axis: quantiles, and CV 0 is the deterministic engine", "[sweep]") {
  Base b;
  SweepAxes axes;
  axes.nodes = {2};
  axes.compute_cv = {0.0, 0.2};
  b.setup.variability.iterations = 200;
  const std::vector<SweepRow> rows = all_rows(SweepGrid(b.setup, axes), 1, 8);
  REQUIRE(rows.size() == 2);
  CHECK_FALSE(rows[0].has_quantiles);
  REQUIRE(rows[1].has_quantiles);
  CHECK(rows[1].iteration_p99_s > rows[1].iteration_p50_s);
  // With 16 GPUs waiting for the slowest each iteration, the mean grows with the CV.
  CHECK(rows[1].iteration.iteration_s > rows[0].iteration.iteration_s);
}

TEST_CASE("sweep axes out of range are refused naming the axis", "[sweep][errors]") {
  Base b;
  const auto message = [&](SweepAxes axes) {
    try {
      SweepGrid grid(b.setup, std::move(axes));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  SweepAxes zero_rate;
  zero_rate.nic_gbps = {10.0, 0.0};
  CHECK(message(zero_rate).find("nic-gbps=0 is outside [0.001,") != std::string::npos);
  SweepAxes too_many_gpus;
  too_many_gpus.nodes = {1048576};
  too_many_gpus.gpus_per_node = {2};
  CHECK(message(too_many_gpus).find("2097152 GPUs") != std::string::npos);
  b.setup.variability.slow_ranks = {{20, 1.5}};
  SweepAxes small;
  small.nodes = {2, 8};  // 2 x 8 = 16 ranks: rank 20 is not there
  CHECK(message(small).find("slow rank 20") != std::string::npos);
  b.setup.variability.slow_ranks.clear();
  b.setup.workload.global_batch = 1024;
  SweepAxes batch;
  batch.batch_per_gpu = {32};
  CHECK(message(batch).find("--global-batch") != std::string::npos);
}

TEST_CASE("sweep axis values: lists and ranges", "[sweep][cli]") {
  using cli::expand_numbers;
  CHECK(expand_numbers("nodes", "1:64:x2") == std::vector<double>{1, 2, 4, 8, 16, 32, 64});
  CHECK(expand_numbers("nodes", "1:4") == std::vector<double>{1, 2, 3, 4});
  CHECK(expand_numbers("nic-gbps", "10,25,100") == std::vector<double>{10, 25, 100});
  // 0.1 + 2 x 0.1 is 0.30000000000000004 > 0.3: the end is kept within a relative 1e-9.
  const std::vector<double> cv = expand_numbers("compute-cv", "0:0.3:0.1");
  REQUIRE(cv.size() == 4);
  CHECK(cv[3] == Approx(0.3));
  CHECK(expand_numbers("nic-gbps", "10:100:45,400") == std::vector<double>{10, 55, 100, 400});
  const auto refused = [](const std::string& values) {
    try {
      (void)expand_numbers("nodes", values);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("8:1").find("ends before it starts") != std::string::npos);
  CHECK(refused("1:8:0").find("step must be greater than 0") != std::string::npos);
  CHECK(refused("1:8:x1").find("factor must be greater than 1") != std::string::npos);
  CHECK(refused("1,,2").find("'' is not a number") != std::string::npos);
  CHECK(refused("1:1e12").find("more than 10000000 values") != std::string::npos);
  const auto axes_refused = [](const std::vector<std::string>& vary) {
    try {
      (void)cli::parse_axes(vary);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(axes_refused({"node=1,2"}).find("unknown axis 'node' (did you mean 'nodes'?)") != std::string::npos);
  CHECK(axes_refused({"nodes=1.5"}).find("1.5 is not a whole number") != std::string::npos);
  CHECK(axes_refused({"nodes=1", "nodes=2"}).find("given twice") != std::string::npos);
  CHECK(axes_refused({"scheme=rign"}).find("did you mean 'ring'?") != std::string::npos);
  CHECK(cli::parse_axes({"scheme=all"}).axes.schemes.size() >= 8);
  // A model by size keeps its own commas: four models here.
  CHECK(cli::parse_axes({"model=resnet50,gpt:layers=24,d=2048,seq=2048,llama:layers=2,d=256,vgg16"}).models ==
        std::vector<std::string>{"resnet50", "gpt:layers=24,d=2048,seq=2048", "llama:layers=2,d=256", "vgg16"});
}

TEST_CASE("sweep rows: CSV, JSON lines and the table from one column list", "[sweep][io]") {
  Base b;
  b.model.name = "resnet50, \"v1.5\"";  // a name that needs quoting in CSV and escaping in JSON
  SweepAxes axes;
  axes.schemes = {Scheme::allreduce(), Scheme::gossip("one-peer-exp")};
  axes.nodes = {3};
  axes.gpus_per_node = {1};
  const SweepGrid grid(b.setup, axes);
  const std::vector<SweepRow> rows = all_rows(grid, 1, 8);
  REQUIRE(rows.size() == 2);

  const io::SweepWriter csv(io::RowFormat::csv, grid);
  const std::vector<std::string> names = io::sweep_column_names();
  std::string expected_header;
  for (const std::string& n : names) expected_header += (expected_header.empty() ? "" : ",") + n;
  CHECK(csv.header() == expected_header + "\n");
  std::string line;
  csv.append(line, rows[0]);
  CHECK(line.rfind("0,\"resnet50, \"\"v1.5\"\"\",all-reduce,3,1,3,100,", 0) == 0);
  CHECK(line.back() == '\n');
  CHECK(line.ends_with(",\n"));  // no reason: the last field is empty

  const io::SweepWriter jsonl(io::RowFormat::jsonl, grid);
  std::string text;
  jsonl.append(text, rows[1]);  // one-peer-exp on 3 ranks: not available
  const io::Json json = io::parse_json_text(text, "row");
  CHECK(json["model"] == "resnet50, \"v1.5\"");
  CHECK(json["gpus"] == 3);
  CHECK(json["iteration_ms"].is_null());
  CHECK(json["unavailable_reason"].get<std::string>().find("power-of-two") != std::string::npos);
  CHECK(json.size() == names.size());

  const io::SweepWriter table(io::RowFormat::table, grid);
  const std::string header = table.header();
  CHECK(header.find("scheme") != std::string::npos);   // varied
  CHECK(header.find("GPUs/node") != std::string::npos);  // given as an axis
  CHECK(header.find("compress") == std::string::npos);  // not varied
  std::string table_row;
  table.append(table_row, rows[1]);
  CHECK(table_row.find(" - ") != std::string::npos);
  CHECK(table_row.find("needs a power-of-two") != std::string::npos);
}

TEST_CASE("reports as CSV: records flattened, columns in the order first met", "[io][csv]") {
  const io::Json records = io::parse_json_text(R"([
    {"scheme": "all-reduce", "iteration_ms": 12.5, "at": {"line_rate": 1, "x": null}},
    {"scheme": "ring, \"fast\"", "steps": [1, 2], "iteration_ms": 10}
  ])", "records");
  // nlohmann objects keep their keys sorted: at.line_rate, at.x, iteration_ms, scheme; then steps.
  CHECK(io::csv_from_records(records) ==
        "at.line_rate,at.x,iteration_ms,scheme,steps\n"
        "1,,12.5,all-reduce,\n"
        ",,10,\"ring, \"\"fast\"\"\",\"[1,2]\"\n");
  CHECK(io::csv_from_records(io::parse_json_text(R"({"a": true})", "one")) == "a\ntrue\n");
  CHECK_THROWS_AS(io::csv_from_records(io::parse_json_text("[1]", "bad")), std::invalid_argument);
}
