#pragma once
// The measurement plan: which collectives on which groups over which sizes, which GEMMs
// and copies, with an estimate of how long each entry takes. Both backends run the same
// plan; the host backend has no GEMM or copy entries. A plan whose estimate exceeds its
// budget is trimmed (the largest points of the costliest entries go first) and marked
// truncated; at run time the budget is enforced again with measured times (sweep.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "topology.hpp"

namespace dtperf::calibrate {

enum class EntryKind { all_reduce, sendrecv, gemm, copy };
/// "all_reduce", "sendrecv", "gemm", "copy" (the first two as the raw format names them).
const char* kind_name(EntryKind kind);

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all_reduce, 1 for sendrecv.
double busbw_factor(EntryKind kind, int ranks);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::string label;  // "square", "qkv h=4096", ...
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

struct PlanEntry {
  EntryKind kind = EntryKind::all_reduce;
  // Collectives: the group, its communicators (run at once) and their shape.
  Group group = Group::world;
  int concurrent_per_node = 1;
  int ranks = 0;  // ranks in each communicator
  int nodes = 0;  // nodes each communicator spans
  std::vector<std::vector<int>> communicators;
  std::string dtype;                       // "float32" for collectives; fp32|tf32|fp16|bf16|fp8 for GEMM
  std::vector<std::uint64_t> sizes_bytes;  // collectives and copy, ascending
  std::vector<GemmShape> shapes;           // GEMM
  double nominal_s = 0.0;                  // estimated duration of the whole entry

  std::size_t point_count() const;
  /// What a point's time scales with: bytes, or FLOPs for GEMM.
  double point_work(std::size_t point) const;
  /// One line: "all_reduce world: 16 ranks on 2 nodes, 1 per node".
  std::string label() const;
  /// True when `rank` belongs to one of the communicators (GEMM and copy: every rank).
  bool has_member(int rank) const;
};

/// Nominal speeds used to estimate a plan before anything is measured.
struct CostModel {
  double intra_alpha_s = 0.0, intra_bus_bytes_per_s = 0.0;  // inside a node
  double inter_alpha_s = 0.0, inter_bus_bytes_per_s = 0.0;  // per node NIC
  double control_s = 0.0;                                   // one world control exchange
  double gemm_flops_per_s_fp32 = 0.0, gemm_flops_per_s_tensor = 0.0;
  double copy_bytes_per_s = 0.0;                            // read + written
  double spread_iteration_s = 0.0;

  static CostModel gpu();   // H100-class node: NVLink, 100 Gbit/s-class NICs
  static CostModel host();  // CPU ranks over TCP, 10 Gbit/s between nodes

  /// Estimated time of one call at `point` of `entry`.
  double call_s(const PlanEntry& entry, std::size_t point) const;
};

struct PlanSettings {
  bool gpu = false;                // GEMM, copy, self all-reduce, contention, GPU sweep sizes
  bool fp8 = true;                 // FP8 GEMMs (GPU plans; GPUs of compute capability 8.9+)
  bool quick = false;              // fewer groups, sizes, shapes and iterations
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 0;     // 0: 1 GiB (GPU), 64 MiB (host); quick: 256 MiB, 4 MiB
  int warmup = -1;                 // -1: 5 (quick: 2)
  int iterations = 0;              // 0: 20 (quick: 5)
  int spread_iterations = 0;       // 0: 50 (quick: 20)
  double budget_s = 120.0;
  /// Fills the unset values above with the defaults for `gpu` and `quick`.
  void apply_defaults();
};

/// The contention measurement of GPU plans: `kContentionCalls` bf16 GEMMs of this shape
/// (about 1.4 ms each on an H100-class GPU, long enough that launch gaps do not matter)
/// timed alone and beside all-reduces of `Plan::contention_bytes` on the world (on one rank,
/// a communicator of its own), and the all-reduces timed alone and beside GEMMs.
inline const GemmShape kContentionGemm{8192, 8192, 8192, "contention"};
inline constexpr const char* kContentionDtype = "bf16";
inline constexpr int kContentionCalls = 20;

struct Plan {
  PlanSettings settings;
  std::vector<PlanEntry> entries;
  std::vector<std::string> notes;  // groups left out and why, trimming
  bool truncated = false;          // points were dropped to fit the budget
  double spread_nominal_s = 0.0;
  double contention_nominal_s = 0.0;  // GPU plans: a GEMM beside an all-reduce, each way
  std::uint64_t contention_bytes = 0; // the all-reduce's size there
  double nominal_s() const;        // all entries plus the spread
};

/// The sizes min, min*factor, ... below max, then max; each rounded down to a multiple of 4 bytes.
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor);

/// Estimated duration of every point of `entry` (warm-up, check and timed calls, control).
double entry_nominal_s(const PlanEntry& entry, const PlanSettings& settings, const CostModel& cost);

/// The full plan for `topology`, trimmed to `settings.budget_s` (85 % of it; the rest is
/// set-up). `settings` must have its defaults applied. A group whose communicators have the
/// shape (collective, ranks, nodes, concurrency) of an earlier entry is left out with a note
/// (on 2 nodes, pair_inter all-reduce is one_per_node; with 2 ranks per node, pair_intra is
/// node), so that each shape is measured once.
Plan build_plan(const Topology& topology, const PlanSettings& settings, const CostModel& cost);

/// Drops the costliest last points until the estimate fits `budget_s`; returns whether any
/// point was dropped. Every entry keeps at least one point.
bool trim_to_budget(Plan& plan, const CostModel& cost, double budget_s);

/// A human-readable table of the plan (stdout of --plan).
std::string format_plan(const Plan& plan, const Topology& topology);

/// "8 B", "64 KiB", "1 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace dtperf::calibrate
