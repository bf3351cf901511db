#include "options.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "error.hpp"
#include "host/rendezvous.hpp"


namespace {

// CLI11's number checks let NaN through (every comparison with NaN is false): a NaN
// timeout waited forever. Every numeric option also passes this.
const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(x)) return "'" + text.substr(0, 24) + "' is not a finite number";
      return {};
    },
    "");

}  // namespace

namespace dtperf::calibrate {

bool gpu_backend_built() {
#ifdef DTPERF_CALIBRATE_GPU
  return true;
#else
  return false;
#endif
}

void add_options(CLI::App& app, Options& o) {
  o.backend = gpu_backend_built() ? "nccl" : "host";
  app.add_option("--backend", o.backend, "nccl: GPUs with NCCL and cuBLAS; host: CPU ranks over TCP")
      ->type_name("nccl|host")->check(CLI::IsMember({"nccl", "host"}))->capture_default_str();
  app.add_option("-o,--output", o.output, "Raw calibration JSON to write (rank 0; '-' for stdout)")
      ->type_name("FILE")->capture_default_str();
  app.add_option("--budget-s", o.budget_s, "Time budget: the plan is trimmed to fit and marked truncated")
      ->type_name("SECONDS")->check(CLI::Range(1.0, 86400.0))->check(kFinite)->capture_default_str();
  app.add_flag("--quick", o.quick, "A smaller plan: fewer groups, sizes, shapes and iterations");
  app.add_flag("--plan", o.plan_only, "Print what would be measured and exit (no ranks needed)");
  app.add_option("--min-bytes", o.min_bytes, "Smallest message of the sweeps")->type_name("BYTES")->capture_default_str();
  app.add_option("--max-bytes", o.max_bytes,
                 "Largest message (default 1G on GPUs, 64M on hosts; --quick: 256M, 4M)")->type_name("BYTES");
  app.add_option("--warmup", o.warmup, "Untimed calls per point (default 5, --quick 2)")
      ->type_name("N")->check(CLI::Range(0, 1000))->check(kFinite);
  app.add_option("--iterations", o.iterations, "Timed calls per point (default 20, --quick 5)")
      ->type_name("N")->check(CLI::Range(1, 100000))->check(kFinite);
  app.add_option("--spread-iterations", o.spread_iterations, "Runs of the fixed workload per rank (default 50)")
      ->type_name("N")->check(CLI::Range(2, 100000))->check(kFinite);
  app.add_option("--nodes", o.plan_nodes, "--plan only: nodes of the assumed world")
      ->type_name("N")->check(CLI::Range(1, 100000))->check(kFinite)->capture_default_str();
  app.add_option("--ranks-per-node", o.plan_ranks_per_node, "--plan only: ranks per node (default 8 GPUs, 2 hosts)")
      ->type_name("N")->check(CLI::Range(1, 1024))->check(kFinite);

  const char* host = "Host backend (each rank is one process)";
  app.add_option("--rank", o.rank, "This rank (or DTPERF_RANK, a launcher's rank variable)")
      ->type_name("R")->check(CLI::NonNegativeNumber)->check(kFinite)->group(host);
  app.add_option("--world-size", o.world_size, "Number of ranks (or DTPERF_WORLD_SIZE, ...)")
      ->type_name("N")->check(CLI::PositiveNumber)->check(kFinite)->group(host);
  app.add_option("--rendezvous", o.rendezvous, "Shared folder where ranks publish their addresses (empty per run)")
      ->type_name("DIR")->group(host);
  app.add_option("--node", o.node, "Node name; ranks with the same name form a node (default: host name)")
      ->type_name("NAME")->group(host);
  app.add_option("--address", o.address, "IPv4 address the other ranks reach this one at (default: first non-loopback)")
      ->type_name("IP")->group(host);
  app.add_option("--port", o.port, "TCP port to listen on (default: any free port)")
      ->type_name("PORT")->check(CLI::Range(0, 65535))->check(kFinite)->group(host);
  app.add_option("--rendezvous-timeout-s", o.rendezvous_timeout_s, "How long to wait for the other ranks")
      ->type_name("SECONDS")->check(CLI::Range(1e-3, 604800.0))->check(kFinite)->capture_default_str()->group(host);
  app.add_option("--io-timeout-s", o.io_timeout_s, "Fail when no data moves for this long")
      ->type_name("SECONDS")->check(CLI::PositiveNumber)->check(kFinite)->capture_default_str()->group(host);

  app.add_option("--gpus", o.gpus, "GPU backend without MPI: local GPUs to use, one thread each (default: all)")
      ->type_name("N")->check(CLI::NonNegativeNumber)->check(kFinite)->group("GPU backend");
}

namespace {

const char* first_set(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return nullptr;
}

int integer_from(const char* text, const char* what) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 1000000) {
    throw UsageError(std::string(what) + " from the environment is not a count: '" + text + "'");
  }
  return static_cast<int>(value);
}

}  // namespace

