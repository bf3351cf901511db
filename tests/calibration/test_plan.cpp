// Plan building, groups, budget trimming and the shared sweep loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "plan.hpp"
#include "sweep.hpp"
#include "topology.hpp"

using namespace dtperf::calibrate;

namespace {

using Comms = std::vector<std::vector<int>>;

Comms comms_of(const Topology& topology, Group group, int concurrent) {
  std::string why_not;
  return group_communicators(topology, group, concurrent, &why_not);
}

const PlanEntry* find_entry(const Plan& plan, EntryKind kind, Group group, int concurrent) {
  for (const PlanEntry& entry : plan.entries) {
    if (entry.kind == kind && entry.group == group && entry.concurrent_per_node == concurrent) return &entry;
  }
  return nullptr;
}

/// A world of one rank: max_all leaves the values as they are.
class SoloControl : public Control {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void max_all(std::vector<double>&) override { ++exchanges; }
  int exchanges = 0;
};

/// Ops whose calls take `seconds_per_byte * bytes` of pretend time (nothing sleeps).
class FakeOps : public PointOps {
 public:
  FakeOps(const PlanEntry& entry, double seconds_per_byte) : entry_(entry), seconds_per_byte_(seconds_per_byte) {}
  bool run_checked(std::size_t point) override { return point != 2; }
  void run(std::size_t, int calls) override { warmup_calls += calls; }
  double time_s(std::size_t point, int) override { return seconds_per_byte_ * entry_.point_work(point); }
  int warmup_calls = 0;

 private:
  const PlanEntry& entry_;
  double seconds_per_byte_;
};

}  // namespace

TEST_CASE("Size sweeps double from 8 B to 1 GiB in 28 steps", "[calibrate][plan]") {
  const auto sizes = size_sweep(8, std::uint64_t{1} << 30, 2);
  REQUIRE(sizes.size() == 28);
  CHECK(sizes.front() == 8);
  CHECK(sizes.back() == std::uint64_t{1} << 30);
  CHECK(size_sweep(8, 100, 4) == std::vector<std::uint64_t>{8, 32, 100});
}

TEST_CASE("Bus bandwidth factors follow nccl-tests", "[calibrate][plan]") {
  CHECK(busbw_factor(EntryKind::all_reduce, 8) == Approx(1.75));  // 2 * 7 / 8
  CHECK(busbw_factor(EntryKind::all_reduce, 2) == Approx(1.0));
  CHECK(busbw_factor(EntryKind::sendrecv, 2) == Approx(1.0));
}

