#pragma once
// Test helper: N ranks of the host backend as threads of this process, meeting through a
// fresh rendezvous folder and connected over loopback. Catch2 assertions are not thread
// safe, so rank bodies record what they saw and the test checks it afterwards.
#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "host/rendezvous.hpp"
#include "host/tcp_mesh.hpp"

namespace dtperf::calibrate::testing {

/// A folder under the system's temporary folder, removed with this object.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("dtperf-calibrate-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// Runs `body(rank)` on `world_size` threads and rethrows the first exception.
inline void run_threads(int world_size, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world_size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        body(rank);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

/// Connects `world_size` ranks (node of rank r: "node<r / ranks_per_node>") and runs
/// `body(mesh)` on each.
inline void run_loopback_world(int world_size, int ranks_per_node, const std::function<void(TcpMesh&)>& body) {
  TemporaryFolder folder;
  run_threads(world_size, [&](int rank) {
    TcpMesh mesh(rank, world_size, 30.0);
    Endpoint mine;
    mine.rank = rank;
    mine.world_size = world_size;
    mine.node = "node" + std::to_string(rank / ranks_per_node);
    mine.host = "localhost";
    mine.address = "127.0.0.1";
    mine.port = mesh.listen(0);
    mine.cpu_model = "cpu";
    mesh.connect_all(rendezvous(folder.str(), mine, 30.0), 30.0);
    body(mesh);
  });
}

}  // namespace dtperf::calibrate::testing
