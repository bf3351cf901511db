#include "plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace dtperf::calibrate {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

const char* kind_name(EntryKind kind) {
  switch (kind) {
    case EntryKind::all_reduce: return "all_reduce";
    case EntryKind::sendrecv: return "sendrecv";
    case EntryKind::gemm: return "gemm";
    case EntryKind::copy: return "copy";
  }
  return "?";
}

double busbw_factor(EntryKind kind, int ranks) {
  if (kind == EntryKind::all_reduce && ranks > 0) return 2.0 * (ranks - 1) / ranks;
  return 1.0;
}

std::size_t PlanEntry::point_count() const {
  return kind == EntryKind::gemm ? shapes.size() : sizes_bytes.size();
}

double PlanEntry::point_work(std::size_t point) const {
  return kind == EntryKind::gemm ? shapes.at(point).flops() : static_cast<double>(sizes_bytes.at(point));
}

std::string PlanEntry::label() const {
  switch (kind) {
    case EntryKind::gemm: return fmt::format("gemm {}", dtype);
    case EntryKind::copy: return "copy device memory";
    default: break;
  }
  return fmt::format("{} {}: {} ranks on {} node{}, {} at once per node", kind_name(kind),
                     group_name(group), ranks, nodes, nodes == 1 ? "" : "s", concurrent_per_node);
}

bool PlanEntry::has_member(int rank) const {
  if (kind == EntryKind::gemm || kind == EntryKind::copy) return true;
  return std::any_of(communicators.begin(), communicators.end(), [&](const std::vector<int>& ranks_in) {
    return std::find(ranks_in.begin(), ranks_in.end(), rank) != ranks_in.end();
  });
}

CostModel CostModel::gpu() {
  CostModel cost;
  cost.intra_alpha_s = 10e-6;
  cost.intra_bus_bytes_per_s = 150e9;
  cost.inter_alpha_s = 25e-6;
  cost.inter_bus_bytes_per_s = 20e9;
  cost.control_s = 100e-6;
  cost.gemm_flops_per_s_fp32 = 40e12;
  cost.gemm_flops_per_s_tensor = 300e12;
  cost.copy_bytes_per_s = 1.5e12;
  cost.spread_iteration_s = 2e-3;
  return cost;
}

CostModel CostModel::host() {
  CostModel cost;
  cost.intra_alpha_s = 30e-6;
  cost.intra_bus_bytes_per_s = 2e9;
  cost.inter_alpha_s = 50e-6;
  cost.inter_bus_bytes_per_s = 1.18e9;
  cost.control_s = 0.5e-3;
  cost.spread_iteration_s = 2e-3;
  return cost;
}

double CostModel::call_s(const PlanEntry& entry, std::size_t point) const {
  const bool inter = entry.nodes > 1;
  const double alpha_s = inter ? inter_alpha_s : intra_alpha_s;
  const double bus_bytes_per_s = inter ? inter_bus_bytes_per_s : intra_bus_bytes_per_s;
  const double work = entry.point_work(point);
  switch (entry.kind) {
    case EntryKind::all_reduce: {
      const int n = std::max(entry.ranks, 2);
      const double per_node = inter ? entry.concurrent_per_node : 1.0;
      return 2.0 * (n - 1) * alpha_s + per_node * work * busbw_factor(entry.kind, n) / bus_bytes_per_s;
    }
    case EntryKind::sendrecv:
      return alpha_s + (inter ? entry.concurrent_per_node : 1) * work / bus_bytes_per_s;
    case EntryKind::gemm:
      return 5e-6 + work / (entry.dtype == "fp32" ? gemm_flops_per_s_fp32 : gemm_flops_per_s_tensor);
    case EntryKind::copy:
      return 5e-6 + 2.0 * work / copy_bytes_per_s;
  }
  return 0.0;
}

void PlanSettings::apply_defaults() {
  if (max_bytes == 0) max_bytes = gpu ? (quick ? 256 * kMiB : kGiB) : (quick ? 4 * kMiB : 64 * kMiB);
  if (warmup < 0) warmup = quick ? 2 : 5;
  if (iterations == 0) iterations = quick ? 5 : 20;
  if (spread_iterations == 0) spread_iterations = quick ? 20 : 50;
}

