// Fitting: alpha-beta segments recovered from synthetic series, the breakpoint of a
// protocol switch, constraints and outliers, GEMM/copy/spread summaries, the link
// parameters derived from fits, and a raw file's round trip into a profile.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "dtperf/fit.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/io/calibration_json.hpp"
#include "dtperf/io/profile_json.hpp"

using namespace dtperf;

namespace {

// Sizes 8 B, 16 B, ..., 2^k x 8 B up to `max_bytes`.
std::vector<double> sizes(double max_bytes) {
  std::vector<double> out;
  for (double b = 8; b <= max_bytes; b *= 2) out.push_back(b);
  return out;
}

// Exact all_reduce times on `ranks` ranks: alpha + bytes x 2(n-1)/n / busbw.
std::vector<SizeTime> line(const std::vector<double>& bytes, int ranks, double alpha_s, double busbw) {
  std::vector<SizeTime> out;
  const double factor = 2.0 * (ranks - 1) / ranks;
  for (const double b : bytes) out.push_back({b, alpha_s + b * factor / busbw});
  return out;
}

GroupFit group(const std::string& name, const std::string& collective, int ranks, int nodes, int concurrent,
               double alpha_s, double busbw) {
  AlphaBetaFit f;
  f.collective = collective;
  f.level = nodes == 1 ? "intra" : "inter";
  f.ranks = ranks;
  f.nodes = nodes;
  f.segments = {{8.0, 1e9, alpha_s, busbw}};
  return {name, concurrent, f};
}

}  // namespace

TEST_CASE("bus factors are nccl-tests' busbw / algbw", "[fit]") {
  CHECK(*bus_factor("all_reduce", 16) == 2.0 * 15 / 16);  // 1.875
  CHECK(*bus_factor("all_gather", 16) == 15.0 / 16);
  CHECK(*bus_factor("alltoall", 4) == 0.75);
  CHECK(*bus_factor("sendrecv", 16) == 1.0);
  CHECK_FALSE(bus_factor("gather", 4).has_value());
}

TEST_CASE("alpha and beta of an exact series are recovered to 1e-6", "[fit]") {
  // all_reduce on 8 ranks, alpha 20 us, busbw 100 GB/s: t = 20 us + b x 1.75 / 100e9.
  const auto points = line(sizes(1 << 30), 8, 20e-6, 100e9);
  const CollectiveFit f = fit_collective("all_reduce", 8, 1, points);
  REQUIRE(f.fit.segments.size() == 1);
  CHECK(f.fit.level == "intra");
  CHECK(f.bus_factor == 1.75);
  CHECK(f.fit.segments[0].alpha_s == Approx(20e-6).epsilon(1e-6));
  CHECK(f.fit.segments[0].bus_bytes_per_s == Approx(100e9).epsilon(1e-6));
  CHECK(f.fit.segments[0].min_bytes == 8);
  CHECK(f.fit.segments[0].max_bytes == 1 << 30);
  CHECK(f.fit.rms_relative_error < 1e-9);
  CHECK(f.residuals.size() == points.size());
  CHECK(fit_time_s(f.fit, 1 << 20) == Approx(20e-6 + 1048576 * 1.75 / 100e9).epsilon(1e-9));
}

TEST_CASE("a two-protocol series is split at its switch", "[fit][segments]") {
  // LL up to 64 KiB: 10 us + b x 1.5 / 5 GB/s; Simple from 128 KiB: 40 us + b x 1.5 / 200 GB/s
  // (4 ranks). One line through both misses by far more than the noise floor.
  std::vector<SizeTime> points = line(sizes(65536), 4, 10e-6, 5e9);
  std::vector<double> large;
  for (double b = 131072; b <= 1 << 30; b *= 2) large.push_back(b);
  for (const auto& p : line(large, 4, 40e-6, 200e9)) points.push_back(p);
  const CollectiveFit f = fit_collective("all_reduce", 4, 1, points);
  REQUIRE(f.fit.segments.size() == 2);
  CHECK(f.fit.segments[0].max_bytes == 65536);
  CHECK(f.fit.segments[1].min_bytes == 131072);
  CHECK(f.fit.segments[0].alpha_s == Approx(10e-6).epsilon(1e-6));
  CHECK(f.fit.segments[0].bus_bytes_per_s == Approx(5e9).epsilon(1e-6));
  CHECK(f.fit.segments[1].alpha_s == Approx(40e-6).epsilon(1e-6));
  CHECK(f.fit.segments[1].bus_bytes_per_s == Approx(200e9).epsilon(1e-6));
}

namespace {

// An all-reduce on 2 nodes x 8 GPUs (16 ranks, bus factor 1.875) as NCCL's tuner runs it:
// six (algorithm, protocol) regimes, each a latency and a bus bandwidth, the fastest taken
// at every size. Slopes 1.875 / busbw in us per byte: 3.75e-3, 4.6875e-4, 9.375e-5,
// 3.125e-5, 1.25e-5, 9.868e-6; neighbours cross at 4 / 3.28e-3 = 1,219 B, 8 / 3.75e-4 =
// 21,333 B, 20 / 6.25e-5 = 320,000 B, 60 / 1.875e-5 = 3.2 MB and 200 / 2.632e-6 = 76 MB.
// Over sizes 8 B x 2^k to 4 GiB (30 sizes) the regimes win 8, 4, 4, 3, 5 and 6 sizes.
struct Regime {
  double alpha_s;
  double busbw;
};
constexpr Regime kSixRegimes[] = {{8e-6, 0.5e9}, {12e-6, 4e9}, {20e-6, 20e9}, {40e-6, 60e9}, {100e-6, 150e9},
                                  {300e-6, 190e9}};

double envelope_s(double bytes) {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& r : kSixRegimes) t = std::min(t, r.alpha_s + bytes * 1.875 / r.busbw);
  return t;
}

}  // namespace

