#pragma once
// The command line of dtperf-calibrate (see calibrate/README.md). Host-backend ranks may
// also take their identity from the environment: DTPERF_RANK, DTPERF_WORLD_SIZE,
// DTPERF_RENDEZVOUS, DTPERF_NODE, DTPERF_ADDRESS, or a launcher's variables
// (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS, RANK/WORLD_SIZE).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "plan.hpp"

namespace dtperf::calibrate {

/// Whether this build has the GPU backend (CUDA runtime, cuBLAS and NCCL were found).
bool gpu_backend_built();

struct Options {
  std::string backend;  // "nccl" or "host"
  std::string output = "calibration.json";
  double budget_s = 120.0;
  bool quick = false;
  bool plan_only = false;
  std::string min_bytes = "8";
  std::string max_bytes;  // empty: the backend's default
  int warmup = -1, iterations = 0, spread_iterations = 0;  // -1 / 0: defaults
  int plan_nodes = 2, plan_ranks_per_node = 0;  // the world --plan assumes

  // Host backend: this rank and where to meet the others.
  int rank = -1, world_size = 0;
  std::string rendezvous, node, address;
  int port = 0;
  double rendezvous_timeout_s = 120.0, io_timeout_s = 300.0;

  // GPU backend: local GPUs for a run without MPI (0: all visible).
  int gpus = 0;

  std::vector<std::string> arguments;  // the command line as given
};

void add_options(CLI::App& app, Options& options);

/// Completes the host backend's identity from the environment and checks it; throws
/// UsageError naming the missing or wrong value.
void resolve_host_identity(Options& options);

/// The plan settings the options ask for (defaults applied).
PlanSettings plan_settings(const Options& options, bool gpu);

/// "8", "64K", "16M", "1G" (binary multiples, as nccl-tests reads -b/-e); throws UsageError.
std::uint64_t parse_bytes(const std::string& text, const std::string& option);

}  // namespace dtperf::calibrate
