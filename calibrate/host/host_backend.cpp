#include "host_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "../error.hpp"
#include "rendezvous.hpp"

namespace dtperf::calibrate {

namespace {

std::vector<int> all_ranks(int world_size) {
  std::vector<int> ranks(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return ranks;
}

Topology topology_of(const std::vector<Endpoint>& endpoints) {
  std::vector<RankPlace> places;
  for (const Endpoint& endpoint : endpoints) {
    RankPlace place;
    place.rank = endpoint.rank;
    place.node = endpoint.node;
    place.host = endpoint.node;
    place.device_name = endpoint.cpu_model;
    places.push_back(place);
  }
  return Topology(std::move(places));
}

std::string this_host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

HostBackend::HostBackend(TcpMesh& mesh)
    : mesh_(mesh), world_(mesh, all_ranks(mesh.world_size())), control_(world_) {}

std::unique_ptr<PointOps> HostBackend::ops_for(const PlanEntry& entry) {
  const int me = mesh_.rank();
  for (const std::vector<int>& members : entry.communicators) {
    if (std::find(members.begin(), members.end(), me) == members.end()) continue;
    if (entry.kind == EntryKind::all_reduce) return make_all_reduce_ops(mesh_, members, entry.sizes_bytes);
    if (entry.kind == EntryKind::sendrecv && members.size() == 2) {
      return make_sendrecv_ops(mesh_, members[0] == me ? members[1] : members[0], entry.sizes_bytes);
    }
  }
  return nullptr;
}

std::vector<double> HostBackend::spread_samples_s(int warmup, int iterations) {
  std::vector<double> aligned{0.0};
  control_.max_all(aligned);  // every rank starts together, as the ranks of a job do
  for (int i = 0; i < warmup; ++i) cpu_workload_s();
  std::vector<double> samples_s;
  for (int i = 0; i < iterations; ++i) samples_s.push_back(cpu_workload_s());
  return samples_s;
}

int run_host_calibration(const Options& options) {
  Budget budget(options.budget_s);
  TcpMesh mesh(options.rank, options.world_size, options.io_timeout_s);
  Endpoint mine;
  mine.rank = options.rank;
  mine.world_size = options.world_size;
  mine.node = options.node;
  mine.host = this_host_name();
  mine.address = options.address;
  mine.port = mesh.listen(options.port);
  mine.cpu_model = cpu_model_name();
  const std::vector<Endpoint> endpoints = rendezvous(options.rendezvous, mine, options.rendezvous_timeout_s);
  mesh.connect_all(endpoints, options.rendezvous_timeout_s);

  const Topology topology = topology_of(endpoints);
  const Plan plan = build_plan(topology, plan_settings(options, false), CostModel::host());
  HostBackend backend(mesh);
  std::vector<double> connected{0.0};
  backend.control().max_all(connected);  // every rank has read every file: they may go
  withdraw(options.rendezvous, options.rank);
  const bool leader = options.rank == 0;
  if (leader) {
    std::cerr << "dtperf-calibrate: host backend, " << topology.world_size() << " ranks on " << topology.node_count()
              << " node(s); estimated " << static_cast<int>(plan.nominal_s()) << " s of " << options.budget_s
              << " s budget\n";
    for (const std::string& note : plan.notes) std::cerr << "dtperf-calibrate: note: " << note << "\n";
  }
  RawRun run;
  run.backend = "host";
  run.created = utc_now_iso();
  run.arguments = options.arguments;
  run.environment = captured_environment();
  set_world(run, topology);
  // A CPU rank has no GPU ordinal; the raw format's device is its index on its node.
  for (RankPlace& place : run.placement) place.device = place.local_rank;
  run_plan(plan, backend, budget, run);
  if (leader) {
    write_json_file(to_json(run), options.output);
    std::cerr << "dtperf-calibrate: wrote " << options.output << (run.truncated ? " (truncated to the budget)" : "")
              << "\n";
  }
  std::vector<double> finished{0.0};
  backend.control().max_all(finished);  // no rank closes its sockets while others still read
  return 0;
}

}  // namespace dtperf::calibrate
