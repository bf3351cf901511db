// dtperf-calibrate: runs the calibration microbenchmarks and writes the raw measurements
// (calibrate/FORMAT.md) for `dtperf fit`. Exit codes: 0 ok, 1 a measurement failed,
// 2 bad usage. Progress and errors go to stderr, --plan's table to stdout.
#include <CLI/CLI.hpp>

#include <iostream>

#include "error.hpp"
#include "host/host_backend.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "raw_format.hpp"
#ifdef DTPERF_CALIBRATE_GPU
#include "gpu/gpu_backend.hpp"
#endif

namespace {

using namespace dtperf::calibrate;

int print_plan(const Options& options) {
  const bool gpu = options.backend == "nccl";
  const int per_node = options.plan_ranks_per_node > 0 ? options.plan_ranks_per_node : (gpu ? 8 : 2);
  const Topology topology = Topology::uniform(options.plan_nodes, per_node);
  const Plan plan = build_plan(topology, plan_settings(options, gpu), gpu ? CostModel::gpu() : CostModel::host());
  std::cout << format_plan(plan, topology);
  return 0;
}

int run(Options& options) {
  if (options.plan_only) return print_plan(options);
  plan_settings(options, options.backend == "nccl");  // reject bad sizes before any set-up
  if (options.backend == "host") {
    resolve_host_identity(options);
    if (options.rank == 0) check_writable(options.output);  // rank 0 writes the file
    return run_host_calibration(options);
  }
#ifdef DTPERF_CALIBRATE_GPU
  check_writable(options.output);
  return run_gpu_calibration(options);
#else
  throw UsageError("this dtperf-calibrate was built without CUDA, cuBLAS and NCCL: use --backend host, "
                   "or rebuild with -Dcuda=enabled where they are installed");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dtperf-calibrate: measures collectives, GEMMs, copies and timing spread on this cluster and\n"
      "writes the raw measurements for `dtperf fit` (format: calibrate/FORMAT.md)."};
  app.set_version_flag("--version", kToolName);
  Options options;
  add_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  options.arguments.assign(argv, argv + argc);
  try {
    return run(options);
  } catch (const UsageError& e) {
    std::cerr << "dtperf-calibrate: error: " << e.what() << "\n";
    return 2;
  } catch (const CalibrationError& e) {
    const std::string who = options.backend == "host" ? "rank " + std::to_string(options.rank) + ": " : "";
    std::cerr << "dtperf-calibrate: " << who << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "dtperf-calibrate: internal error: " << e.what() << "\n";
    return 1;
  }
}
