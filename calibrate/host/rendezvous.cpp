#include "rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "../error.hpp"

namespace dtperf::calibrate {

namespace {

constexpr const char* kSchema = "dtperf.rendezvous/1";

std::string file_of(const std::string& folder, int rank) {
  return folder + "/rank-" + std::to_string(rank) + ".json";
}

std::string claim_of(const std::string& folder, int rank) {
  return folder + "/rank-" + std::to_string(rank) + ".claim";
}

// Claims the rank number for this process, or says who holds it.
void claim(const std::string& folder, const Endpoint& mine) {
  const std::string path = claim_of(folder, mine.rank);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0 && errno == EEXIST) {
    std::ifstream in(path);
    std::string holder;
    std::getline(in, holder);
    throw UsageError("rendezvous: rank " + std::to_string(mine.rank) + " was started twice (" + path +
                           " is held by " + (holder.empty() ? "another process" : holder) +
                           "); give every process its own rank, and an empty folder per run");
  }
  if (fd < 0) throw CalibrationError("rendezvous: cannot create " + path + ": " + std::strerror(errno));
  const std::string holder = "host " + mine.host + ", process " + std::to_string(::getpid()) + "\n";
  const bool written = ::write(fd, holder.data(), holder.size()) == static_cast<ssize_t>(holder.size());
  ::close(fd);
  if (!written) throw CalibrationError("rendezvous: cannot write " + path + ": " + std::strerror(errno));
}

void publish(const std::string& folder, const Endpoint& mine) {
  const nlohmann::json json{{"schema", kSchema},        {"rank", mine.rank},     {"world_size", mine.world_size},
                            {"node", mine.node},         {"host", mine.host},     {"address", mine.address},
                            {"port", mine.port},         {"cpu_model", mine.cpu_model}};
  const std::string path = file_of(folder, mine.rank);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << json.dump() << "\n";
    if (!out) throw CalibrationError("rendezvous: cannot write " + temporary + ": " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw CalibrationError("rendezvous: cannot rename " + temporary + ": " + std::strerror(errno));
  }
}

/// The endpoint in `path`, or false when the file is not there (yet).
bool read_endpoint(const std::string& path, Endpoint& endpoint) {
  std::ifstream in(path);
  if (!in) return false;
  nlohmann::json json;
  try {
    in >> json;
    if (json.at("schema") != kSchema) throw CalibrationError("rendezvous: " + path + " is not a rendezvous file");
    endpoint.rank = json.at("rank").get<int>();
    endpoint.world_size = json.at("world_size").get<int>();
    endpoint.node = json.at("node").get<std::string>();
    endpoint.host = json.at("host").get<std::string>();
    endpoint.address = json.at("address").get<std::string>();
    endpoint.port = json.at("port").get<int>();
    endpoint.cpu_model = json.at("cpu_model").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw CalibrationError("rendezvous: cannot read " + path + ": " + e.what());
  }
  return true;
}

void check_endpoint(const std::string& path, const Endpoint& endpoint, int rank, int world_size) {
  if (endpoint.rank != rank) {
    throw CalibrationError("rendezvous: " + path + " says rank " + std::to_string(endpoint.rank));
  }
  if (endpoint.world_size != world_size) {
    throw CalibrationError("rendezvous: rank " + std::to_string(rank) + " was started with world size " +
                           std::to_string(endpoint.world_size) + ", this rank with " + std::to_string(world_size));
  }
}

}  // namespace

std::vector<Endpoint> rendezvous(const std::string& folder, const Endpoint& mine, double timeout_s) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (!std::filesystem::is_directory(folder)) {
    throw CalibrationError("rendezvous: " + folder + " is not a folder and cannot be made one");
  }
  claim(folder, mine);
  publish(folder, mine);
  std::vector<Endpoint> endpoints(static_cast<std::size_t>(mine.world_size));
  std::vector<bool> seen(endpoints.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (std::size_t missing = endpoints.size(); missing > 0;) {
    for (std::size_t rank = 0; rank < endpoints.size(); ++rank) {
      const std::string path = file_of(folder, static_cast<int>(rank));
      if (seen[rank] || !read_endpoint(path, endpoints[rank])) continue;
      check_endpoint(path, endpoints[rank], static_cast<int>(rank), mine.world_size);
      seen[rank] = true;
      --missing;
    }
    if (missing == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string absent;
      for (std::size_t rank = 0; rank < seen.size(); ++rank) {
        if (!seen[rank]) absent += (absent.empty() ? "" : ", ") + std::to_string(rank);
      }
      throw CalibrationError("rendezvous in " + folder + ": rank(s) " + absent + " did not appear within " +
                             std::to_string(static_cast<int>(timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return endpoints;
}

void withdraw(const std::string& folder, int rank) {
  std::remove(file_of(folder, rank).c_str());
  std::remove(claim_of(folder, rank).c_str());
}

std::string default_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "127.0.0.1";
  std::string address = "127.0.0.1";
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_UP) == 0 || (entry->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof text) != nullptr) {
      address = text;
      break;
    }
  }
  freeifaddrs(list);
  return address;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return "cpu: " + line.substr(colon + 2);
  }
  return "cpu";
}

}  // namespace dtperf::calibrate
