// Validation of the alpha-beta fitting on real nccl-tests logs (validation/data/nccl-tests,
// posted by others; README.md there). For each log: fit on every other size (the 1st,
// 3rd, ...), predict the sizes left out, and measure the error over those of at least
// 1 MiB: the geometric mean of |ln(predicted / measured)| (reported as exp(.) - 1) and
// the worst |predicted / measured - 1|. Target: a geometric mean of at most 5 %. Last, a
// profile fitted on the 8-node log is checked for continuity in the node count.
//
// The measured time of a size is the faster of its out-of-place and in-place columns, as
// `dtperf fit` uses it: both time the same call in the same run, and interference only
// ever adds time, so the faster is the better estimate of the undisturbed cost. (The
// out-of-place column alone is reported beside it.)
//
// The same bounds for every log: a geometric mean of at most 5 % and no
// held-out size more than 15 % off (three times the mean bound: a size further off is a
// regime the fit did not see). Logs that cannot meet them because of their own
// measurements are expected failures, each with its reason; one that meets both fails the
// test until it leaves that list, so the list stays true.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dtperf/analysis/report.hpp"
#include "dtperf/fit.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/network.hpp"
#include "dtperf/scenario.hpp"

using namespace dtperf;

namespace {

const std::string kData = std::string(DTPERF_VALIDATION_DATA) + "/nccl-tests/";

constexpr double kGeomeanBound = 0.05;
constexpr double kWorstBound = 0.15;

// Logs whose own measurements keep them over a bound, and why.
const std::map<std::string, std::string> kExpectedFailures = {
    {"all_reduce_4x2_gh200-slingshot_1.txt",
     "one warmup iteration; the ramp is irregular: 1 MiB runs faster than 512 KiB, and 4 MiB takes 24 % longer than "
     "the straight line from 2 MiB to 8 MiB (busbw 20, 25, 43 GB/s)"},
    {"all_reduce_8x2_dgxh100-ib_1.txt",
     "the notes flag the mid sizes as noisy: out-of-place 256 MiB takes twice as long as 128 MiB and 512 MiB hardly "
     "longer than 256 MiB; in-place 2 MiB takes twice 1 MiB's time"},
    {"all_reduce_8x2_nebius-h100-ib_1.txt",
     "512 KiB takes longer than 1 MiB in both columns, and the two columns differ by up to 23 % from 32 KiB to "
     "512 KiB"},
    {"all_reduce_8x4_vmware-h100-ib_1.txt",
     "2 MiB's two columns differ by 45 % (191 and 132 us), and busbw jumps from 31 to 53 GB/s between 2 MiB and "
     "4 MiB: a protocol switch between fitted sizes, on virtualized hosts"},
    {"all_gather_8x2_b200-ndr_1.txt",
     "8 sizes 4x apart leave 4 fitted sizes 16x apart; 16 MiB runs faster than 4 MiB, and 64 MiB and 256 MiB take "
     "almost the same time (busbw 49 -> 189 GB/s: an algorithm switch between fitted sizes)"},
    {"reduce_scatter_8x2_b200-ndr_1.txt",
     "8 sizes 4x apart leave 4 fitted sizes 16x apart; 16 MiB runs faster than 4 MiB, and busbw jumps from 52 to "
     "178 GB/s between 64 MiB and 256 MiB (an algorithm switch between fitted sizes)"},
};

struct Holdout {
  PredictionErrors errors;
  std::size_t segments = 0;
};

Holdout holdout(const io::NcclTestsLog& log, io::NcclTestsColumn column) {
  std::vector<SizeTime> fitted, held_out;
  const auto points = io::bytes_and_time_s(log, column);
  for (std::size_t i = 0; i < points.size(); ++i) {
    (i % 2 == 0 ? fitted : held_out).push_back({points[i].first, points[i].second});
  }
  const CollectiveFit fit = fit_collective(log.collective, log.ranks, std::max(1, log.nodes), fitted);
  return {prediction_errors(fit.fit, held_out, 1024.0 * 1024.0), fit.fit.segments.size()};
}

std::vector<std::string> log_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every published nccl-tests log parses", "[validation][nccl_tests]") {
  INFO("the nccl-tests logs are not at " << kData << " (validation/data/nccl-tests in the repository)");
  REQUIRE(std::filesystem::exists(kData + "README.md"));
  const auto files = log_files();
  CHECK(files.size() >= 19);
  for (const auto& name : files) {
    INFO(name);
    const io::NcclTestsLog log = io::read_nccl_tests_file(kData + name);
    CHECK(name.starts_with(log.collective + "_"));
    // <collective>_<GPUsPerNode>x<Nodes>_...: the ranks and nodes the parser found.
    const auto x = name.find('x', log.collective.size() + 1);
    const int gpus = std::stoi(name.substr(log.collective.size() + 1));
    const int nodes = std::stoi(name.substr(x + 1));
    CHECK(log.ranks == gpus * nodes);
    CHECK(log.nodes == nodes);
    CHECK(log.rows.size() >= 8);
  }
}

