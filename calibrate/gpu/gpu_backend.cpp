#include "gpu_backend.hpp"

#include <algorithm>
#include <iostream>

#include "../raw_format.hpp"
#include "cuda_check.hpp"

namespace dtperf::calibrate {

std::unique_ptr<PointOps> GpuBackend::ops_for(const PlanEntry& entry) {
  switch (entry.kind) {
    case EntryKind::gemm: return make_gemm_ops(rank_, entry);
    case EntryKind::copy: return make_copy_ops(rank_, entry.sizes_bytes);
    default: break;
  }
  int color = NCCL_SPLIT_NOCOLOR;
  const std::vector<int>* mine = nullptr;
  for (std::size_t c = 0; c < entry.communicators.size(); ++c) {
    const std::vector<int>& members = entry.communicators[c];
    if (std::find(members.begin(), members.end(), rank_.rank) == members.end()) continue;
    color = static_cast<int>(c);
    mine = &members;
  }
  if (entry.kind == EntryKind::sendrecv) {
    if (mine == nullptr || mine->size() != 2) return nullptr;
    return make_nccl_sendrecv_ops(rank_, (*mine)[0] == rank_.rank ? (*mine)[1] : (*mine)[0], entry.sizes_bytes);
  }
  // all_reduce: every world rank takes part in the split; ranks outside get no communicator.
  ncclComm_t comm = nullptr;
  DTPERF_NCCL_ON(rank_.world, ncclCommSplit(rank_.world, color, rank_.rank, &comm, nullptr));
  if (mine == nullptr) return nullptr;
  int rank_sum = 0;
  for (int member : *mine) rank_sum += member + 1;
  return make_nccl_all_reduce_ops(rank_, comm, rank_sum, entry.sizes_bytes);
}

std::vector<double> GpuBackend::spread_samples_s(int warmup, int iterations) {
  std::vector<double> aligned{0.0};
  control_.max_all(aligned);  // every rank starts together, as the ranks of a job do
  return gpu_spread_samples_s(rank_, warmup, iterations);
}

namespace {

void calibrate_rank(const Options& options, Budget::Clock::time_point start, GpuRank& rank, const GpuWorld& world) {
  Budget budget(options.budget_s, start);
  const Topology topology(world.places);
  const Plan plan = build_plan(topology, plan_settings(options, true), CostModel::gpu());
  GpuBackend backend(rank);
  const bool leader = rank.rank == 0;
  if (leader) {
    std::cerr << "dtperf-calibrate: NCCL backend, " << topology.world_size() << " GPUs on " << topology.node_count()
              << " node(s)" << (world.mpi ? " (MPI)" : " (one process)") << "; estimated "
              << static_cast<int>(plan.nominal_s()) << " s of " << options.budget_s << " s budget\n";
    for (const std::string& note : plan.notes) std::cerr << "dtperf-calibrate: note: " << note << "\n";
  }
  RawRun run;
  run.backend = "nccl";
  run.created = utc_now_iso();
  run.arguments = options.arguments;
  run.environment = captured_environment();
  run.versions = world.versions;
  set_world(run, topology);
  run_plan(plan, backend, budget, run);
  if (leader) {
    write_json_file(to_json(run), options.output);
    std::cerr << "dtperf-calibrate: wrote " << options.output << (run.truncated ? " (truncated to the budget)" : "")
              << "\n";
  }
}

}  // namespace

int run_gpu_calibration(const Options& options) {
  const Budget::Clock::time_point start = Budget::Clock::now();
  return launch_gpu_ranks(options, [&](GpuRank& rank, const GpuWorld& world) {
    calibrate_rank(options, start, rank, world);
  });
}

}  // namespace dtperf::calibrate
