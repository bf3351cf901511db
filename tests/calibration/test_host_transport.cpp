// The host backend's transport on loopback: ring all-reduce, control max, pair exchange,
// and a whole quick calibration run of 4 ranks on 2 named nodes.
#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "host/host_backend.hpp"
#include "host/host_comm.hpp"
#include "loopback_world.hpp"

using namespace dtperf::calibrate;
using dtperf::calibrate::testing::run_loopback_world;
using dtperf::calibrate::testing::run_threads;
using dtperf::calibrate::testing::TemporaryFolder;

namespace {

/// Runs an all-reduce of `count` floats on every rank; returns how many ranks got the
/// exact sum of all ranks' pattern values.
int ranks_with_exact_sum(int world_size, std::size_t count) {
  std::mutex mutex;
  int exact = 0;
  run_loopback_world(world_size, 2, [&](TcpMesh& mesh) {
    std::vector<int> members;
    for (int r = 0; r < world_size; ++r) members.push_back(r);
    HostComm comm(mesh, members);
    std::vector<float> send(count), recv(count, -1.0f);
    for (std::size_t i = 0; i < count; ++i) send[i] = pattern_value(mesh.rank(), i);
    comm.all_reduce_sum(send.data(), recv.data(), count);
    const int rank_sum = world_size * (world_size + 1) / 2;
    bool ok = true;
    for (std::size_t i = 0; i < count; ++i) ok = ok && recv[i] == static_cast<float>(rank_sum * static_cast<int>(i % 7 + 1));
    std::lock_guard<std::mutex> lock(mutex);
    exact += ok ? 1 : 0;
  });
  return exact;
}

}  // namespace

TEST_CASE("A ring all-reduce over loopback gives every rank the exact sum", "[calibrate][host]") {
  // Sizes below, at and above the number of ranks (empty segments send a placeholder byte),
  // an uneven split, and one large enough to arrive in many pieces.
  for (int world_size : {2, 3, 4}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{1001}, std::size_t{1} << 18}) {
      INFO("world size " << world_size << ", count " << count);
      CHECK(ranks_with_exact_sum(world_size, count) == world_size);
    }
  }
}

TEST_CASE("max_all leaves the element-wise maximum on every member", "[calibrate][host]") {
  std::mutex mutex;
  std::vector<std::vector<double>> seen;
  run_loopback_world(3, 1, [&](TcpMesh& mesh) {
    HostComm comm(mesh, {0, 1, 2});
    const double r = mesh.rank();
    std::vector<double> values{r, -r, r == 1 ? 7.5 : 0.0};
    comm.max_all(values);
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(values);
  });
  REQUIRE(seen.size() == 3);
  for (const auto& values : seen) CHECK(values == std::vector<double>{2.0, 0.0, 7.5});
}

TEST_CASE("exchange swaps equal-sized buffers between the two ranks of a pair", "[calibrate][host]") {
  std::mutex mutex;
  int correct = 0;
  const std::size_t count = std::size_t{3} << 20;  // 12 MiB each way: larger than socket buffers
  run_loopback_world(2, 1, [&](TcpMesh& mesh) {
    const int peer = 1 - mesh.rank();
    std::vector<float> send(count), recv(count, 0.0f);
    for (std::size_t i = 0; i < count; ++i) send[i] = pattern_value(mesh.rank(), i);
    exchange(mesh, peer, send.data(), recv.data(), count * sizeof(float));
    bool ok = true;
    for (std::size_t i = 0; i < count; ++i) ok = ok && recv[i] == pattern_value(peer, i);
    std::lock_guard<std::mutex> lock(mutex);
    correct += ok ? 1 : 0;
  });
  CHECK(correct == 2);
}

TEST_CASE("A rank that disappears makes its peer fail with a message naming it", "[calibrate][host]") {
  std::mutex mutex;
  std::string message;
  run_loopback_world(2, 1, [&](TcpMesh& mesh) {
    if (mesh.rank() == 1) return;  // closes its connection at once
    float value = 0.0f;
    try {
      mesh.recv(1, &value, sizeof value);
    } catch (const CalibrationError& e) {
      std::lock_guard<std::mutex> lock(mutex);
      message = e.what();
    }
  });
  CHECK_THAT(message, Catch::Contains("rank 1 closed its connection"));
}

TEST_CASE("A rendezvous that misses a rank times out naming the missing rank", "[calibrate][host]") {
  TemporaryFolder folder;
  Endpoint mine;
  mine.rank = 0;
  mine.world_size = 2;
  mine.node = "a";
  mine.address = "127.0.0.1";
  CHECK_THROWS_WITH(rendezvous(folder.str(), mine, 0.1), Catch::Contains("rank(s) 1 did not appear"));
}

TEST_CASE("A quick host calibration of 4 ranks on 2 nodes writes a complete raw file", "[calibrate][host]") {
  TemporaryFolder folder;
  const std::string output = folder.str() + "/raw.json";
  run_threads(4, [&](int rank) {
    Options options;
    options.backend = "host";
    options.rank = rank;
    options.world_size = 4;
    options.rendezvous = folder.str() + "/rendezvous";
    options.node = rank < 2 ? "node-a" : "node-b";
    options.address = "127.0.0.1";
    options.quick = true;
    options.max_bytes = "64K";
    options.warmup = 1;
    options.iterations = 2;
    options.spread_iterations = 5;
    options.output = output;
    options.arguments = {"dtperf-calibrate", "--backend", "host"};
    run_host_calibration(options);
  });
  std::ifstream in(output);
  REQUIRE(in);
  const nlohmann::json raw = nlohmann::json::parse(in);
  CHECK(raw["schema"] == "dtperf.calibration/3");
  CHECK(raw["backend"] == "host");
  CHECK(raw["world"]["ranks"] == 4);
  CHECK(raw["world"]["nodes"] == 2);
  CHECK(raw["world"]["hosts"] == nlohmann::json::array({"node-a", "node-b"}));
  CHECK(raw["world"]["placement"][3]["local_rank"] == 1);
  CHECK(raw["truncated"] == false);
  CHECK(raw["gemm"].empty());
  CHECK(raw["iteration_spread"].size() == 4);
  std::set<std::string> seen;
  for (const auto& entry : raw["collectives"]) {
    seen.insert(entry["collective"].get<std::string>() + " " + entry["group"].get<std::string>() + " " +
                std::to_string(entry["concurrent_per_node"].get<int>()));
    REQUIRE(!entry["points"].empty());
    double previous_bytes = 0;
    for (const auto& point : entry["points"]) {
      CHECK(point["correct"] == true);
      CHECK(point["bytes"].get<double>() > previous_bytes);
      CHECK(point["time_us"].get<double>() >= point["time_us_min"].get<double>());
      previous_bytes = point["bytes"].get<double>();
    }
    CHECK(entry["points"].back()["bytes"] == 65536);
  }
  // pair_intra and pair_inter all-reduce have the shapes of node and one_per_node here.
  CHECK(seen == std::set<std::string>{"all_reduce world 1", "all_reduce node 1", "all_reduce one_per_node 1",
                                      "sendrecv pair_intra 1", "sendrecv pair_inter 1", "sendrecv pair_inter 2"});
}