TEST_CASE("Groups on 2 nodes of 4 ranks form the communicators gossip and hierarchies use", "[calibrate][plan]") {
  const Topology topology = Topology::uniform(2, 4);
  CHECK(comms_of(topology, Group::world, 1) == Comms{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(comms_of(topology, Group::node, 1) == Comms{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(comms_of(topology, Group::one_per_node, 1) == Comms{{0, 4}});
  CHECK(comms_of(topology, Group::one_per_node, 4) == Comms{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(comms_of(topology, Group::pair_intra, 2) == Comms{{0, 1}, {2, 3}});
  CHECK(comms_of(topology, Group::pair_inter, 3) == Comms{{0, 4}, {1, 5}, {2, 6}});
  std::string why_not;
  CHECK(group_communicators(topology, Group::two_nodes, 1, &why_not).empty());
  CHECK(why_not == "same as world on 2 nodes");
  CHECK(group_communicators(topology, Group::pair_intra, 3, &why_not).empty());
  CHECK(comms_of(Topology::uniform(3, 2), Group::two_nodes, 1) == Comms{{0, 1, 2, 3}});
}

TEST_CASE("Nodes are ordered by their first rank and local ranks follow rank order", "[calibrate][plan]") {
  std::vector<RankPlace> places(4);
  const char* nodes[] = {"b", "a", "b", "a"};
  for (int r = 0; r < 4; ++r) places[static_cast<std::size_t>(r)].node = nodes[r];
  const Topology topology(places);
  CHECK(topology.node_names() == std::vector<std::string>{"b", "a"});
  CHECK(topology.places()[2].local_rank == 1);
  CHECK(comms_of(topology, Group::pair_inter, 1) == Comms{{0, 1}});
  CHECK(comms_of(topology, Group::pair_intra, 1) == Comms{{0, 2}});
}

TEST_CASE("A full GPU plan on 2 nodes of 8 covers every group, concurrency, dtype, copy and contention", "[calibrate][plan]") {
  PlanSettings settings;
  settings.gpu = true;
  settings.budget_s = 1e6;
  settings.apply_defaults();
  const Plan plan = build_plan(Topology::uniform(2, 8), settings, CostModel::gpu());
  CHECK_FALSE(plan.truncated);
  for (int pairs : {1, 2, 4, 8}) CHECK(find_entry(plan, EntryKind::sendrecv, Group::pair_inter, pairs) != nullptr);
  for (int pairs : {1, 2, 4}) CHECK(find_entry(plan, EntryKind::sendrecv, Group::pair_intra, pairs) != nullptr);
  CHECK(find_entry(plan, EntryKind::all_reduce, Group::one_per_node, 8) != nullptr);
  const PlanEntry* world = find_entry(plan, EntryKind::all_reduce, Group::world, 1);
  REQUIRE(world != nullptr);
  CHECK(world->ranks == 16);
  CHECK(world->nodes == 2);
  CHECK(world->sizes_bytes.back() == std::uint64_t{1} << 30);
  const auto gemms = std::count_if(plan.entries.begin(), plan.entries.end(),
                                   [](const PlanEntry& e) { return e.kind == EntryKind::gemm; });
  CHECK(gemms == 5);  // fp32, tf32, fp16, bf16, fp8
  CHECK(std::any_of(plan.entries.begin(), plan.entries.end(), [](const PlanEntry& e) { return e.kind == EntryKind::copy; }));
  // NCCL on every rank alone (all 8 of a node at once), and the contention measurement.
  const PlanEntry* self = find_entry(plan, EntryKind::all_reduce, Group::self, 8);
  REQUIRE(self != nullptr);
  CHECK(self->ranks == 1);
  CHECK(self->communicators.size() == 16);
  CHECK(plan.contention_nominal_s > 0.0);
  CHECK(plan.contention_bytes == std::uint64_t{256} << 20);
  // A GPU without FP8 (compute capability below 8.9) gets no fp8 entry.
  settings.fp8 = false;
  const Plan older = build_plan(Topology::uniform(2, 8), settings, CostModel::gpu());
  CHECK(std::none_of(older.entries.begin(), older.entries.end(),
                     [](const PlanEntry& e) { return e.kind == EntryKind::gemm && e.dtype == "fp8"; }));
}

TEST_CASE("A host plan has no self group and no contention", "[calibrate][plan]") {
  PlanSettings settings;
  settings.budget_s = 1e6;
  settings.apply_defaults();
  const Plan plan = build_plan(Topology::uniform(2, 2), settings, CostModel::host());
  CHECK(find_entry(plan, EntryKind::all_reduce, Group::self, 2) == nullptr);
  CHECK(plan.contention_nominal_s == 0.0);
}

TEST_CASE("Each collective shape is measured once: pair_inter is one_per_node on 2 nodes", "[calibrate][plan]") {
  PlanSettings settings;
  settings.budget_s = 1e6;
  settings.apply_defaults();
  const Plan two = build_plan(Topology::uniform(2, 8), settings, CostModel::host());
  CHECK(find_entry(two, EntryKind::all_reduce, Group::pair_inter, 1) == nullptr);
  CHECK(std::find(two.notes.begin(), two.notes.end(),
                  "all_reduce pair_inter with 1 per node skipped: same shape as one_per_node") != two.notes.end());
  const Plan three = build_plan(Topology::uniform(3, 8), settings, CostModel::host());
  CHECK(find_entry(three, EntryKind::all_reduce, Group::pair_inter, 1) != nullptr);
  CHECK(find_entry(three, EntryKind::all_reduce, Group::two_nodes, 1) != nullptr);
}

TEST_CASE("A plan for one rank has no collectives and says why", "[calibrate][plan]") {
  PlanSettings settings;
  settings.apply_defaults();
  const Plan plan = build_plan(Topology::uniform(1, 1), settings, CostModel::host());
  CHECK(plan.entries.empty());
  CHECK(std::any_of(plan.notes.begin(), plan.notes.end(),
                    [](const std::string& note) { return note.find("all_reduce world") != std::string::npos; }));
}

TEST_CASE("A plan over its budget loses its costliest points and is marked truncated", "[calibrate][plan]") {
  PlanSettings settings;
  settings.budget_s = 10;
  settings.apply_defaults();
  const CostModel cost = CostModel::host();
  // 26 calls of up to 64 MiB over 10 Gbit/s in 6 inter-node entries: far over 10 s.
  const Plan plan = build_plan(Topology::uniform(2, 2), settings, cost);
  CHECK(plan.truncated);
  CHECK(plan.nominal_s() <= 0.85 * 10);
  for (const PlanEntry& entry : plan.entries) {
    CHECK(entry.point_count() >= 1);
    CHECK(entry.sizes_bytes.front() == 8);
    CHECK(entry.nominal_s == Approx(entry_nominal_s(entry, settings, cost)));
  }
}

TEST_CASE("The sweep stops at the point that would overrun its allowance", "[calibrate][sweep]") {
  PlanEntry entry;
  entry.kind = EntryKind::sendrecv;
  entry.sizes_bytes = size_sweep(8, 1 << 20, 2);  // 18 points
  SoloControl control;
  FakeOps ops(entry, 1e-6);  // 1 us per byte: 1 MiB takes ~1 s per call
  Budget budget(100.0);
  const SweepCounts counts{2, 3};
  // Allowance 0.5 s: point p costs 6 calls * 2^(p+3) us, so rank 0 stops before ~2^16 B.
  const auto results = run_sweep(control, &ops, entry, counts, 0.5, budget);
  REQUIRE(results.size() == entry.sizes_bytes.size());
  CHECK(results.front().measured);
  CHECK_FALSE(results.back().measured);
  CHECK(budget.truncated);
  CHECK(results[1].time_s == Approx(16e-6));
  CHECK_FALSE(results[2].correct);  // FakeOps fails its check at point 2
  CHECK(results[3].correct);
  const auto measured = std::count_if(results.begin(), results.end(), [](const PointResult& r) { return r.measured; });
  CHECK(measured < 16);
  // One exchange to start, two per point (start the timed calls together, then decide on
  // the next point), one for the final reduction.
  CHECK(control.exchanges == 1 + 2 * measured + 1);
}

TEST_CASE("Estimates scale with the work but never below the known time", "[calibrate][sweep]") {
  PlanEntry entry;
  entry.kind = EntryKind::all_reduce;
  entry.sizes_bytes = {8, 16, 32};
  const SweepCounts counts{1, 2};
  CHECK(estimate_point_s(entry, 2, 0, 1e-3, counts) == Approx(4 * 4e-3));  // 4 calls, 4x the bytes
  CHECK(estimate_point_s(entry, 0, 2, 1e-3, counts) == Approx(4e-3));
}