TEST_CASE("fits predict the sizes they did not see within 5 % (15 % at worst) on real logs",
          "[validation][nccl_tests][fit]") {
  INFO("the nccl-tests logs are not at " << kData << " (validation/data/nccl-tests in the repository)");
  REQUIRE(std::filesystem::exists(kData + "README.md"));
  std::ostringstream summary;
  summary << fmt::format("nccl-tests validation: error on held-out sizes >= 1 MiB (faster column; out-of-place alone "
                         "in brackets); bounds: geomean {:.0f} %, worst size {:.0f} %\n",
                         100 * kGeomeanBound, 100 * kWorstBound);
  int within = 0;
  for (const auto& name : log_files()) {
    const io::NcclTestsLog log = io::read_nccl_tests_file(kData + name);
    const Holdout best = holdout(log, io::NcclTestsColumn::faster);
    const Holdout out_of_place = holdout(log, io::NcclTestsColumn::out_of_place);
    const bool meets = best.errors.geomean <= kGeomeanBound && best.errors.worst <= kWorstBound;
    const auto expected = kExpectedFailures.find(name);
    within += meets ? 1 : 0;
    summary << fmt::format("  {:<42} {} sizes, {} segments: geomean {:5.2f} %, worst {:5.2f} % at {:>11.0f} B "
                           "[{:5.2f} %]: {}\n",
                           name, best.errors.points, best.segments, 100 * best.errors.geomean, 100 * best.errors.worst,
                           best.errors.worst_bytes, 100 * out_of_place.errors.geomean,
                           meets ? "within" : "expected failure");
    INFO(name << ": geomean " << 100 * best.errors.geomean << " %, worst " << 100 * best.errors.worst << " %");
    CHECK(best.errors.points >= 3);
    if (expected == kExpectedFailures.end()) {
      CHECK(best.errors.geomean <= kGeomeanBound);
      CHECK(best.errors.worst <= kWorstBound);
    } else {
      INFO("an expected failure (" << expected->second << ") that meets both bounds now: take it off the list");
      CHECK_FALSE(meets);
    }
  }
  summary << fmt::format("  {} of {} logs within both bounds; the rest are expected failures, each with its reason "
                         "in tests/test_validation_nccl.cpp\n",
                         within, log_files().size());
  std::cout << summary.str();  // one line per log, unwrapped
}

