// Leave one cluster out: whether what the fits learn on some clusters holds on another.
//
// Every measured training run in the repository, grouped by the cluster (the machines and
// the software stack) it ran on:
//   [DEC]      4 x A100 nodes, HDR100 InfiniBand: Transformer-base, All-Reduce and gossip (12)
//   [NET]      p3dn.24xlarge, TCP: ResNet-50 with Horovod at 1-100 Gbit/s (16)
//   MPT H100   H100 nodes, FSDP: MPT-760M to MPT-70B (20)
//   MPT A100   A100 nodes, 1600 Gbit/s RoCE, FSDP: MPT-7B to MPT-70B (4)
//   DLE A100   one A100 (DGX A100): ResNet-50, TF32 and mixed precision (2)
//   DLE V100   one V100 (DGX-1): ResNet-50, FP32 and mixed precision (2)
//   H200       one H200, the calibrated profile: five models, four dtypes (12)
//   DLE A100 TXL  one DGX A100 (40 GB GPUs), DDP on NVSwitch: Transformer-XL base and large,
//                 TF32 and mixed precision, 1-8 GPUs at a fixed batch per GPU (20)
//   DLE V100 TXL  one DGX-2H (16 x V100), DDP on NVSwitch: the same models, FP32 and mixed
//                 precision, 1-16 GPUs (20)
// (sources: validation/data/SOURCES.md; the [DEC] and [NET] cells: validation_cells.hpp).
//
// Protocol. Each cluster is fitted on all its runs (`dtperf fit --runs`, the datasheet
// profile as priors). For each cluster in turn, the constants are chosen on the others: a
// parameter's departure from its prior (ln(fitted / prior) for scales, efficiencies and
// latencies; fitted - prior for the kappas and the host work, fit_runs.hpp) is the median
// over the other clusters whose fit identified it ("pinned"), and the held-out cluster's
// runs are predicted with its own datasheet profile moved by those departures, nothing of
// its own runs fitted. Beside it, the datasheet profile as given. The table shows whether a
// constant the fits find is the physics (it carries to a cluster it was not chosen on) or
// the cluster (it does not).
//
// A departure pools only across clusters where it means the same thing (its physics, not
// its score, decides):
//  - the compute scale, only where compute comes from FLOPs: a run anchored on a measured
//    iteration ([NET]'s single-GPU 128.09 ms) scales a measurement, not the roofline, so
//    it neither gives nor takes one;
//  - the host work per byte across nodes and a host transport's ceiling, only between
//    host-driven transports (TCP stages every byte through host memory; RDMA does not).
//
// Second, what the datasheet prediction's uncertainty is: its compute scale and its
// inter-node efficiency are off by factors that the fits find to differ from cluster to
// cluster. For each held-out cluster, the others' departures of each give a prediction
// interval for the held-out one's (their mean, and their sd x sqrt(1 + 1/n) in Student's t:
// ClusterSpread; where fewer than two others identify it, the fit's prior width), with the
// model's 2 % floor, as datasheet_uncertainty() builds it for every prediction no fit
// narrows (fit_runs.hpp; without the compute term where the held-out cluster's compute is
// measured), through the same delta method as a fitted profile's bands (BandModels); the
// test counts the measurements inside that P10-P90 band. Target (the product's for
// bands): 70-90 % inside (its own case, which holds), and none missed by more than 10 %
// outside it. Another case checks the product's departures against those over all the
// clusters.
//
// Bounds, fixed before the result was known, are the product's requirements for
// predictions on a cluster not tuned to: median |error| <= 5 %, max <= 10 % over every
// held-out run. The test prints the table; it is a known failure while they do not hold
// (docs/VALIDATION.md gives the figures). Nine fits, about 15 s:
// `meson test "validation loco"` runs it apart.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/runs_file.hpp"
#include "dtperf/zoo.hpp"
#include "validation_cells.hpp"

using namespace dtperf;