TEST_CASE("the six regimes NCCL's tuner chooses among for an all-reduce are each recovered", "[fit][segments]") {
  std::vector<SizeTime> points;
  for (const double b : sizes(4294967296.0)) points.push_back({b, envelope_s(b)});
  REQUIRE(points.size() == 30);
  const CollectiveFit f = fit_collective("all_reduce", 16, 2, points);
  REQUIRE(f.fit.segments.size() == 6);
  // Each segment ends at the last size its regime wins: 1 KiB, 16 KiB, 256 KiB, 2 MiB, 64 MiB.
  const double last_bytes[] = {1024, 16384, 262144, 2097152, 67108864, 4294967296.0};
  for (std::size_t k = 0; k < 6; ++k) {
    INFO("segment " << k);
    CHECK(f.fit.segments[k].max_bytes == last_bytes[k]);
    CHECK(f.fit.segments[k].alpha_s == Approx(kSixRegimes[k].alpha_s).epsilon(1e-6));
    CHECK(f.fit.segments[k].bus_bytes_per_s == Approx(kSixRegimes[k].busbw).epsilon(1e-6));
  }
  // With +/-1 % noise on every size (a fixed pattern: +1, -1, +0.5, -0.5 %, repeated), the
  // fit follows the regimes, not the noise: its time at every size is within 3 % of the
  // noise-free envelope, and half of them within 1 %.
  const double noise[] = {0.01, -0.01, 0.005, -0.005};
  std::vector<SizeTime> noisy = points;
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i].time_s *= 1.0 + noise[i % 4];
  const CollectiveFit g = fit_collective("all_reduce", 16, 2, noisy);
  std::vector<double> errors;
  for (const auto& p : points) errors.push_back(std::abs(fit_time_s(g.fit, p.bytes) / p.time_s - 1.0));
  std::sort(errors.begin(), errors.end());
  CHECK(errors.back() <= 0.03);
  CHECK(errors[errors.size() / 2] <= 0.01);
}

TEST_CASE("segments keep alpha >= 0 and beta > 0", "[fit][constraints]") {
  // Times that fall with size: the best line has beta < 0; it is held at the bound, a
  // latency-only segment (bus bandwidth 1 / 1e-15 s per byte for sendrecv).
  const std::vector<SizeTime> falling = {{8, 12e-6}, {16, 11.9e-6}, {32, 11.8e-6}, {64, 11.7e-6}};
  const CollectiveFit f = fit_collective("sendrecv", 2, 2, falling);
  for (const auto& s : f.fit.segments) {
    CHECK(s.bus_bytes_per_s == Approx(1e15));
    CHECK(s.alpha_s > 11.6e-6);
    CHECK(latency_only(s, f.bus_factor));
  }
  // Pure bandwidth with a superlinear tail: the free line would cross zero below 0;
  // alpha is held at 0 and beta = sum(b/t) / sum((b/t)^2).
  const std::vector<SizeTime> tail = {{1e6, 10e-6}, {2e6, 21e-6}, {4e6, 44e-6}};
  const CollectiveFit g = fit_collective("sendrecv", 2, 2, tail);
  CHECK(g.fit.segments[0].alpha_s == 0.0);
  double sx = 0, sxx = 0;
  for (const auto& p : tail) {
    sx += p.bytes / p.time_s;
    sxx += (p.bytes / p.time_s) * (p.bytes / p.time_s);
  }
  CHECK(g.fit.segments[0].bus_bytes_per_s == Approx(sxx / sx).epsilon(1e-9));
  CHECK_FALSE(latency_only(g.fit.segments[0], g.bus_factor));
}

TEST_CASE("a slow outlier is left out of the fit and listed", "[fit][outliers]") {
  auto points = line(sizes(1 << 24), 8, 20e-6, 100e9);
  points[5].time_s *= 3.0;  // 256 B measured 3x its true time
  const CollectiveFit f = fit_collective("all_reduce", 8, 1, points);
  REQUIRE(f.fit.segments.size() == 1);
  CHECK(f.fit.segments[0].alpha_s == Approx(20e-6).epsilon(1e-6));
  CHECK(f.residuals[5].outlier);
  CHECK(f.residuals[5].relative_error == Approx(1.0 / 3.0 - 1.0).epsilon(1e-6));  // predicted / measured - 1
  CHECK(f.worst.front().bytes == 256);
  CHECK(f.fit.rms_relative_error < 1e-9);  // over the points fitted
}

TEST_CASE("a size between two segments takes the faster one, no lower than the chord", "[fit][predict]") {
  AlphaBetaFit fit;
  fit.collective = "sendrecv";
  fit.ranks = 2;
  fit.segments = {{8, 1024, 10e-6, 1e9}, {4096, 1e6, 20e-6, 100e9}};
  CHECK(fit_time_s(fit, 1000) == Approx(10e-6 + 1000 / 1e9));
  // 2048 B: the first line gives 10 + 2.048 = 12.048 us, the second 20 + 0.020 us: the first
  // is faster. But the chord between the ends, 11.024 us at 1024 B and 20.041 us at 4096 B,
  // is at 2048 B (halfway in log) sqrt(11.024 x 20.041) = 14.864 us: the chord.
  CHECK(fit_time_s(fit, 2048) == Approx(std::sqrt((10e-6 + 1024 / 1e9) * (20e-6 + 4096 / 100e9))));
  // Beyond the ends the outer segments carry on.
  CHECK(fit_time_s(fit, 1) == Approx(10e-6 + 1 / 1e9));
  CHECK(fit_time_s(fit, 1e9) == Approx(20e-6 + 1e9 / 100e9));
  // A steep first regime (1024 B in 10 us, no latency) and a flat second (30 us): at 2048 B
  // the faster line, 20 us, is above the chord sqrt(10 x 30.041) = 17.3 us, and stands.
  fit.segments = {{8, 1024, 0.0, 1024 / 10e-6}, {4096, 1e6, 30e-6, 100e9}};
  CHECK(fit_time_s(fit, 2048) == Approx(20e-6));
}

TEST_CASE("prediction errors are the geometric mean and the worst ratio", "[fit][predict]") {
  AlphaBetaFit fit;
  fit.collective = "sendrecv";
  fit.ranks = 2;
  fit.segments = {{1, 1e12, 0.0, 1e9}};  // t = b / 1 GB/s
  // Measured 1.1x and 1/1.1x the prediction: |ln| = ln 1.1 each; geomean 10 %; the worst
  // |predicted / measured - 1| is 1 - 1/1.1 = 9.09 % for the first, 10 % for the second.
  const std::vector<SizeTime> measured = {{1e6, 1.1e-3}, {2e6, 2e-3 / 1.1}, {10, 1.0}};
  const PredictionErrors e = prediction_errors(fit, measured, 1e6);
  CHECK(e.points == 2);
  CHECK(e.geomean == Approx(0.1));
  CHECK(e.worst == Approx(0.1));
  CHECK(e.worst_bytes == 2e6);
}

