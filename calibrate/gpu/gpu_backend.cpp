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

std::optional<ContentionSample> GpuBackend::contention_sample(const Plan& plan) {
  return gpu_contention_sample(rank_, control_, plan.contention_bytes);
}

namespace {

/// FP8 GEMMs where every rank's GPU has them (compute capability 8.9 and later: Ada, Hopper
/// and newer), agreed over the world so that every rank runs the same plan.
bool world_has_fp8(GpuRank& rank, Control& control) {
  cudaDeviceProp properties{};
  DTPERF_CUDA(cudaGetDeviceProperties(&properties, rank.device));
  const bool fp8 = properties.major * 10 + properties.minor >= 89;
  std::vector<double> lacking{fp8 ? 0.0 : 1.0};
  control.max_all(lacking);
  return lacking[0] == 0.0;
}

void calibrate_rank(const Options& options, Budget::Clock::time_point start, GpuRank& rank, const GpuWorld& world) {
  Budget budget(options.budget_s, start);
  const Topology topology(world.places);
  GpuBackend backend(rank);
  PlanSettings settings = plan_settings(options, true);
  settings.fp8 = world_has_fp8(rank, backend.control());
  const Plan plan = build_plan(topology, settings, CostModel::gpu());
  const bool leader = rank.rank == 0;
  if (leader) {
    std::cerr << "dtperf-calibrate: NCCL backend, " << topology.world_size() << " GPUs on " << topology.node_count()
              << " node(s)" << (world.mpi ? " (MPI)" : " (one process)") << "; estimated "
              << static_cast<int>(plan.nominal_s()) << " s of " << options.budget_s << " s budget\n";
    if (!settings.fp8) std::cerr << "dtperf-calibrate: note: gemm fp8 skipped: needs compute capability 8.9 or later\n";
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
