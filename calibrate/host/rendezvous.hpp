#pragma once
// Rendezvous through a shared folder: each rank writes where it listens to
// `<folder>/rank-<R>.json` (atomically: temporary file, then rename) and waits until every
// rank of the world has done so. It needs nothing but a file system all ranks see, so it
// works across network namespaces and hosts that no launcher connects. Use an empty
// folder per run: files left by an earlier run would point at listeners that are gone.
// Each rank first claims its number with `<folder>/rank-<R>.claim`, created exclusively
// (O_EXCL): a second process started with the same rank finds the claim and stops at
// once, naming the host and process that hold it.
#include <string>
#include <vector>

namespace dtperf::calibrate {

struct Endpoint {
  int rank = 0;
  int world_size = 0;
  std::string node;       // node name (grouping key)
  std::string host;       // host name
  std::string address;    // IPv4 address the others connect to
  int port = 0;
  std::string cpu_model;  // "cpu: <model name>"
};

/// Publishes `mine` and returns every rank's endpoint (index = rank). Throws
/// CalibrationError when the rank is already claimed, a rank does not appear within
/// `timeout_s`, or a file disagrees on the world size or its own rank.
std::vector<Endpoint> rendezvous(const std::string& folder, const Endpoint& mine, double timeout_s);

/// Removes this rank's files (after every rank has connected).
void withdraw(const std::string& folder, int rank);

/// The first IPv4 address of an interface that is up and not loopback, else "127.0.0.1".
std::string default_address();

/// "cpu: <model name from /proc/cpuinfo>", or "cpu" when unknown.
std::string cpu_model_name();

}  // namespace dtperf::calibrate
