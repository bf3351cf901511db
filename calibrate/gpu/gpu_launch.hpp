#pragma once
// Starting the ranks of a GPU calibration run.
//   Under an MPI launcher (mpirun, srun --mpi=...) with more than one process, when built
//   with MPI: one process per GPU; the node-local rank picks the device, rank 0 creates the
//   NCCL unique id and MPI broadcasts it; placements are gathered with MPI.
//   Otherwise (no MPI, or a single process): one process on one node, one thread per
//   local GPU, each calling ncclCommInitRank with a shared unique id.
// Each rank gets its device, a non-blocking stream and the world communicator.
#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../options.hpp"
#include "../topology.hpp"

namespace dtperf::calibrate {

struct GpuRank {
  int rank = 0;
  int world_size = 0;
  int device = 0;
  ncclComm_t world = nullptr;
  cudaStream_t stream = nullptr;
};

struct GpuWorld {
  bool mpi = false;                              // one process per rank
  std::vector<RankPlace> places;                 // every rank (index = rank)
  std::map<std::string, std::string> versions;   // cuda_runtime, cuda_driver, nccl, gpu_driver
};

/// Runs `body` on every rank this process hosts (threads run concurrently) and returns the
/// exit code. A rank that fails prints its error and ends the whole job with exit code 1,
/// since the other ranks would otherwise wait for it forever.
int launch_gpu_ranks(const Options& options, const std::function<void(GpuRank&, const GpuWorld&)>& body);

/// "13.0" from 13000, "2.28.9" from 22809 (NCCL's code for versions from 2.9 on).
std::string cuda_version_text(int version);
std::string nccl_version_text(int version);
/// The driver's version in the first line of /proc/driver/nvidia/version: the first word
/// of digits and dots after "Kernel Module" ("NVRM version: NVIDIA UNIX Open Kernel Module
/// for x86_64  580.159.04  Release Build ..." gives "580.159.04"); "" if none.
std::string driver_version_in(const std::string& line);

}  // namespace dtperf::calibrate