TEST_CASE("GEMM efficiency: sorted, duplicates averaged, monotone, clamped", "[fit][compute]") {
  const std::map<DType, double> peaks = {{DType::bf16, 1000e12}};
  // Efficiencies 0.5, 0.3 (same FLOPs as 0.5: mean 0.4), 0.7, 0.6, 1.2 (clamped to 1).
  const std::vector<GemmPoint> points = {{DType::bf16, 2e9, 2e9 / 500e12},  {DType::bf16, 2e9, 2e9 / 300e12},
                                         {DType::bf16, 1e9, 1e9 / 400e12},  {DType::bf16, 8e9, 8e9 / 700e12},
                                         {DType::bf16, 16e9, 16e9 / 600e12}, {DType::bf16, 32e9, 32e9 / 1200e12},
                                         {DType::fp16, 1e9, 1e-3}};
  std::vector<FitNote> notes;
  const auto raw = gemm_efficiency_curves(points, peaks, false, notes);
  REQUIRE(raw.size() == 1);
  const auto& c = raw[0].flops_and_efficiency;
  REQUIRE(c.size() == 5);
  CHECK(c[0].first == 1e9);
  CHECK(c[0].second == Approx(0.4));
  CHECK(c[1].second == Approx(0.4));  // (0.5 + 0.3) / 2
  CHECK(c[4].second == 1.0);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].kind == FitNote::Kind::gemm_no_peak);
  CHECK(notes[1].kind == FitNote::Kind::gemm_above_peak);
  CHECK(notes[1].points == 1);
  CHECK(notes[1].best_flops_per_s == Approx(1200e12));
  CHECK(fit_note_text(notes[0]) == "GEMM points of fp16 were left out: the profile has no fp16 peak.");
  CHECK(fit_note_text(notes[1]) == "1 GEMM point(s) of bf16 exceeded the bf16 peak of 1000.0 TFLOP/s (best 1200.0) and count as "
                    "efficiency 1.");
  // Monotone: 0.4, 0.4 (weight 2), 0.7, 0.6, 1.0 -> 0.7 and 0.6 pool to 0.65.
  std::vector<FitNote> more;
  const auto smooth = gemm_efficiency_curves(points, peaks, true, more)[0].flops_and_efficiency;
  CHECK(smooth[2].second == Approx(0.65));
  CHECK(smooth[3].second == Approx(0.65));
  CHECK(smooth[4].second == 1.0);
}

TEST_CASE("copy bandwidth and iteration spread are medians", "[fit][compute]") {
  // Largest 1 GiB: points of at least 512 MiB count: 2.0, 2.4, 2.6 TB/s -> median 2.4.
  const std::vector<CopyPoint> copy = {{1 << 20, (1 << 20) / 0.5e12}, {1 << 29, (1 << 29) / 2.0e12},
                                       {1 << 30, (1 << 30) / 2.4e12}, {1 << 30, (1 << 30) / 2.6e12}};
  CHECK(*copy_bandwidth_bytes_per_s(copy) == Approx(2.4e12));
  const std::vector<double> cv = {0.01, 0.03, 0.02, 0.5};
  CHECK(*iteration_cv(cv) == Approx(0.025));
  CHECK_FALSE(iteration_cv({}).has_value());
}

TEST_CASE("link parameters come from the node, pair and world fits", "[fit][links]") {
  const std::vector<GroupFit> fits = {
      // 8 ranks on one node: alpha 14 us = 2(8-1) steps -> 1 us per step; busbw 360 GB/s.
      group("node", "all_reduce", 8, 1, 1, 14e-6, 360e9),
      // Pairs across nodes: 1 pair at 11.5 GB/s, 8 pairs at 5.9 GB/s each = 47.2 GB/s per node.
      group("pair_inter", "sendrecv", 2, 2, 1, 6e-6, 11.5e9),
      group("pair_inter", "sendrecv", 2, 2, 8, 7e-6, 5.9e9),
      group("world", "all_reduce", 16, 2, 1, 40e-6, 45e9),
  };
  const LinkMeasurements m = derive_link_measurements(fits);
  CHECK(*m.intra_bytes_per_s == Approx(360e9));
  CHECK(*m.intra_latency_s == Approx(1e-6));
  CHECK(*m.node_nic_bytes_per_s == Approx(8 * 5.9e9));
  CHECK(*m.inter_latency_s == Approx(6e-6));  // the sendrecv pair's alpha: one hop
  REQUIRE(m.notes.size() == 4);
  CHECK(m.notes[1].kind == FitNote::Kind::intra_latency);
  CHECK(m.notes[1].latency_s == Approx(1e-6));
  CHECK(fit_note_text(m.notes[1]) == "Intra-node latency: 1.00 us per ring step = alpha 14.00 us / 2(8-1) of all_reduce on 8 ranks of "
                      "one node.");
  CHECK(m.notes[2].kind == FitNote::Kind::nic_from_sendrecv);
  CHECK(fit_note_text(m.notes[2]) == "NICs of a node: 47.2 GB/s = 5.9 GB/s per pair x max(8 concurrent pair(s), 1 rail(s)) (sendrecv "
                      "across nodes, largest sizes, best concurrency).");

  // Without pairs: the world all_reduce. NICs = its busbw, 45 GB/s; latency from the
  // engine's ring: 2(16-1) = 30 steps, ceil(30 / 8) = 4 of them across nodes, 26 inside:
  // alpha = 26 intra + 4 inter, so (40 - 26 x 1) / 4 = 3.5 us.
  const std::vector<GroupFit> no_pairs = {fits[0], fits[3]};
  const LinkMeasurements w = derive_link_measurements(no_pairs);
  CHECK(*w.node_nic_bytes_per_s == Approx(45e9));
  CHECK(*w.inter_latency_s == Approx(3.5e-6));
  CHECK(fit_note_text(w.notes.back()) == "Inter-node latency: 3.50 us per hop = (alpha 40.00 us - 26 intra-node steps x "
                                         "1.00 us) / 4 steps across nodes, the ring latency of all_reduce on 16 ranks "
                                         "over 2 nodes.");
  // Without the node fit the base profile's intra latency (0.5 us) is used:
  // (40 - 26 x 0.5) / 4 = 6.75 us.
  const std::vector<GroupFit> world_only = {fits[3]};
  LinkContext base;
  base.known_intra_latency_s = 0.5e-6;
  CHECK(*derive_link_measurements(world_only, base).inter_latency_s == Approx(6.75e-6));
  // A 2-rank all_reduce across 2 nodes is two ring steps: alpha 30 us -> 15 us per hop.
  const std::vector<GroupFit> pair_ar = {group("pair_inter", "all_reduce", 2, 2, 1, 30e-6, 40e9)};
  CHECK(*derive_link_measurements(pair_ar).inter_latency_s == Approx(15e-6));
}

