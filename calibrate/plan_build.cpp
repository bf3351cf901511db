// build_plan: the entries of a calibration plan for a topology (see plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "plan.hpp"

namespace dtperf::calibrate {

namespace {

/// 1, 2, 4, ... up to and including `max_count` (quick: 1 and `max_count`).
std::vector<int> concurrency_steps(int max_count, bool quick) {
  std::vector<int> steps;
  for (int count = 1; count < max_count; count *= 2) {
    if (!quick || count == 1) steps.push_back(count);
  }
  if (max_count >= 1) steps.push_back(max_count);
  return steps;
}

struct Builder {
  const Topology& topology;
  const PlanSettings& settings;
  Plan& plan;

  void add_collective(EntryKind kind, Group group, int concurrent, std::uint64_t factor) {
    std::string why_not;
    auto comms = group_communicators(topology, group, concurrent, &why_not);
    if (comms.empty()) {
      plan.notes.push_back(fmt::format("{} {} with {} per node skipped: {}", kind_name(kind),
                                       group_name(group), concurrent, why_not));
      return;
    }
    PlanEntry entry;
    entry.kind = kind;
    entry.group = group;
    entry.concurrent_per_node = concurrent;
    entry.ranks = static_cast<int>(comms.front().size());
    std::vector<int> nodes_spanned;
    for (int rank : comms.front()) nodes_spanned.push_back(topology.node_of(rank));
    std::sort(nodes_spanned.begin(), nodes_spanned.end());
    entry.nodes = static_cast<int>(std::unique(nodes_spanned.begin(), nodes_spanned.end()) - nodes_spanned.begin());
    for (const PlanEntry& earlier : plan.entries) {
      if (earlier.kind == kind && earlier.ranks == entry.ranks && earlier.nodes == entry.nodes &&
          earlier.concurrent_per_node == concurrent) {
        plan.notes.push_back(fmt::format("{} {} with {} per node skipped: same shape as {}", kind_name(kind),
                                         group_name(group), concurrent, group_name(earlier.group)));
        return;
      }
    }
    entry.communicators = std::move(comms);
    entry.dtype = "float32";
    entry.sizes_bytes = size_sweep(settings.min_bytes, settings.max_bytes, factor);
    plan.entries.push_back(std::move(entry));
  }

  void add_collectives() {
    const std::uint64_t factor = settings.quick ? 4 : 2;
    const int per_node = topology.ranks_per_node();
    for (Group group : {Group::world, Group::node, Group::one_per_node, Group::pair_intra,
                        Group::pair_inter, Group::two_nodes}) {
      add_collective(EntryKind::all_reduce, group, 1, factor);
      if (group == Group::one_per_node && per_node > 1 && !settings.quick && topology.node_count() > 1) {
        add_collective(EntryKind::all_reduce, group, per_node, factor);
      }
    }
    if (settings.gpu) add_collective(EntryKind::all_reduce, Group::self, per_node, factor);
    for (int pairs : concurrency_steps(per_node / 2, settings.quick)) {
      add_collective(EntryKind::sendrecv, Group::pair_intra, pairs, factor);
    }
    if (per_node < 2) plan.notes.push_back("sendrecv pair_intra skipped: needs 2 ranks per node");
    for (int pairs : concurrency_steps(per_node, settings.quick)) {
      add_collective(EntryKind::sendrecv, Group::pair_inter, pairs, factor);
    }
  }

  void add_gemms() {
    std::vector<GemmShape> shapes;
    const std::vector<std::int64_t> squares =
        settings.quick ? std::vector<std::int64_t>{1024, 4096, 8192}
                       : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192};
    for (std::int64_t size : squares) shapes.push_back({size, size, size, "square"});
    // One transformer layer's GEMMs at 8192 tokens: m = tokens, k = input, n = output width.
    const std::int64_t tokens = 8192;
    const std::vector<std::int64_t> hiddens =
        settings.quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{4096, 8192};
    for (std::int64_t h : hiddens) {
      shapes.push_back({tokens, 3 * h, h, fmt::format("qkv h={}", h)});
      shapes.push_back({tokens, h, h, fmt::format("attention out h={}", h)});
      shapes.push_back({tokens, 4 * h, h, fmt::format("mlp up h={}", h)});
      shapes.push_back({tokens, h, 4 * h, fmt::format("mlp down h={}", h)});
    }
    std::sort(shapes.begin(), shapes.end(),
              [](const GemmShape& a, const GemmShape& b) { return a.flops() < b.flops(); });
    std::vector<std::string> dtypes{"fp32", "tf32", "fp16", "bf16"};
    if (settings.fp8) dtypes.emplace_back("fp8");
    for (const std::string& dtype : dtypes) {
      PlanEntry entry;
      entry.kind = EntryKind::gemm;
      entry.dtype = dtype;
      entry.shapes = shapes;
      plan.entries.push_back(std::move(entry));
    }
  }

  void add_copy() {
    PlanEntry entry;
    entry.kind = EntryKind::copy;
    entry.dtype = "bytes";
    entry.sizes_bytes = size_sweep(kCopyMinBytes, settings.max_bytes, 4);
    plan.entries.push_back(std::move(entry));
  }

  static constexpr std::uint64_t kCopyMinBytes = std::uint64_t{1} << 20;
};

}  // namespace

/// Set-up (buffers of about 0.9 GiB, a second stream) and well under a second of timed
/// work on an H100-class GPU (gpu/contention.cpp).
constexpr double kContentionNominalS = 1.0;
/// An all-reduce of 256 MiB: in its bandwidth regime on NVLink, so that its kernels run
/// long enough to share the GPU with the GEMMs beside them.
constexpr std::uint64_t kContentionBytes = std::uint64_t{256} << 20;

Plan build_plan(const Topology& topology, const PlanSettings& settings, const CostModel& cost) {
  Plan plan;
  plan.settings = settings;
  Builder builder{topology, settings, plan};
  builder.add_collectives();
  if (settings.gpu) {
    builder.add_gemms();
    builder.add_copy();
  }
  if (!topology.uniform_nodes()) {
    plan.notes.push_back(fmt::format("nodes have different numbers of ranks; groups use {} per node",
                                     topology.ranks_per_node()));
  }
  for (PlanEntry& entry : plan.entries) entry.nominal_s = entry_nominal_s(entry, settings, cost);
  plan.spread_nominal_s = settings.spread_iterations * cost.spread_iteration_s + cost.control_s;
  if (settings.gpu) {
    plan.contention_nominal_s = kContentionNominalS;
    plan.contention_bytes = std::min(kContentionBytes, settings.max_bytes) / 4 * 4;
  }
  if (trim_to_budget(plan, cost, 0.85 * settings.budget_s)) {
    plan.truncated = true;
    plan.notes.push_back(fmt::format("largest points dropped to fit the {:.0f} s budget", settings.budget_s));
  }
  return plan;
}

}  // namespace dtperf::calibrate