TEST_CASE("a profile fitted on 8 nodes is continuous in the node count", "[validation][nccl_tests][continuity]") {
  INFO("the nccl-tests logs are not at " << kData << " (validation/data/nccl-tests in the repository)");
  REQUIRE(std::filesystem::exists(kData + "README.md"));
  // 64 H100 on 8 nodes: the measured mid sizes run 2-3x slower than one latency and one
  // bandwidth predict (busbw 88 GB/s at 16 MiB, 320 GB/s at 2 GiB).
  const std::string name = "all_reduce_8x8_h100-ib400_1.txt";
  io::FitInputs inputs;
  inputs.logs.emplace_back(name, io::read_nccl_tests_file(kData + name));
  io::FitSettings settings;
  settings.base = io::load_profile("dgx-h100");
  settings.created = "2026-11-23";
  const FitOutcome fitted = io::build_calibrated_profile(inputs, settings);
  CHECK(fitted.profile.nodes == 8);  // the measured node count, not the base's
  const NetworkParams net = network_params(fitted.profile, 1.0, {});
  NetworkParams formula = net;
  formula.tables = {};
  const auto us = [&](const NetworkParams& n, int nodes, double bytes, Algorithm algorithm = Algorithm::automatic) {
    return allreduce_cost(n, GroupShape{nodes, 8, 8}, bytes, algorithm).time_s * 1e6;
  };
  // At the measured shape the prediction is the measurement (the faster column): 16 MiB 373.5 us.
  CHECK_THAT(us(net, 8, 16777216.0), Catch::Matchers::WithinRel(373.5, 1e-9));
  for (const double bytes : {1048576.0, 16777216.0, 26214400.0, 268435456.0}) {
    // The measured ratio to the formula at 8 nodes (2-3x at mid sizes: the fitted latency and
    // bandwidth come from other sizes) holds at every node count, so the curve over nodes
    // has the formula's shape and no step at 8 (before, 7 and 9 nodes took the bare formula).
    // The formula is the one algorithm the tuner picks at 8 nodes, at every node count.
    const Algorithm at_8 = allreduce_cost(formula, GroupShape{8, 8, 8}, bytes, Algorithm::automatic).algorithm;
    const double measured_over_formula = us(net, 8, bytes) / us(formula, 8, bytes);
    INFO(bytes << " B: measured / formula at 8 nodes " << measured_over_formula << ", " << name_of(at_8));
    if (bytes == 16777216.0) CHECK(measured_over_formula > 2.0);
    for (const int nodes : {2, 4, 7, 9, 16}) {
      INFO(nodes << " nodes");
      CHECK(us(net, nodes, bytes) == Approx(measured_over_formula * us(formula, nodes, bytes, at_8)).epsilon(1e-9));
    }
  }
}

// One cluster at four sizes (Azure ND A100 v4: 8 x A100-SXM4-40GB and 8 x 200 Gbit/s HDR
// per node, the Echo artifact): fitted on some of its logs, an all-reduce on a node count
// never seen is predicted. The same bounds as a log's held-out sizes (5 % geometric mean
// over sizes of at least 1 MiB, 15 % at worst), both as factors (max(p/m, m/p) - 1, as
// `dtperf collective --log` prints them).
namespace {

struct RankCountErrors {
  double geomean = 0.0;
  double worst = 0.0;
};

// Fits `fitted`, then predicts `held_out` on its own node count as `dtperf collective --log`
// does (build_collective_report: its factor errors over sizes of at least 1 MiB).
RankCountErrors predict_held_out_log(const std::vector<const char*>& fitted, const char* held_out, int nodes) {
  io::FitInputs inputs;
  for (const char* name : fitted) inputs.logs.emplace_back(name, io::read_nccl_tests_file(kData + name));
  io::FitSettings settings;
  settings.base = io::load_profile("dgx-a100");  // 8 x 200 Gbit/s NICs and NVSwitch, as Azure's
  settings.created = "2026-11-27";
  ClusterProfile profile = io::build_calibrated_profile(inputs, settings).profile;
  const io::NcclTestsLog held = io::read_nccl_tests_file(kData + held_out);
  REQUIRE(held.nodes == nodes);
  profile.nodes = nodes;
  std::vector<CollectivePoint> points;
  for (const auto& [bytes, measured_s] : io::bytes_and_time_s(held, io::NcclTestsColumn::faster)) {
    points.push_back({bytes, 0.0, measured_s});
  }
  const CollectiveReport report =
      build_collective_report(profile, Collective::all_reduce, Algorithm::automatic, std::move(points), held_out);
  REQUIRE(report.ranks == held.ranks);
  REQUIRE(report.geomean_factor_error_large.has_value());
  std::string table;
  int points_large = 0;
  for (const CollectivePoint& p : report.points) {
    if (p.bytes < 1024.0 * 1024.0) continue;
    ++points_large;
    table += fmt::format("  {:>12.0f} B  measured {:9.1f} us  predicted {:9.1f} us  ({:+.1f} %)\n", p.bytes,
                         *p.measured_s * 1e6, p.predicted_s * 1e6, 100.0 * (p.predicted_s / *p.measured_s - 1.0));
  }
  REQUIRE(points_large >= 10);
  const RankCountErrors e{*report.geomean_factor_error_large, *report.max_factor_error_large};
  WARN(fmt::format("{} ranks predicted from {} fitted logs:\n{}  factor error: geometric mean {:.1f} %, worst {:.1f} %",
                   held.ranks, fitted.size(), table, 100.0 * e.geomean, 100.0 * e.worst));
  return e;
}

}  // namespace