TEST_CASE("one crossing rank measures one rail of the node", "[fit][links]") {
  // 8 GPUs and 8 NICs per node: a rank's cap is one NIC (rails = min(8, 8) = 8).
  LinkContext rails;
  rails.gpus_per_node = 8;
  rails.nics_per_node = 8;
  // One pair at 49.9 GB/s -> 49.9 x max(1, 8) = 399.2 GB/s for the node.
  const std::vector<GroupFit> pair = {group("pair_inter", "sendrecv", 2, 2, 1, 5e-6, 49.9e9)};
  CHECK(*derive_link_measurements(pair, rails).node_nic_bytes_per_s == Approx(399.2e9));
  // One rank per node all-reducing at 48 GB/s: 48 x max(1, 8 rails / 1 rank) = 384 GB/s.
  const std::vector<GroupFit> one = {group("one_per_node", "all_reduce", 2, 2, 1, 30e-6, 48e9)};
  CHECK(*derive_link_measurements(one, rails).node_nic_bytes_per_s == Approx(384e9));
  // A full node of 8 ranks per node: its busbw is the node's (max(1, 8 / 8) = 1).
  const std::vector<GroupFit> world = {group("world", "all_reduce", 16, 2, 1, 30e-6, 360e9)};
  CHECK(*derive_link_measurements(world, rails).node_nic_bytes_per_s == Approx(360e9));
}

TEST_CASE("a sweep without small sizes gives no latency", "[fit][links]") {
  GroupFit from_1mib = group("pair_inter", "sendrecv", 2, 2, 1, 37e-6, 49.9e9);
  from_1mib.fit.segments[0].min_bytes = 1 << 20;  // above 64 KiB: alpha is no latency
  from_1mib.fit.segments[0].max_bytes = 16e9;
  const std::vector<GroupFit> fits = {from_1mib};
  const LinkMeasurements m = derive_link_measurements(fits);
  CHECK_FALSE(m.inter_latency_s.has_value());
  CHECK(m.node_nic_bytes_per_s.has_value());
  // A sweep that stops at 128 MiB says so.
  GroupFit short_sweep = group("node", "all_reduce", 4, 1, 1, 10e-6, 100e9);
  short_sweep.fit.segments[0].max_bytes = 128.0 * 1024 * 1024;
  const std::vector<GroupFit> node = {short_sweep};
  CHECK(*derive_link_measurements(node).notes[0].sweep_max_bytes == 128.0 * 1024 * 1024);
  CHECK(fit_note_text(derive_link_measurements(node).notes[0]) ==
        "Intra-node: 100.0 GB/s per GPU = busbw of the largest sizes of all_reduce on 4 ranks of one node (the sweep "
        "stops at 128 MiB: the bandwidth may still be rising).");
}

TEST_CASE("measured links become efficiencies against known line rates", "[fit][links]") {
  LinkMeasurements m;
  m.intra_bytes_per_s = 360e9;
  m.intra_latency_s = 1e-6;
  m.node_nic_bytes_per_s = 47.2e9;
  m.inter_latency_s = 6e-6;
  ClusterProfile p;
  std::vector<FitNote> notes;
  KnownLinks known;
  known.intra_link_bytes_per_s = 450e9;
  known.nics_per_node = 4;
  known.nic_gbps = 100;
  apply_link_measurements(p, m, known, notes);
  CHECK(p.intra.bandwidth_bytes_per_s == 450e9);
  CHECK(p.intra.efficiency == Approx(0.8));  // 360 / 450
  CHECK(p.inter.nics_per_node == 4);
  // 4 x 100 Gbit/s = 50 GB/s of line rate: 47.2 / 50 = 0.944.
  CHECK(p.inter.transport_efficiency == Approx(0.944));
  CHECK(p.inter.latency_s == 6e-6);
  CHECK(notes.empty());

  // Unknown line rate: the measurement is the rate, efficiency 1.
  ClusterProfile q;
  apply_link_measurements(q, m, {}, notes);
  CHECK(q.intra.bandwidth_bytes_per_s == 360e9);
  CHECK(q.inter.nic_gbps == Approx(377.6));  // 47.2 GB/s x 8 bit / 1 NIC
  CHECK(q.inter.transport_efficiency == 1.0);
  REQUIRE(notes.size() == 2);
  CHECK(notes[1].kind == FitNote::Kind::nic_rate_unknown);
  CHECK(fit_note_text(notes[1]) == "NIC line rate unknown: nic_gbps = measured 47.2 GB/s / 1 NIC(s), transport efficiency 1.");

  // Faster than the line rate (tree / NVLS all-reduce): efficiency 1, with a note.
  ClusterProfile r;
  known.nic_gbps = 50;  // 4 x 50 Gbit/s = 25 GB/s < 47.2
  notes.clear();
  apply_link_measurements(r, m, known, notes);
  CHECK(r.inter.transport_efficiency == 1.0);
  CHECK(notes.at(0).kind == FitNote::Kind::nic_above_line_rate);
  CHECK(fit_note_text(notes.at(0)) == "The measured NIC throughput 47.2 GB/s exceeds 4 x 50 Gbit/s = 25.0 GB/s (tree or NVLS "
                       "all-reduce, or more NICs than stated): transport efficiency set to 1.");
}