namespace {

const std::string kData = std::string(DTPERF_VALIDATION_DATA) + "/";

struct Cluster {
  std::string name;
  std::shared_ptr<const ModelSpec> model;  // the runs' model where a run names none
  Setup base;
  std::vector<MeasuredRun> runs;
  bool flops_compute = true;    // compute from FLOPs, not anchored on a measured iteration
  bool host_transport = false;  // the network is driven by the host (TCP)
};

Cluster from_file(std::string name, const std::string& file, const std::string& profile, std::size_t runs) {
  Cluster c;
  c.name = std::move(name);
  c.runs = io::read_runs_file(kData + file);
  INFO(file);
  REQUIRE(c.runs.size() == runs);
  REQUIRE(c.runs.front().config.model);
  c.model = c.runs.front().config.model;
  c.base.cluster = io::load_profile(profile);
  c.base.model = c.model.get();
  c.base.dtype = c.runs.front().config.cluster.dtype.value_or(DType::bf16);
  return c;
}

Cluster dec() {
  Cluster c;
  c.name = "[DEC] 4xA100 IB";
  c.model = std::make_shared<const ModelSpec>(*zoo_model("transformer-base"));
  c.base.cluster = io::load_profile("a100x4-ib100");
  c.base.model = c.model.get();
  c.base.dtype = DType::fp16;
  const double allreduce_ms[3] = {73.0, 54.8, 51.5};
  for (int i = 0; i < 3; ++i) c.runs.push_back(validation::dec_run(Scheme::allreduce(), 2 << i, allreduce_ms[i]));
  for (const validation::DecRow& row : validation::kDecHeldOut) {
    for (int i = 0; i < 3; ++i) c.runs.push_back(validation::dec_run(row.scheme, 2 << i, row.measured_ms[i]));
  }
  return c;
}

Cluster net() {
  validation::require_net_data();
  Cluster c;
  c.name = "[NET] p3dn TCP";
  c.model = std::make_shared<const ModelSpec>(io::read_timing_log(validation::kNetData + "resnet50.bk.log"));
  c.base.cluster = io::load_profile("p3dn-24xlarge");
  c.base.model = c.model.get();
  c.base.dtype = DType::fp32;
  c.runs = validation::net_fitted_runs();
  for (const validation::NetCell& cell : validation::kNetHeldOut) {
    c.runs.push_back(validation::net_run(cell.gpus, cell.gbps, cell.percent));
  }
  c.flops_compute = false;  // every run gives the measured single-GPU iteration
  c.host_transport = true;  // Horovod and NCCL over TCP sockets ([NET] section 2)
  return c;
}

std::vector<Cluster> clusters() {
  std::vector<Cluster> out;
  out.push_back(dec());
  out.push_back(net());
  out.push_back(from_file("MPT H100 FSDP", "validation-s3/mpt-h100-fsdp.json", "dgx-h100", 20));
  out.push_back(from_file("MPT A100 FSDP", "validation-s3/mpt-a100-fsdp.json", "dgx-a100", 4));
  out.push_back(from_file("DLE A100 1 GPU", "single-gpu/resnet50-a100-dle.json", "dgx-a100", 2));
  out.push_back(from_file("DLE V100 1 GPU", "single-gpu/resnet50-v100-dle.json", "p3dn-24xlarge", 2));
  out.push_back(from_file("H200 1 GPU", "single-gpu/h200-measured.json",
                          kData + "../../profiles/calibrated/h200-1gpu.json", 12));
  out.push_back(from_file("DLE A100 TXL DDP", "validation-s3/txl-dgxa100.json",
                          kData + "validation-s3/dgx-a100-40gb.json", 20));
  out.push_back(from_file("DLE V100 TXL DDP", "validation-s3/txl-dgx2h.json",
                          kData + "validation-s3/dgx-2h.json", 20));
  return out;
}

// Whether a parameter found on `from` carries to `to`: the same physics on both.
bool carries(RunParameter p, const Cluster& from, const Cluster& to) {
  switch (p) {
    case RunParameter::compute_scale:
    case RunParameter::forward_scale:
    case RunParameter::backward_scale: return from.flops_compute && to.flops_compute;
    case RunParameter::inter_host:
    case RunParameter::inter_host_per_byte: return from.host_transport && to.host_transport;
    default: return true;
  }
}

// A parameter's departure from its prior, in the scale the fit moves it in.
double departure(const FittedParameter& f) {
  return fitted_in_log(f.parameter) ? std::log(f.value / f.prior) : f.value - f.prior;
}

std::string describe(RunParameter p, double d) {
  if (fitted_in_log(p)) return fmt::format("{} x{:.3g}", name_of(p), std::exp(d));
  switch (p) {
    case RunParameter::launch_overhead:
    case RunParameter::tensor_overhead: return fmt::format("{} {:+.3g} us", name_of(p), d * 1e6);
    case RunParameter::host_per_byte:
    case RunParameter::inter_host_per_byte: return fmt::format("{} {:+.3g} ns/B", name_of(p), d * 1e9);
    default: return fmt::format("{} {:+.3g}", name_of(p), d);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

struct Table {
  std::string text;
  std::vector<double> as_given;  // |error| of every run, the datasheet profile as given
  std::vector<double> held_out;  // and with the other clusters' constants
  int inside = 0;                // measurements inside the datasheet prediction's P10-P90
  int far_outside = 0;           // outside it and missed by more than 10 %
  std::map<RunParameter, ClusterSpread> spread;  // of each banded parameter's departure, over every cluster
};

double mean_of(const std::vector<double>& v) {
  double mean = 0.0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  return mean;
}

// The sample standard deviation.
double sd_of(const std::vector<double>& v) {
  const double mean = mean_of(v);
  double sum_sq = 0.0;
  for (double x : v) sum_sq += (x - mean) * (x - mean);
  return std::sqrt(sum_sq / static_cast<double>(v.size() - 1));
}

// The departures' mean and spread, as the datasheet band takes them (none from fewer than
// two: one value gives no spread, and the band is not moved on its word alone).
// Fewer than two: no spread to estimate, the fit's prior width stands (ClusterSpread).
ClusterSpread spread_of(const std::vector<double>& d, double prior_sd_ln) {
  if (d.size() < 2) return {0.0, 0.0, static_cast<int>(d.size()), prior_sd_ln};
  return {mean_of(d), sd_of(d), static_cast<int>(d.size()), prior_sd_ln};
}

// The prior width of a banded parameter, as the product's datasheet spreads carry it
// (fit_runs.hpp).
double prior_sd_ln(RunParameter p) {
  return (p == RunParameter::compute_scale ? kDatasheetCompute : kDatasheetInterEfficiency).prior_sd_ln;
}

// The parameters whose spread across clusters the datasheet band carries (fit_runs.hpp,
// datasheet_uncertainty): the compute scale and the inter-node efficiency.
constexpr RunParameter kBanded[] = {RunParameter::compute_scale, RunParameter::inter_efficiency};

// The departures of `p` over the clusters' fits that identify it, leaving `held` out (none:
// all), each only where it carries to `to`.
std::vector<double> departures_of(RunParameter p, const std::vector<Cluster>& all, const std::vector<RunsFit>& fits,
                                  std::size_t held, const Cluster& to) {
  std::vector<double> out;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (k == held || !carries(p, all[k], to)) continue;
    for (const FittedParameter& f : fits[k].parameters) {
      if (f.identified && f.parameter == p) out.push_back(departure(f));
    }
  }
  return out;
}

const Table& table() {
  static const Table t = [] {
    const std::vector<Cluster> all = clusters();
    std::vector<RunsFit> fits;
    Table out;
    out.text += "each cluster's own fit (identified departures from the datasheet priors):\n";
    for (const Cluster& c : all) {
      RunsFitOptions options;
      options.leave_one_out = false;
      fits.push_back(fit_runs(c.base, c.runs, options));
      std::string pinned;
      for (const FittedParameter& f : fits.back().parameters) {
        if (f.identified) pinned += (pinned.empty() ? "" : ", ") + describe(f.parameter, departure(f));
      }
      out.text += fmt::format("  {:<16} {:2} runs  median |error| {:5.1f} %  {}\n", c.name, c.runs.size(),
                              100.0 * fits.back().median_abs_error, pinned.empty() ? "(none)" : pinned);
      // What the profiles found or could not look at (fit_runs.cpp, "Beyond the local interval").
      for (const FitNote& n : fits.back().notes) {
        if (n.kind == FitNote::Kind::wider_than_local || n.kind == FitNote::Kind::profile_not_scanned) {
          out.text += "    " + fit_note_text(n) + "\n";
        }
      }
    }
    // How far a datasheet value is off from one cluster to the next: the sample standard
    // deviation of a banded parameter's departure over the clusters that identify it (the
    // compute scale over those whose compute comes from FLOPs).
    Cluster flops;  // a stand-in that every departure carries to but host-transport ones
    for (const RunParameter p : kBanded) {
      const std::vector<double> d = departures_of(p, all, fits, all.size(), flops);
      if (d.size() < 2) continue;
      const ClusterSpread c = out.spread[p] = spread_of(d, prior_sd_ln(p));
      out.text += fmt::format(
          "  {} over {} clusters: mean of its ln {:.2f} (x{:.2f}), sd {:.2f}; the next cluster's {:.2f} (a factor of "
          "{:.2f})\n",
          name_of(p), d.size(), c.mean_ln, std::exp(c.mean_ln), c.sd_ln, c.predictive_sd(), std::exp(c.predictive_sd()));
    }
    out.text += "\neach cluster predicted with the constants of the others (median departure over the clusters\n"
                "that identified it), against its datasheet profile as given; |error| median / max (%):\n";
    out.text += fmt::format("  {:<16} {:>4}  {:>15}  {:>15}\n", "held out", "runs", "as given", "others' constants");
    std::string constants = "\nthe constants applied (median departure, over how many clusters):\n";
    std::string bands =
        "\nthe datasheet prediction's P10-P90 band, each datasheet value where the other clusters put the next one's\n"
        "(mean +/- predictive sd of its ln, over how many clusters):\n";
    for (std::size_t h = 0; h < all.size(); ++h) {
      const Cluster& held = all[h];
      std::map<RunParameter, std::vector<double>> found;
      for (std::size_t k = 0; k < all.size(); ++k) {
        if (k == h) continue;
        for (const FittedParameter& f : fits[k].parameters) {
          if (f.identified && carries(f.parameter, all[k], held)) found[f.parameter].push_back(departure(f));
        }
      }
      RunsModel model{held.base.cluster, 1.0, 1.0};
      const RunsModel as_given = model;
      std::string applied;
      for (const auto& [p, departures] : found) {
        const double d = median(departures);
        const double prior = run_parameter(p, model);
        double value = fitted_in_log(p) ? prior * std::exp(d) : std::max(0.0, prior + d);
        if (p == RunParameter::inter_efficiency || p == RunParameter::intra_efficiency) value = std::min(value, 1.0);
        set_run_parameter(p, value, model);
        applied += fmt::format("{}{} ({})", applied.empty() ? "" : ", ", describe(p, d), departures.size());
      }
      // The datasheet prediction's band: each banded parameter where the other clusters'
      // fits put the next cluster's (compute: FLOPs compute only; ClusterSpread), independently,
      // and the model's 2 % floor, as datasheet_uncertainty() builds it.
      ClusterProfile::RunsFit uncertain = datasheet_uncertainty(held.flops_compute);
      std::string spreads;
      for (std::size_t j = 0; j < uncertain.parameters.size(); ++j) {
        const RunParameter p = *parse_name<RunParameter>(uncertain.parameters[j].name);
        const ClusterSpread c = spread_of(departures_of(p, all, fits, h, held), prior_sd_ln(p));
        uncertain.parameters[j].mean_u = c.mean_ln;
        uncertain.covariance[j * uncertain.parameters.size() + j] = c.predictive_sd() * c.predictive_sd();
        spreads += fmt::format("{}{} {:+.2f} +/- {:.2f} ({})", spreads.empty() ? "" : ", ", name_of(p), c.mean_ln,
                               c.predictive_sd(), c.clusters);
      }
      const BandModels band_models(uncertain, as_given);
      std::vector<double> given_errors, held_errors;
      int inside = 0;
      for (const MeasuredRun& run : held.runs) {
        const double measured = run.measured.iteration_s;
        const double given = predict_run(held.base, as_given, run).iteration_s;
        const double predicted = predict_run(held.base, model, run).iteration_s;
        REQUIRE(std::isfinite(given));
        REQUIRE(std::isfinite(predicted));
        given_errors.push_back(std::abs(given / measured - 1.0));
        held_errors.push_back(std::abs(predicted / measured - 1.0));
        std::vector<double> times;
        for (const RunsModel& m : band_models.models()) times.push_back(predict_run(held.base, m, run).iteration_s);
        const Band band = band_models.band(given, times);
        const bool in = measured >= band.p10_s && measured <= band.p90_s;
        inside += in ? 1 : 0;
        out.far_outside += !in && given_errors.back() > 0.10 ? 1 : 0;
      }
      out.inside += inside;
      bands += fmt::format("  {:<16} {:2} of {:2} inside ({})\n", held.name, inside, held.runs.size(), spreads);
      out.as_given.insert(out.as_given.end(), given_errors.begin(), given_errors.end());
      out.held_out.insert(out.held_out.end(), held_errors.begin(), held_errors.end());
      out.text += fmt::format("  {:<16} {:>4}  {:6.1f} / {:6.1f}  {:6.1f} / {:6.1f}\n", held.name, held.runs.size(),
                              100.0 * median(given_errors), 100.0 * max_of(given_errors), 100.0 * median(held_errors),
                              100.0 * max_of(held_errors));
      constants += fmt::format("  {:<16} {}\n", held.name, applied.empty() ? "(none)" : applied);
    }
    out.text += fmt::format("  {:<16} {:>4}  {:6.1f} / {:6.1f}  {:6.1f} / {:6.1f}\n", "all", out.held_out.size(),
                            100.0 * median(out.as_given), 100.0 * max_of(out.as_given), 100.0 * median(out.held_out),
                            100.0 * max_of(out.held_out));
    out.text += constants;
    out.text += bands;
    out.text += fmt::format("  {:<16} {} of {} inside ({:.0f} %); outside and missed by more than 10 %: {}\n", "all",
                            out.inside, out.held_out.size(), 100.0 * out.inside / static_cast<double>(out.held_out.size()),
                            out.far_outside);
    return out;
  }();
  return t;
}

}  // namespace

// The datasheet band's departures (fit_runs.hpp, kDatasheetCompute and
// kDatasheetInterEfficiency) are these clusters' mean and spread, to the two digits they
// are given with: a change to the model or the data that moves them shows here.
TEST_CASE("the datasheet band's departures are the ones the clusters' fits show", "[.][validation][loco]") {
  const ClusterProfile::RunsFit u = datasheet_uncertainty();
  REQUIRE(u.parameters.size() == std::size(kBanded));
  const ClusterSpread given[] = {kDatasheetCompute, kDatasheetInterEfficiency};
  for (std::size_t j = 0; j < u.parameters.size(); ++j) {
    const RunParameter p = kBanded[j];
    const ClusterSpread& found = table().spread.at(p);
    INFO(name_of(p) << ": over " << found.clusters << " clusters, mean of its ln " << found.mean_ln << ", sd "
                    << found.sd_ln);
    CHECK(u.parameters[j].name == name_of(p));
    CHECK(given[j].clusters == found.clusters);
    CHECK(std::abs(given[j].mean_ln - found.mean_ln) < 0.005);
    CHECK(std::abs(given[j].sd_ln - found.sd_ln) < 0.005);
    CHECK(u.parameters[j].mean_u == given[j].mean_ln);
    CHECK(std::sqrt(u.covariance[j * u.parameters.size() + j]) == given[j].predictive_sd());
  }
}

// Not a known failure: missing data fails here, never passes silently.
TEST_CASE("every measured training run is in the repository and read", "[validation][loco][data]") {
  std::size_t runs = 0;
  for (const Cluster& c : clusters()) runs += c.runs.size();
  CHECK(runs == 108);
}

TEST_CASE("leave one cluster out: constants chosen on the others within 5 % median, 10 % max",
          "[.][validation][loco][!mayfail]") {
  const Table& t = table();
  // Printed whole (a WARN would fold its lines at 80 columns).
  std::cout << "leave one cluster out, over every measured training run:\n" << t.text << std::flush;
  CHECK(median(t.held_out) <= 0.05);
  CHECK(max_of(t.held_out) <= 0.10);
  // No run outside its band by more than 10 %: the misses the band should have known of.
  CHECK(t.far_outside == 0);
}

// An 80 % band: its P10-P90 holds the measured time in 70-90 % of the runs when each
// cluster's band is built from the others alone.
TEST_CASE("leave one cluster out: the datasheet band holds 70-90 % of the runs", "[.][validation][loco]") {
  const Table& t = table();
  const double inside = t.inside / static_cast<double>(t.held_out.size());
  INFO(t.inside << " of " << t.held_out.size() << " runs inside their band");
  CHECK(inside >= 0.70);
  CHECK(inside <= 0.90);
}