void resolve_host_identity(Options& o) {
  if (o.rank < 0) {
    if (const char* v = first_set({"DTPERF_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"})) {
      o.rank = integer_from(v, "the rank");
    }
  }
  if (o.world_size <= 0) {
    if (const char* v = first_set({"DTPERF_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"})) {
      o.world_size = integer_from(v, "the world size");
    }
  }
  if (o.rendezvous.empty()) {
    if (const char* v = first_set({"DTPERF_RENDEZVOUS"})) o.rendezvous = v;
  }
  if (o.node.empty()) {
    if (const char* v = first_set({"DTPERF_NODE", "SLURMD_NODENAME"})) o.node = v;
  }
  if (o.address.empty()) {
    if (const char* v = first_set({"DTPERF_ADDRESS"})) o.address = v;
  }
  if (o.rank < 0) throw UsageError("--rank is required for --backend host (or set DTPERF_RANK)");
  if (o.world_size <= 0) throw UsageError("--world-size is required for --backend host (or set DTPERF_WORLD_SIZE)");
  if (o.rank >= o.world_size) {
    throw UsageError("--rank " + std::to_string(o.rank) + " is not below --world-size " + std::to_string(o.world_size));
  }
  if (o.rendezvous.empty()) throw UsageError("--rendezvous DIR is required for --backend host (or set DTPERF_RENDEZVOUS)");
  if (o.node.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    o.node = name;
  }
  if (o.address.empty()) o.address = default_address();
}

std::uint64_t parse_bytes(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw UsageError(option + " " + text + ": not a size (use e.g. 8, 64K, 16M, 1G)");
  }
  const std::string suffix = text.substr(used);
  std::uint64_t multiple = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") multiple = std::uint64_t{1} << 10;
  else if (suffix == "M" || suffix == "MiB") multiple = std::uint64_t{1} << 20;
  else if (suffix == "G" || suffix == "GiB") multiple = std::uint64_t{1} << 30;
  else if (!suffix.empty() && suffix != "B") throw UsageError(option + " " + text + ": unknown unit '" + suffix + "' (K, M, G)");
  if (value == 0 || value > (std::uint64_t{1} << 40) / multiple) {
    throw UsageError(option + " " + text + ": must be between 1 byte and 1 TiB");
  }
  return value * multiple;
}

PlanSettings plan_settings(const Options& o, bool gpu) {
  PlanSettings settings;
  settings.gpu = gpu;
  settings.quick = o.quick;
  settings.min_bytes = parse_bytes(o.min_bytes, "--min-bytes");
  settings.max_bytes = o.max_bytes.empty() ? 0 : parse_bytes(o.max_bytes, "--max-bytes");
  settings.warmup = o.warmup;
  settings.iterations = o.iterations;
  settings.spread_iterations = o.spread_iterations;
  settings.budget_s = o.budget_s;
  settings.apply_defaults();
  if (settings.max_bytes < settings.min_bytes) {
    throw UsageError("--max-bytes is smaller than --min-bytes");
  }
  return settings;
}

}  // namespace dtperf::calibrate