double Plan::nominal_s() const {
  return std::accumulate(entries.begin(), entries.end(), spread_nominal_s + contention_nominal_s,
                         [](double sum, const PlanEntry& entry) { return sum + entry.nominal_s; });
}

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  const std::uint64_t step = std::max<std::uint64_t>(factor, 2);
  for (std::uint64_t bytes = std::max<std::uint64_t>(min_bytes, 4); bytes <= max_bytes; bytes *= step) {
    sizes.push_back(bytes / 4 * 4);
    if (bytes > max_bytes / step) break;
  }
  if (!sizes.empty() && sizes.back() < max_bytes / 4 * 4) sizes.push_back(max_bytes / 4 * 4);
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

double entry_nominal_s(const PlanEntry& entry, const PlanSettings& settings, const CostModel& cost) {
  const int calls = 1 + settings.warmup + settings.iterations;
  double total_s = 0.0;
  for (std::size_t point = 0; point < entry.point_count(); ++point) {
    total_s += calls * cost.call_s(entry, point) + cost.control_s;
  }
  return total_s;
}

bool trim_to_budget(Plan& plan, const CostModel& cost, double budget_s) {
  bool trimmed = false;
  while (plan.nominal_s() > budget_s) {
    PlanEntry* costliest = nullptr;
    double costliest_s = 0.0;
    for (PlanEntry& entry : plan.entries) {
      if (entry.point_count() <= 1) continue;
      const double last_s = cost.call_s(entry, entry.point_count() - 1);
      if (costliest == nullptr || last_s > costliest_s) {
        costliest = &entry;
        costliest_s = last_s;
      }
    }
    if (costliest == nullptr) break;
    if (costliest->kind == EntryKind::gemm) costliest->shapes.pop_back();
    else costliest->sizes_bytes.pop_back();
    costliest->nominal_s = entry_nominal_s(*costliest, plan.settings, cost);
    trimmed = true;
  }
  return trimmed;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= kGiB && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
  return fmt::format("{} B", bytes);
}

std::string format_plan(const Plan& plan, const Topology& topology) {
  std::string text = fmt::format("# dtperf-calibrate plan: {} ranks on {} node{}, {} per node\n",
                                 topology.world_size(), topology.node_count(),
                                 topology.node_count() == 1 ? "" : "s", topology.ranks_per_node());
  text += fmt::format("# warm-up {}, timed iterations {}, budget {:.0f} s\n", plan.settings.warmup,
                      plan.settings.iterations, plan.settings.budget_s);
  text += fmt::format("{:<66} {:>6} {:>22} {:>9}\n", "entry", "points", "range", "est_s");
  for (const PlanEntry& entry : plan.entries) {
    std::string range;
    if (entry.kind == EntryKind::gemm && !entry.shapes.empty()) {
      range = fmt::format("{} shapes", entry.shapes.size());
    } else if (!entry.sizes_bytes.empty()) {
      range = format_bytes(entry.sizes_bytes.front()) + " .. " + format_bytes(entry.sizes_bytes.back());
    }
    text += fmt::format("{:<66} {:>6} {:>22} {:>9.1f}\n", entry.label(), entry.point_count(), range, entry.nominal_s);
  }
  if (plan.contention_nominal_s > 0.0) {
    text += fmt::format("{:<66} {:>6} {:>22} {:>9.1f}\n", "contention: bf16 GEMM 8192^3 beside all_reduce world, each way",
                        2, format_bytes(plan.contention_bytes), plan.contention_nominal_s);
  }
  text += fmt::format("{:<66} {:>6} {:>22} {:>9.1f}\n", "iteration spread (fixed workload, every rank)",
                      plan.settings.spread_iterations, "", plan.spread_nominal_s);
  text += fmt::format("# estimated total {:.1f} s, {}\n", plan.nominal_s(),
                      plan.truncated ? "trimmed to the budget: truncated" : "not truncated");
  for (const std::string& note : plan.notes) text += "# note: " + note + "\n";
  return text;
}

}  // namespace dtperf::calibrate