TEST_CASE("a raw calibration file fits into a profile that parses", "[fit][roundtrip]") {
  // 2 nodes x 2 ranks of a known GPU; node all_reduce alpha 10 us, busbw 100 GB/s
  // (factor 1 on 2 ranks); pair_inter sendrecv alpha 5 us, 12.5 GB/s. A GEMM ran 1150 us
  // beside an all-reduce of the world, 1000 us alone (x1.15); the all-reduce 600 us
  // beside GEMMs, 500 us alone (x1.2).
  io::Json raw = {{"schema", "dtperf.calibration/2"}, {"tool", "t"}, {"backend", "nccl"},
                  {"created", "2026-11-21T10:00:00Z"}, {"arguments", io::Json::array()},
                  {"world", {{"ranks", 4}, {"nodes", 2}, {"ranks_per_node", 2}, {"hosts", {"a", "b"}},
                             {"placement", {{{"rank", 0}, {"host", "a"}, {"local_rank", 0}, {"device_name", "NVIDIA H100 80GB HBM3"}}}}}},
                  {"budget_s", 60}, {"elapsed_s", 50}, {"truncated", false}};
  const auto points = [](double alpha_us, double busbw_gb) {
    io::Json out = io::Json::array();
    for (double b = 8; b <= 1 << 26; b *= 4) {
      const double t = alpha_us + b / (busbw_gb * 1e3);
      out.push_back({{"bytes", b}, {"count", 1}, {"time_us", t}, {"time_us_min", t}, {"time_us_max", t},
                     {"algbw_GB_per_s", b / (t * 1e3)}, {"busbw_GB_per_s", b / (t * 1e3)}, {"correct", true}});
    }
    return out;
  };
  const auto entry = [&](const char* collective, const char* group_name, int ranks, int nodes, double a, double bw) {
    return io::Json{{"collective", collective}, {"group", group_name}, {"ranks", ranks}, {"nodes", nodes},
                    {"concurrent_per_node", 1}, {"dtype", "float32"}, {"warmup_iterations", 5},
                    {"iterations", 20}, {"points", points(a, bw)}};
  };
  raw["collectives"] = {entry("all_reduce", "node", 2, 1, 10, 100), entry("sendrecv", "pair_inter", 2, 2, 5, 12.5)};
  raw["contention"] = io::Json::parse(R"([{"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192,
      "collective": "all_reduce", "group": "world", "ranks": 4, "nodes": 2, "bytes": 268435456, "calls": 20,
      "gemm_time_us_alone": 1000, "gemm_time_us_beside": 1150, "collective_time_us_alone": 500,
      "collective_time_us_beside": 600, "covered": true}])");
  // bytes must be integers in the file.
  for (auto& c : raw["collectives"]) {
    for (auto& p : c["points"]) p["bytes"] = static_cast<std::int64_t>(p["bytes"].get<double>());
  }
  io::FitInputs inputs;
  inputs.raws.emplace_back("raw.json", io::parse_calibration(raw, "raw.json"));
  io::FitSettings settings;
  settings.created = "2026-11-21";
  const FitOutcome out = io::build_calibrated_profile(inputs, settings);
  const ClusterProfile back = io::parse_profile(io::profile_to_json(out.profile), "fitted.json");
  CHECK(back.provenance.source == "calibrated");
  CHECK(back.provenance.tool == "dtperf fit 0.1.0");
  CHECK(back.provenance.created == "2026-11-21");
  CHECK(back.gpu.model == "H100-SXM5-80GB");  // the built-in dgx-h100's GPU
  CHECK(back.nodes == 2);
  CHECK(back.gpus_per_node == 2);
  // 2 ranks on a node: alpha 10 us = 2(2-1) steps -> 5 us per step.
  CHECK(back.intra.latency_s == Approx(5e-6));
  CHECK(back.intra.bandwidth_bytes_per_s == Approx(100e9));
  CHECK(back.inter.latency_s == Approx(5e-6));
  CHECK(back.inter.nic_gbps == Approx(100.0));  // 12.5 GB/s = 100 Gbit/s on 1 NIC
  CHECK(back.compute.interference_factor == Approx(1.15));
  CHECK(back.compute.comm_interference_factor == Approx(1.2));
  REQUIRE(back.calibration.tables.size() == 2);
  REQUIRE(back.calibration.fits.size() == 2);
  CHECK(back.calibration.fits[0].segments.size() == 1);
  REQUIRE(back.provenance.residuals.size() == 2);
  CHECK(back.provenance.residuals[0].starts_with("all_reduce 2 ranks/1 node: rms 0.0 %, worst 0.0 % at "));
  CHECK(back.provenance.residuals[1].starts_with("sendrecv 2 ranks/2 nodes: rms 0.0 %, worst 0.0 % at "));
}

namespace {

// A raw calibration file as `dtperf fit` turns it into a profile on `base`.
FitOutcome fit_raw(const io::Json& file, const char* base, const char* created) {
  io::FitInputs inputs;
  inputs.raws.emplace_back("raw.json", io::parse_calibration(file, "raw.json"));
  io::FitSettings settings;
  settings.created = created;
  settings.base = io::load_profile(base);
  return io::build_calibrated_profile(inputs, settings);
}

}  // namespace

TEST_CASE("contention is applied only where it measured a collective across ranks, covered", "[fit][contention]") {
  io::Json raw = {{"schema", "dtperf.calibration/2"}, {"tool", "t"}, {"backend", "nccl"},
                  {"created", "2026-11-21T10:00:00Z"}, {"arguments", io::Json::array()},
                  {"world", {{"ranks", 2}, {"nodes", 1}, {"ranks_per_node", 2}, {"hosts", {"a"}},
                             {"placement", io::Json::array()}}},
                  {"budget_s", 60}, {"elapsed_s", 50}, {"truncated", false}};
  raw["contention"] = io::Json::parse(R"([{"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192,
      "collective": "all_reduce", "group": "world", "ranks": 2, "nodes": 1, "bytes": 268435456, "calls": 20,
      "gemm_time_us_alone": 1000, "gemm_time_us_beside": 990, "collective_time_us_alone": 500,
      "collective_time_us_beside": 900, "covered": true}])");
  const auto fitted = [](const io::Json& file) { return fit_raw(file, "dgx-h100", "2026-11-21"); };
  FitOutcome out = fitted(raw);
  CHECK(out.profile.compute.interference_factor == 1.0);  // 990 / 1000 < 1: noise, no slowdown
  CHECK(out.profile.compute.comm_interference_factor == Approx(1.8));  // 900 / 500
  raw["contention"][0]["covered"] = false;  // the GEMMs ended before the timed all-reduces
  out = fitted(raw);
  CHECK(out.profile.compute.comm_interference_factor == 1.0);
  REQUIRE(!out.notes.empty());
  CHECK(out.notes.back().ends_with("not applied: the other side ended before the timed one."));
}

