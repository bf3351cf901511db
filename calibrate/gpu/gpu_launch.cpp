#include "gpu_launch.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "../error.hpp"
#include "cuda_check.hpp"

#ifdef DTPERF_CALIBRATE_MPI
// The C API only: Open MPI's and MPICH's C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace dtperf::calibrate {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string nccl_version_text(int version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

std::string driver_version_in(const std::string& line) {
  const std::size_t module = line.find("Kernel Module");
  if (module == std::string::npos) return "";
  std::istringstream words(line.substr(module));
  std::string word;
  while (words >> word) {
    const bool version = word.find('.') != std::string::npos &&
                         word.find_first_not_of("0123456789.") == std::string::npos && word.front() != '.';
    if (version) return word;
  }
  return "";
}

namespace {

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

/// The kernel module's version from /proc/driver/nvidia/version, or "".
std::string gpu_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  return driver_version_in(line);
}

std::map<std::string, std::string> library_versions() {
  int runtime = 0, driver = 0, nccl = 0;
  DTPERF_CUDA(cudaRuntimeGetVersion(&runtime));
  DTPERF_CUDA(cudaDriverGetVersion(&driver));
  DTPERF_NCCL(ncclGetVersion(&nccl));
  return {{"cuda_runtime", cuda_version_text(runtime)}, {"cuda_driver", cuda_version_text(driver)},
          {"nccl", nccl_version_text(nccl)}, {"gpu_driver", gpu_driver_version()}};
}

RankPlace describe_device(int rank, int local_rank, int device, const std::string& node) {
  cudaDeviceProp properties{};
  DTPERF_CUDA(cudaGetDeviceProperties(&properties, device));
  char bus_id[32] = {};
  DTPERF_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  RankPlace place;
  place.rank = rank;
  place.node = node;
  place.host = node;
  place.local_rank = local_rank;
  place.device = device;
  place.device_name = properties.name;
  place.bus_id = bus_id;
  return place;
}

/// Sets up one rank (device, stream, world communicator), runs `body`, tears down.
void run_rank(GpuRank rank, const ncclUniqueId& id, const GpuWorld& world,
              const std::function<void(GpuRank&, const GpuWorld&)>& body) {
  set_check_context("rank " + std::to_string(rank.rank) + " (device " + std::to_string(rank.device) + ")");
  DTPERF_CUDA(cudaSetDevice(rank.device));
  DTPERF_CUDA(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
  DTPERF_NCCL(ncclCommInitRank(&rank.world, rank.world_size, id, rank.rank));
  body(rank, world);
  DTPERF_NCCL_ON(rank.world, ncclCommDestroy(rank.world));
  DTPERF_CUDA(cudaStreamDestroy(rank.stream));
}

[[noreturn]] void end_job(int rank, const std::string& message, bool mpi) {
  std::cerr << "dtperf-calibrate: rank " << rank << ": error: " << message << std::endl;
#ifdef DTPERF_CALIBRATE_MPI
  if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  (void)mpi;
  std::_Exit(1);
}

int run_threads(const Options& options, const std::function<void(GpuRank&, const GpuWorld&)>& body) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    throw CalibrationError(std::string("no usable GPU: ") +
                           (status == cudaSuccess ? "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)"
                                                  : cudaGetErrorString(status)) +
                           "; on a machine without GPUs use --backend host");
  }
  const int ranks = options.gpus > 0 ? options.gpus : devices;
  if (ranks > devices) {
    throw UsageError("--gpus " + std::to_string(ranks) + ": only " + std::to_string(devices) + " GPUs are visible");
  }
  GpuWorld world;
  const std::string node = options.node.empty() ? host_name() : options.node;
  for (int r = 0; r < ranks; ++r) world.places.push_back(describe_device(r, r, r, node));
  world.versions = library_versions();
  ncclUniqueId id{};
  DTPERF_NCCL(ncclGetUniqueId(&id));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        run_rank(GpuRank{r, ranks, r, nullptr, nullptr}, id, world, body);
      } catch (const std::exception& e) {
        end_job(r, e.what(), false);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return 0;
}

#ifdef DTPERF_CALIBRATE_MPI
/// A rank's place as fixed-size fields, for MPI_Allgather.
struct PackedPlace {
  char node[128];
  char device_name[128];
  char bus_id[32];
  int local_rank;
  int device;
};

PackedPlace pack(const RankPlace& place) {
  PackedPlace packed{};
  std::snprintf(packed.node, sizeof packed.node, "%s", place.node.c_str());
  std::snprintf(packed.device_name, sizeof packed.device_name, "%s", place.device_name.c_str());
  std::snprintf(packed.bus_id, sizeof packed.bus_id, "%s", place.bus_id.c_str());
  packed.local_rank = place.local_rank;
  packed.device = place.device;
  return packed;
}

int run_mpi_rank(const Options& options, int rank, int world_size,
                 const std::function<void(GpuRank&, const GpuWorld&)>& body) {
  try {
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    int local_rank = 0, local_size = 0, devices = 0;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    DTPERF_CUDA(cudaGetDeviceCount(&devices));
    if (local_size > devices) {
      throw CalibrationError(std::to_string(local_size) + " ranks share a node with " + std::to_string(devices) +
                             " visible GPUs: start one rank per GPU");
    }
    const std::string node = options.node.empty() ? host_name() : options.node;
    std::vector<PackedPlace> packed(static_cast<std::size_t>(world_size));
    PackedPlace mine = pack(describe_device(rank, local_rank, local_rank, node));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, packed.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    GpuWorld world;
    world.mpi = true;
    for (int r = 0; r < world_size; ++r) {
      const PackedPlace& p = packed[static_cast<std::size_t>(r)];
      world.places.push_back(RankPlace{r, p.node, p.node, p.local_rank, p.device, p.device_name, p.bus_id});
    }
    world.versions = library_versions();
    ncclUniqueId id{};
    if (rank == 0) DTPERF_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    run_rank(GpuRank{rank, world_size, local_rank, nullptr, nullptr}, id, world, body);
  } catch (const std::exception& e) {
    end_job(rank, e.what(), true);
  }
  MPI_Finalize();
  return 0;
}
#endif

}  // namespace

int launch_gpu_ranks(const Options& options, const std::function<void(GpuRank&, const GpuWorld&)>& body) {
#ifdef DTPERF_CALIBRATE_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size > 1) return run_mpi_rank(options, rank, world_size, body);
  struct Finalize {
    ~Finalize() { MPI_Finalize(); }
  } finalize_on_return;
  return run_threads(options, body);
#else
  return run_threads(options, body);
#endif
}

}  // namespace dtperf::calibrate