// Fitted on 2, 8 and 16 ranks, the 32-rank log predicted. Known failure: 5.7 % and 21.6 %
// (22 % over at 8 MiB and 11 % at 2 and 16 MiB, 9 % short at 32 MiB: NCCL's protocol and
// channel choice changes with the rank count, which one latency and one bandwidth per
// shape do not see). Before the table's ratio was carried with the algorithm the tuner
// picks at the table's shape (network.cpp), it was 7.5 % and 27.7 %: 16-22 % short at 16
// and 32 MiB, where the 16-rank ring's ratio was applied to a 32-rank tree.
TEST_CASE("Azure A100: fitted on 2, 8 and 16 ranks, the 32-rank all-reduce predicted",
          "[validation][nccl_tests][ranks][!mayfail]") {
  const RankCountErrors e = predict_held_out_log({"all_reduce_2x1_azure-nda100v4-echo_1.txt",
                                                  "all_reduce_8x1_azure-nda100v4-echo_1.txt",
                                                  "all_reduce_8x2_azure-nda100v4-echo_1.txt"},
                                                 "all_reduce_8x4_azure-nda100v4-echo_1.txt", 4);
  CHECK(e.geomean <= kGeomeanBound);
  CHECK(e.worst <= kWorstBound);
}

// The other way: fitted on 8 and 32 ranks, the 16-rank log predicted. Known failure: 9.9 %
// and 58.3 %, 32-37 % short at 16 and 32 MiB. The 32-rank table's ratio is carried with the
// algorithm the tuner picks on 4 nodes, the tree at those sizes, and the tree's formula on
// 2 nodes moves half the bytes a ring does (each node roots one tree and is a leaf of the
// other), so the ratio lands on a time half the ring's, where NCCL ran a ring on 2 nodes
// (the log's largest sizes reach the 4-node log's busbw, not twice it). Priced as a ring on
// 2 nodes (`dtperf collective --algorithm ring`), 16 and 32 MiB are 10 % off either way.
TEST_CASE("Azure A100: fitted on 8 and 32 ranks, the 16-rank all-reduce predicted",
          "[validation][nccl_tests][ranks][!mayfail]") {
  const RankCountErrors e = predict_held_out_log(
      {"all_reduce_8x1_azure-nda100v4-echo_1.txt", "all_reduce_8x4_azure-nda100v4-echo_1.txt"},
      "all_reduce_8x2_azure-nda100v4-echo_1.txt", 2);
  CHECK(e.geomean <= kGeomeanBound);
  CHECK(e.worst <= kWorstBound);
}