TEST_CASE("the raw files of real one-GPU runs (H200) read and fit", "[fit][gpu-raw]") {
  // dtperf-calibrate on one NVIDIA H200 (profiles/calibrated/README.md), four runs on three
  // days: NCCL on one rank, GEMMs in five dtypes, copies, and a GEMM beside a one-rank
  // all-reduce.
  const std::string file = GENERATE(as<std::string>{}, "h200-1gpu.raw.json", "h200-1gpu.repeat1.raw.json",
                                    "h200-1gpu.repeat2.raw.json", "h200-1gpu.repeat3.raw.json");
  INFO(file);
  const std::string path = std::string(DTPERF_VALIDATION_DATA) + "/../../profiles/calibrated/" + file;
  const io::RawCalibration raw = io::read_calibration_file(path);
  CHECK(raw.schema == "dtperf.calibration/2");
  CHECK(raw.world.placement.at(0).device_name == "NVIDIA H200");
  REQUIRE(raw.collectives.size() == 1);
  CHECK(raw.collectives[0].group == "self");
  std::map<DType, double> best_tflops;
  for (const auto& g : raw.gemm) best_tflops[g.dtype] = std::max(best_tflops[g.dtype], g.tflops);
  CHECK(best_tflops.size() == 5);  // fp32, tf32, fp16, bf16, fp8
  REQUIRE(raw.contention.size() == 1);
  CHECK(raw.contention[0].covered);
  io::FitInputs inputs;
  inputs.raws.emplace_back(path, raw);
  io::FitSettings settings;
  settings.created = "2026-11-27";
  const FitOutcome out = io::build_calibrated_profile(inputs, settings);
  CHECK(out.series.empty());  // one rank: no link to fit
  // Without a base profile the peaks are the best measured GEMM rates.
  for (const auto& [dtype, tflops] : best_tflops) {
    CHECK(out.profile.gpu.peak_flops_per_s.at(dtype) == Approx(tflops * 1e12).epsilon(0.01));
  }
  CHECK(out.profile.compute.interference_factor == 1.0);  // one rank: reported, not applied
  const auto noted = [&](const std::string& text) {
    return std::any_of(out.notes.begin(), out.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  CHECK(noted("not applied: on one rank NCCL copies locally"));
  CHECK(noted("NCCL all_reduce on one rank (no link, not fitted)"));
}

TEST_CASE("a link level far below its hardware is not fitted unless the user insists", "[fit][guardrails]") {
  // AWS p4de (4 x 100 Gbit/s EFA) fitted against DGX H100's 8 x 400 Gbit/s: the NICs carried
  // 78.7 GB/s, under half of 400 GB/s, so the run measures something the stated hardware
  // cannot explain (here the wrong NICs; elsewhere sockets instead of RDMA).
  const std::string file = std::string(DTPERF_VALIDATION_DATA) + "/nccl-tests/all_reduce_8x2_aws-p4de-efa_1.txt";
  io::FitInputs inputs;
  inputs.logs.emplace_back(file, io::read_nccl_tests_file(file));
  io::FitSettings settings;
  settings.created = "2026-11-27";
  settings.base = io::load_profile("dgx-h100");
  const FitOutcome excluded = io::build_calibrated_profile(inputs, settings);
  CHECK(excluded.profile.inter.transport_efficiency == settings.base->inter.transport_efficiency);
  CHECK(excluded.profile.inter.latency_s == settings.base->inter.latency_s);
  CHECK(excluded.profile.calibration.tables.empty());  // the 2-node table would replace the formula
  CHECK(excluded.profile.calibration.fits.empty());
  REQUIRE(!excluded.warnings.empty());
  CHECK(excluded.warnings.back().starts_with("Not fitted: the measurements across nodes (1 table)"));
  settings.keep_degraded = true;
  const FitOutcome kept = io::build_calibrated_profile(inputs, settings);
  // 78.7 GB/s of 8 x 400 Gbit/s = 400 GB/s: efficiency 0.197.
  CHECK(kept.profile.inter.transport_efficiency == Approx(78.73 / 400.0).epsilon(0.01));
  CHECK(kept.profile.calibration.tables.size() == 1);
}

TEST_CASE("the host backend's files are fitted however far below a GPU cluster's links", "[fit][guardrails]") {
  // CPU ranks over TCP between 2 nodes: sendrecv at 5 us + bytes / 0.0625 GB/s (0.5 Gbit/s),
  // fitted over gbe10-box (10 Gbit/s NICs): far below, and still what was meant to be measured.
  io::Json points = io::Json::array();
  for (std::int64_t b = 1024; b <= (std::int64_t{1} << 23); b *= 4) {
    const double t = 5.0 + static_cast<double>(b) / (0.0625 * 1e3);
    points.push_back({{"bytes", b}, {"count", b / 4}, {"time_us", t}, {"time_us_min", t}, {"time_us_max", t},
                      {"algbw_GB_per_s", static_cast<double>(b) / (t * 1e3)},
                      {"busbw_GB_per_s", static_cast<double>(b) / (t * 1e3)}, {"correct", true}});
  }
  io::Json raw = {{"schema", "dtperf.calibration/2"}, {"tool", "t"}, {"backend", "host"},
                  {"created", "2026-11-21T10:00:00Z"}, {"arguments", io::Json::array()},
                  {"world", {{"ranks", 2}, {"nodes", 2}, {"ranks_per_node", 1}, {"hosts", {"a", "b"}},
                             {"placement", io::Json::array()}}},
                  {"budget_s", 60}, {"elapsed_s", 50}, {"truncated", false},
                  {"collectives", {{{"collective", "sendrecv"}, {"group", "pair_inter"}, {"ranks", 2}, {"nodes", 2},
                                    {"concurrent_per_node", 1}, {"dtype", "float32"}, {"warmup_iterations", 2},
                                    {"iterations", 10}, {"points", points}}}}};
  io::FitInputs inputs;
  inputs.raws.emplace_back("raw.json", io::parse_calibration(raw, "raw.json"));
  io::FitSettings settings;
  settings.created = "2026-11-21";
  settings.base = io::load_profile("gbe10-box");
  const FitOutcome out = io::build_calibrated_profile(inputs, settings);
  CHECK(std::any_of(out.warnings.begin(), out.warnings.end(),
                    [](const std::string& w) { return w.find("less than half") != std::string::npos; }));
  // 0.0625 GB/s of 10 Gbit/s = 1.25 GB/s: efficiency 0.05, as measured.
  CHECK(out.profile.inter.transport_efficiency == Approx(0.05).epsilon(0.02));
  CHECK(out.profile.calibration.tables.size() == 1);
}

TEST_CASE("held-out error: fitted on every other size, the sizes between predicted", "[fit][holdout]") {
  // An exact alpha-beta series (20 us, 100 GB/s busbw on 8 ranks) from 8 B to 1 GiB: 28
  // sizes, 14 fitted (8 B, 32 B, ...), 14 held out; the fit of a line predicts a line.
  std::vector<SizeTime> points = line(sizes(1 << 30), 8, 20e-6, 100e9);
  REQUIRE(points.size() == 28);
  const auto exact = holdout_errors("all_reduce", 8, 1, points);
  REQUIRE(exact);
  CHECK(exact->fitted == 14);
  CHECK(exact->held_out.points == 14);
  CHECK(exact->held_out.geomean < 1e-6);
  // Sizes 8 x 2^k B, k = 0..27; held out: odd k. Of at least 1 MiB (k = 17): 1, 4, 16,
  // 64, 256 MiB and 1 GiB.
  CHECK(exact->large.points == 6);
  // One held-out size (64 MiB, k = 23) measured twice as slow: predicted / measured = 1/2
  // there, the worst error 50 %, and the large sizes' geometric mean exp(ln 2 / 6) - 1.
  const double slow = 64.0 * 1024 * 1024;
  for (auto& p : points) {
    if (p.bytes == slow) p.time_s *= 2.0;
  }
  const auto bumped = holdout_errors("all_reduce", 8, 1, points);
  REQUIRE(bumped);
  CHECK(bumped->held_out.worst == Approx(0.5).epsilon(1e-6));
  CHECK(bumped->held_out.worst_bytes == slow);
  CHECK(bumped->large.geomean == Approx(std::exp(std::log(2.0) / 6) - 1).epsilon(1e-6));
  // Two sizes cannot be both fitted and checked.
  CHECK_FALSE(holdout_errors("all_reduce", 8, 1, std::vector<SizeTime>(points.begin(), points.begin() + 2)));
}

TEST_CASE("pairs measured side by side are timed until the last one is done", "[fit][roundtrip]") {
  // Calls timed one by one: the single pair's median (80 us) beats its mean (100 us, one
  // stall) and is the time fitted. Two pairs sharing the node's link: one got more than
  // its share and finished early, the other then ran alone, so every median (60 us) is
  // faster than the shared rate; the time until both are done is the slowest mean, 120 us.
  const auto entry = [](int concurrent) {
    io::Json points = io::Json::array();
    for (std::int64_t b : {1 << 20, 1 << 22}) {
      const double scale = static_cast<double>(b) / (1 << 20);
      const double mean = (concurrent == 1 ? 100.0 : 120.0) * scale;
      const double median = (concurrent == 1 ? 80.0 : 60.0) * scale;
      points.push_back({{"bytes", b}, {"count", b / 4}, {"time_us", mean}, {"time_us_min", mean},
                        {"time_us_max", mean}, {"time_us_median", median},
                        {"algbw_GB_per_s", static_cast<double>(b) / (mean * 1e3)},
                        {"busbw_GB_per_s", static_cast<double>(b) / (mean * 1e3)}, {"correct", true}});
    }
    return io::Json{{"collective", "sendrecv"}, {"group", "pair_inter"}, {"ranks", 2}, {"nodes", 2},
                    {"concurrent_per_node", concurrent}, {"dtype", "float32"}, {"warmup_iterations", 2},
                    {"iterations", 10}, {"points", points}};
  };
  io::Json raw = {{"schema", "dtperf.calibration/1"}, {"tool", "t"}, {"backend", "host"},
                  {"created", "2026-11-21T10:00:00Z"}, {"arguments", io::Json::array()},
                  {"world", {{"ranks", 4}, {"nodes", 2}, {"ranks_per_node", 2}, {"hosts", {"a", "b"}},
                             {"placement", {{{"rank", 0}, {"host", "a"}, {"local_rank", 0}}}}}},
                  {"budget_s", 60}, {"elapsed_s", 50}, {"truncated", false},
                  {"collectives", {entry(1), entry(2)}}};
  io::FitInputs inputs;
  inputs.raws.emplace_back("raw.json", io::parse_calibration(raw, "raw.json"));
  const std::vector<MeasuredSeries> series = io::collect_series(inputs);
  REQUIRE(series.size() == 2);
  CHECK(series[0].points[0].time_s == Approx(80e-6));   // one pair: the median
  CHECK(series[1].points[0].time_s == Approx(120e-6));  // two pairs: the slowest mean
  CHECK(series[1].points[1].time_s == Approx(480e-6));
}

TEST_CASE("guardrails: link rates their hardware cannot explain are warned about", "[fit][guardrails]") {
  KnownLinks known;
  known.intra_link_bytes_per_s = 450e9;  // NVLink4 per direction
  known.nics_per_node = 8;
  known.nic_gbps = 400.0;  // 8 x 50 GB/s = 400 GB/s per node
  const auto kinds = [](const std::vector<FitNote>& notes) {
    std::vector<FitNote::Kind> k;
    for (const auto& n : notes) k.push_back(n.kind);
    return k;
  };
  using K = FitNote::Kind;
  LinkMeasurements m;
  // Within: a ring at 360 GB/s (80 % of 450); NICs at 392 GB/s (98 % of 400).
  m.intra_bytes_per_s = 360e9;
  m.node_nic_bytes_per_s = 392e9;
  CHECK(link_warnings(m, known, 8).empty());
  // 464 GB/s over 450 GB/s links is 103 %, above the ring's 85 %: NVLS.
  m.intra_bytes_per_s = 464e9;
  CHECK(kinds(link_warnings(m, known, 8)) == std::vector{K::intra_above_ring_ceiling});
  // 190 GB/s is below half the ring's 0.85 x 450 = 382.5 GB/s (191.25).
  m.intra_bytes_per_s = 190e9;
  CHECK(kinds(link_warnings(m, known, 8)) == std::vector{K::intra_far_below});
  m.intra_bytes_per_s.reset();
  // 485 GB/s through 400 GB/s of NICs: from a sendrecv, more NICs or a faster line than stated ...
  m.node_nic_bytes_per_s = 485e9;
  m.notes = {{.kind = K::nic_from_sendrecv}};
  CHECK(kinds(link_warnings(m, known, 8)) == std::vector{K::nic_above_ceiling});
  // ... from all_reduce on 16 ranks over 2 nodes, the tree's inflated busbw.
  m.notes = {{.kind = K::nic_from_all_reduce, .ranks = 16, .nodes = 2}};
  const auto two_nodes = link_warnings(m, known, 8);
  REQUIRE(kinds(two_nodes) == std::vector{K::nic_two_node_inflated});
  CHECK(two_nodes[0].limit_bytes_per_s == Approx(400e9));
  // With one rank per node tree and ring move the same bytes: not the tree's doing.
  m.notes = {{.kind = K::nic_from_all_reduce, .ranks = 2, .nodes = 2}};
  CHECK(kinds(link_warnings(m, known, 8)) == std::vector{K::nic_above_ceiling});
  // 78.7 GB/s is below half of 400 GB/s: far below (sockets, fewer NICs than stated).
  m.node_nic_bytes_per_s = 78.7e9;
  CHECK(kinds(link_warnings(m, known, 8)) == std::vector{K::nic_far_below});
  // Without known rates there is nothing to compare with.
  CHECK(link_warnings(m, KnownLinks{}, 8).empty());
}

TEST_CASE("a ring across nodes as fast as one node's is bound inside the node: the NICs are not derived", "[fit][links]") {
  // Eight T4s on PCIe per node: one node's all_reduce reaches busbw 5.6 GB/s. Over 2 nodes
  // the ring reaches 5.4 GB/s, 96 % of it (at least 90 %): the ring crosses every GPU's
  // PCIe link either way, so the NICs were not what limited it.
  const std::vector<GroupFit> pcie = {group("node", "all_reduce", 8, 1, 1, 20e-6, 5.6e9),
                                      group("world", "all_reduce", 16, 2, 1, 60e-6, 5.4e9)};
  const LinkMeasurements m = derive_link_measurements(pcie);
  CHECK(*m.intra_bytes_per_s == Approx(5.6e9));
  CHECK_FALSE(m.node_nic_bytes_per_s.has_value());
  const auto bound = std::find_if(m.notes.begin(), m.notes.end(),
                                  [](const FitNote& n) { return n.kind == FitNote::Kind::nic_intra_bound; });
  REQUIRE(bound != m.notes.end());
  CHECK(fit_note_text(*bound) ==
        "NICs not derived: all_reduce on 16 ranks over 2 nodes reached busbw 5.4 GB/s, 96 % of the 5.6 GB/s of one "
        "node's all_reduce: the ring was bound by the intra-node link, not the NICs (the base profile's NIC values "
        "are kept). Measure sendrecv across nodes to see the NICs.");
  // At 4.9 GB/s (88 %, under 90 %) the NICs are the limit and are derived from it.
  const std::vector<GroupFit> slower = {pcie[0], group("world", "all_reduce", 16, 2, 1, 60e-6, 4.9e9)};
  CHECK(*derive_link_measurements(slower).node_nic_bytes_per_s == Approx(4.9e9));
  // Without the one-node measurement the far-below warning names the intra-node link as
  // the other explanation; with it, not.
  LinkMeasurements world_only = derive_link_measurements(std::vector<GroupFit>{pcie[1]});
  KnownLinks known;
  known.nics_per_node = 1;
  known.nic_gbps = 100.0;  // 12.5 GB/s; 5.4 GB/s is under half of it
  const std::vector<FitNote> w = link_warnings(world_only, known, 1);
  REQUIRE(w.size() == 1);
  CHECK(fit_note_text(w[0]).ends_with("or a sweep that stopped short; or the ring was bound inside the node (PCIe) "
                                      "and the NICs were never the limit: fit a one-node all_reduce log alongside to "
                                      "tell."));
  LinkMeasurements both = derive_link_measurements(slower);
  CHECK(fit_note_text(link_warnings(both, known, 1).at(0)).ends_with("or a sweep that stopped short."));
}

TEST_CASE("guardrails: GEMMs far below the efficiency the profile assumes are warned about", "[fit][guardrails]") {
  // bf16 peak 989 TFLOP/s, the profile assumes 65 % for large GEMMs: the warning is below 32.5 %.
  const std::map<DType, double> peaks = {{DType::bf16, 989e12}, {DType::fp32, 67e12}};
  std::vector<GemmEfficiencyCurve> curves(2);
  curves[0].dtype = DType::bf16;
  curves[0].flops_and_efficiency = {{1e9, 0.05}, {1e12, 0.30}};  // best 30 %: tensor cores idle?
  curves[1].dtype = DType::fp32;
  curves[1].flops_and_efficiency = {{1e9, 0.2}, {1e12, 0.6}};
  const auto warnings = gemm_warnings(curves, peaks, 0.65);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].kind == FitNote::Kind::gemm_far_below);
  CHECK(warnings[0].dtype == DType::bf16);
  CHECK(warnings[0].best_flops_per_s == Approx(0.30 * 989e12));
  CHECK(fit_note_is_warning(warnings[0].kind));
  CHECK_FALSE(fit_note_is_warning(FitNote::Kind::nic_from_sendrecv));
}

