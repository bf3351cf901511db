// Gossip topologies: schedules as Decent-DP defines them, partitions in every round, and
// a clear error (with what would work) for every constraint.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "dtperf/error.hpp"
#include "dtperf/topology.hpp"

using namespace dtperf;

namespace {

std::string error_of(const std::string& name, int ranks, int per_node) {
  try {
    make_topology(name, ranks, per_node);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every rank appears exactly once in every round.
void check_partitions(const Topology& t) {
  for (const Step& step : t.steps) {
    for (const Round& round : step.rounds) {
      std::multiset<int> seen(round.members.begin(), round.members.end());
      REQUIRE(static_cast<int>(seen.size()) == t.ranks);
      for (int r = 0; r < t.ranks; ++r) CHECK(seen.count(r) == 1);
    }
  }
}

bool paired(const Round& round, int a, int b) {
  for (std::size_t g = 0; g < round.groups(); ++g) {
    const auto group = round.group(g);
    const bool has_a = std::find(group.begin(), group.end(), a) != group.end();
    const bool has_b = std::find(group.begin(), group.end(), b) != group.end();
    if (has_a && has_b) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("every built-in topology partitions the ranks in every round", "[topology]") {
  for (const TopologyInfo& info : topologies()) {
    INFO(info.name);
    check_partitions(make_topology(info.name, 32, 4));
  }
}

TEST_CASE("the directed one-peer exponential graph sends over 2^k at step k", "[topology][directed]") {
  const Topology t = make_topology("one-peer-exp-directed", 12, 4);
  REQUIRE(t.period() == 4);  // ceil(log2 12)
  CHECK(t.directed());
  for (int k = 0; k < 4; ++k) {
    CHECK(t.steps[static_cast<std::size_t>(k)].mixing == Mixing::push_average);
    CHECK(t.steps[static_cast<std::size_t>(k)].shift == (1 << k) % 12);
    CHECK(t.steps[static_cast<std::size_t>(k)].rounds.empty());
  }
  CHECK_FALSE(make_topology("one-peer-exp", 8, 4).directed());
  CHECK(error_of("one-peer-exp-directed", 1, 1).find("at least 2 ranks") != std::string::npos);
}

TEST_CASE("ring pairs neighbours, even pairs then odd pairs", "[topology]") {
  const Topology t = make_topology("ring", 8, 4);
  REQUIRE(t.period() == 2);
  CHECK(paired(t.steps[0].rounds[0], 0, 1));
  CHECK(paired(t.steps[0].rounds[0], 6, 7));
  CHECK(paired(t.steps[1].rounds[0], 1, 2));
  CHECK(paired(t.steps[1].rounds[0], 7, 0));  // wraps around
  CHECK(!paired(t.steps[1].rounds[0], 0, 1));
}

TEST_CASE("one-peer-exp pairs i with i XOR 2^k at step k", "[topology]") {
  const Topology t = make_topology("one-peer-exp", 16, 4);
  REQUIRE(t.period() == 4);  // log2(16)
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 16; ++i) CHECK(paired(t.steps[static_cast<std::size_t>(k)].rounds[0], i, i ^ (1 << k)));
  }
}

TEST_CASE("AER mixes half the nodes across and half inside at every step", "[topology][aer]") {
  // 8 nodes of 4: period 2 log2(8) = 6; in each step 2 node pairs form groups of 8 ranks
  // and the other 4 nodes average inside (groups of 4).
  const Topology t = make_topology("alternating-exp-ring", 32, 4);
  REQUIRE(t.period() == 6);
  for (const Step& step : t.steps) {
    int cross = 0;
    int inside = 0;
    for (std::size_t g = 0; g < step.rounds[0].groups(); ++g) {
      const auto size = step.rounds[0].group(g).size();
      CHECK((size == 4 || size == 8));
      (size == 8 ? cross : inside) += 1;
    }
    CHECK(cross == 2);
    CHECK(inside == 4);
  }
  // Round r pairs nodes at distance 2^r: node 0 meets node 1, then 2, then 4.
  CHECK(paired(t.steps[1].rounds[0], 0, 4));   // node 0 with node 1, in the odd slot
  CHECK(paired(t.steps[0].rounds[0], 8, 12));  // node 2 with node 3, in the even slot
  CHECK(paired(t.steps[3].rounds[0], 0, 8));   // distance 2
  CHECK(paired(t.steps[5].rounds[0], 0, 16));  // distance 4
}

TEST_CASE("torus and exponential graph meet every neighbour each step", "[topology]") {
  const Topology torus = make_topology("torus", 16, 4);  // 4 x 4
  REQUIRE(torus.period() == 1);
  CHECK(torus.steps[0].rounds.size() == 4);
  CHECK(torus.steps[0].mixing == Mixing::neighbour_average);
  const Topology exp = make_topology("exponential", 16, 4);
  CHECK(exp.steps[0].rounds.size() == 4);  // log2(16) pairwise rounds
  for (int k = 0; k < 4; ++k) CHECK(paired(exp.steps[0].rounds[static_cast<std::size_t>(k)], 5, 5 ^ (1 << k)));
}

TEST_CASE("random matching is a deterministic perfect matching per seed", "[topology]") {
  const Topology a = make_topology("random-matching", 12, 4, 7);
  const Topology b = make_topology("random-matching", 12, 4, 7);
  REQUIRE(a.period() == 16);
  for (int k = 0; k < 16; ++k) CHECK(a.steps[static_cast<std::size_t>(k)].rounds[0].members ==
                                     b.steps[static_cast<std::size_t>(k)].rounds[0].members);
  check_partitions(a);
}

TEST_CASE("each topology constraint fails with what would work instead", "[topology][errors]") {
  CHECK(error_of("ring", 7, 7) == "topology: ring needs an even number of ranks, got 7; use 6 or 8 ranks");
  CHECK(error_of("random-matching", 1, 1) == "topology: random-matching needs an even number of ranks, got 1; use 2 ranks");
  CHECK(error_of("one-peer-exp", 24, 4) ==
        "topology: one-peer-exp needs a power-of-two number of ranks, got 24; use 16 or 32 ranks");
  CHECK(error_of("exponential", 2, 2) ==
        "topology: exponential needs a power-of-two number of ranks >= 4, got 2; use 4 ranks");
  CHECK(error_of("alternating-exp-ring", 24, 4) ==
        "topology: alternating-exp-ring needs a power-of-two number of whole nodes >= 2, got 6 nodes of 4 ranks; "
        "use 4 or 8 nodes (or one-peer-exp across all 24 ranks)");
  CHECK(error_of("alternating-exp-ring", 8, 8) ==
        "topology: alternating-exp-ring needs a power-of-two number of whole nodes >= 2, got 1 node of 8 ranks; "
        "use 2 nodes (or one-peer-exp across all 8 ranks)");
  CHECK(error_of("torus", 8, 4) ==
        "topology: torus needs ranks = rows x cols with both even and >= 4, got 8; the next size that works is 16");
  CHECK(error_of("rng", 8, 4).starts_with("topology: unknown topology 'rng' (did you mean 'ring'?); built-in topologies: complete, ring"));
  CHECK(error_of("ring", 10, 4) == "topology: 10 ranks do not fill whole nodes of 4");
  CHECK(topology_unavailable("complete", 5, 5) == std::nullopt);
}