// The profile's iteration CV, the spread variable compute draws from, is the robust one
// where a raw file gives it: a stall or two in a short sample moves a standard deviation,
// not the quartiles. A version 2 file keeps its CV.
TEST_CASE("fit takes the iteration spread without its stalls, and says so", "[fit][spread]") {
  const auto fitted_cv = [](io::Json spread, const char* schema) {
    io::Json raw = {{"schema", schema}, {"tool", "t"}, {"backend", "host"},
                    {"created", "2026-11-30T10:00:00Z"}, {"arguments", io::Json::array()},
                    {"world", {{"ranks", 1}, {"nodes", 1}, {"ranks_per_node", 1}, {"hosts", {"a"}},
                               {"placement", io::Json::array()}}},
                    {"budget_s", 60}, {"elapsed_s", 50}, {"truncated", false},
                    {"iteration_spread", io::Json::array({spread})}};
    return fit_raw(raw, "gbe10-box", "2026-11-30");
  };
  // 158.4 us +/- 28.0 us (cv 0.177, one H200's repeat), 143.9 us and 0.024 without stalls.
  io::Json spread = {{"rank", 0}, {"iterations", 50}, {"mean_us", 158.4}, {"stddev_us", 28.0}, {"cv", 28.0 / 158.4}};
  const FitOutcome v2 = fitted_cv(spread, "dtperf.calibration/2");
  REQUIRE(v2.profile.compute.compute_cv);
  CHECK(*v2.profile.compute.compute_cv == Approx(28.0 / 158.4));
  spread["median_us"] = 143.9;
  spread["robust_cv"] = 0.024;
  const FitOutcome v3 = fitted_cv(spread, "dtperf.calibration/3");
  REQUIRE(v3.profile.compute.compute_cv);
  CHECK(*v3.profile.compute.compute_cv == 0.024);
  CHECK(std::any_of(v3.notes.begin(), v3.notes.end(), [](const std::string& n) {
    return n.find("a CV of 0.177 with its stalls, 0.024 without them") != std::string::npos;
  }));
}
