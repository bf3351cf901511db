#include "dtperf/io/calibrated_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/units.hpp"
#include "dtperf/version.hpp"

namespace dtperf::io {

namespace {

// The generic base for a GPU that is neither built in nor measured: a mid-range data-centre
// GPU's order of magnitude, stated in the notes wherever it is used.
constexpr double kGenericFp32FlopsPerS = 10e12;
constexpr double kGenericHalfFlopsPerS = 100e12;
constexpr double kGenericMemoryBytesPerS = 1000e9;

const std::vector<std::string> kTableCollectives = {"all_reduce", "sendrecv", "all_gather", "reduce_scatter"};

std::string log_group(const NcclTestsLog& log) {
  if (log.nodes == 1) return log.collective == "sendrecv" ? "pair_intra" : "node";
  if (log.ranks == 2 || log.collective == "sendrecv") return "pair_inter";
  return log.ranks == log.nodes ? "one_per_node" : "world";
}

MeasuredSeries series_of_log(const std::string& file, const NcclTestsLog& log) {
  if (log.nodes < 1) {
    throw InputError(file, "", fmt::format("the log does not say how many nodes its {} ranks span", log.ranks))
        .needing("nodes");
  }
  MeasuredSeries s;
  s.file = file;
  s.collective = log.collective;
  s.group = log_group(log);
  s.ranks = log.collective == "sendrecv" ? 2 : log.ranks;
  s.nodes = log.collective == "sendrecv" ? std::min(2, log.nodes) : log.nodes;
  for (const auto& [bytes, seconds] : bytes_and_time_s(log, NcclTestsColumn::faster)) {
    s.points.push_back({bytes, seconds});
  }
  return s;
}

// GPU family ("H100", "A100", "3090") and memory ("80GB") tokens of a GPU name.
std::pair<std::string, std::string> gpu_key(const std::string& name) {
  std::string family, memory, token;
  const auto take = [&] {
    if (token.empty()) return;
    const bool has_digit = std::any_of(token.begin(), token.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (token.size() > 2 && token.ends_with("GB") && std::isdigit(static_cast<unsigned char>(token[0]))) {
      if (memory.empty()) memory = token;
    } else if (has_digit && family.empty()) {
      family = token;
    }
    token.clear();
  };
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      token += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else {
      take();
    }
  }
  take();
  return {family, memory};
}

const ClusterProfile* builtin_for_gpu(const std::string& gpu) {
  const auto [family, memory] = gpu_key(gpu);
  if (family.empty()) return nullptr;
  for (const auto& p : builtin_profiles()) {
    const auto [f, m] = gpu_key(p.gpu.model);
    if (f == family && (m.empty() || memory.empty() || m == memory)) return &p;
  }
  return nullptr;
}

std::string measured_gpu_name(const FitInputs& in) {
  for (const auto& [file, raw] : in.raws) {
    for (const auto& p : raw.world.placement) {
      if (!p.device_name.empty()) return p.device_name;
    }
  }
  for (const auto& [file, log] : in.logs) {
    if (!log.gpu.empty()) return log.gpu;
  }
  return "";
}

// The GPU block and compute settings when no base profile is given; true when they are a
// datasheet's (a built-in profile's), false when measured or generic.
bool default_gpu(const FitInputs& in, ClusterProfile& p, std::vector<std::string>& notes) {
  const std::string gpu = measured_gpu_name(in);
  if (const ClusterProfile* match = builtin_for_gpu(gpu)) {
    p.gpu = match->gpu;
    p.compute = match->compute;
    notes.push_back(fmt::format("GPU peaks and compute settings from the built-in profile '{}' ({} matches {}).",
                                match->name, gpu, match->gpu.model));
    return true;
  }
  std::map<DType, double> best;
  std::optional<double> copy;
  for (const auto& [file, raw] : in.raws) {
    for (const auto& g : raw.gemm) best[g.dtype] = std::max(best[g.dtype], g.flops / (g.time_us * units::us));
    std::vector<CopyPoint> points;
    for (const auto& c : raw.copy) points.push_back({2.0 * c.bytes, c.time_us * units::us});
    if (!copy) copy = copy_bandwidth_bytes_per_s(points);
  }
  if (best.empty() || !copy) {
    // A generic base, stated: the links need none of it, and compute anchored on a
    // measurement (--single-gpu-iteration-ms, a measured layer file, fit --runs) only
    // scales it; compute from FLOPs on it is a placeholder.
    const bool peaks = best.empty();
    if (peaks) best = {{DType::fp32, kGenericFp32FlopsPerS}, {DType::bf16, kGenericHalfFlopsPerS},
                       {DType::fp16, kGenericHalfFlopsPerS}};
    if (!copy) copy = kGenericMemoryBytesPerS;
    notes.push_back(fmt::format(
        "The GPU '{}' matches no built-in profile and {} not measured: a generic base stands in ({}), so compute "
        "from FLOPs is a placeholder: anchor compute on a measured iteration time or layer file, or fit with a base "
        "profile.",
        gpu.empty() ? "(not named)" : gpu, peaks ? "its GEMM and copy rates were" : "its copy rate was",
        peaks ? "fp32 10 TFLOP/s, fp16/bf16 100 TFLOP/s, 1,000 GB/s" : "1,000 GB/s"));
    p.gpu.model = (gpu.empty() ? std::string("unknown GPU") : gpu) + " (generic base)";
  } else {
    p.gpu.model = gpu.empty() ? "unknown GPU" : gpu;
  }
  p.gpu.peak_flops_per_s = best;
  p.gpu.memory_bytes_per_s = *copy;
  p.compute.dtype = best.contains(DType::bf16) ? DType::bf16 : best.begin()->first;
  p.compute.memory_efficiency = 1.0;
  if (!p.gpu.model.ends_with("(generic base)")) {
    notes.push_back("GPU peaks are the best measured GEMM rates and memory bandwidth the measured copy rate "
                    "(no datasheet values: a base profile would give them).");
  }
  return false;
}

void default_links(ClusterProfile& p, std::vector<std::string>& notes) {
  p.intra = {"not measured", 100.0 * units::GB, 2.0 * units::us, 1.0};
  p.inter = {"not measured", 1, 100.0, 5.0 * units::us, 1.0};
  notes.push_back("Links start from placeholders (intra 100 GB/s and 2 us; one 100 Gbit/s NIC, 5 us); measured "
                  "values replace them below.");
}

void set_shape(const FitInputs& in, const std::vector<MeasuredSeries>& series, bool has_base, ClusterProfile& p) {
  if (!in.raws.empty()) {
    p.nodes = in.raws.front().second.world.nodes;
    p.gpus_per_node = in.raws.front().second.world.ranks_per_node;
    return;
  }
  if (has_base) {
    // The base knows the node's GPUs (a log may use some of them); the logs, how many nodes were measured.
    int measured_nodes = 1;
    for (const auto& s : series) measured_nodes = std::max(measured_nodes, s.nodes);
    if (measured_nodes > 1) p.nodes = measured_nodes;
    return;
  }
  const MeasuredSeries* largest = nullptr;
  for (const auto& s : series) {
    if (largest == nullptr || s.ranks > largest->ranks) largest = &s;
  }
  p.nodes = largest->nodes;
  p.gpus_per_node = largest->ranks / largest->nodes;
}

void add_calibration(const std::vector<MeasuredSeries>& series, const std::vector<CollectiveFit>& fits,
                     ClusterProfile& p) {
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    p.calibration.fits.push_back(fits[i].fit);
    const bool table_kind =
        std::find(kTableCollectives.begin(), kTableCollectives.end(), s.collective) != kTableCollectives.end();
    if (!table_kind || s.concurrent_per_node != 1) continue;
    CollectiveTable table{s.collective, s.ranks, s.nodes, {}};
    for (const auto& r : fits[i].residuals) {
      if (!r.outlier) table.bytes_and_time_s.emplace_back(r.bytes, r.time_s);
    }
    p.calibration.tables.push_back(std::move(table));
  }
}

void add_compute(const FitInputs& in, bool datasheet_gpu, ClusterProfile& p, std::vector<std::string>& notes,
                 std::vector<std::string>& warnings) {
  std::vector<GemmPoint> gemm;
  std::vector<CopyPoint> copy;
  std::vector<double> cv;
  for (const auto& [file, raw] : in.raws) {
    for (const auto& g : raw.gemm) gemm.push_back({g.dtype, g.flops, g.time_us * units::us});
    for (const auto& c : raw.copy) copy.push_back({2.0 * c.bytes, c.time_us * units::us});
    for (const auto& s : raw.iteration_spread) {
      // Without the stalls where the file gives it: the steady spread of compute that
      // variable compute draws from; a stall or two in a short sample moves a standard
      // deviation by far more (one H200's repeat: 0.177 against 0.022-0.026 in three
      // others).
      cv.push_back(s.robust_cv.value_or(s.cv));
      if (s.robust_cv && s.cv > 2.0 * *s.robust_cv && s.cv > 0.05) {
        notes.push_back(fmt::format(
            "{}: rank {}'s fixed workload varied by a CV of {:.3f} with its stalls, {:.3f} without them "
            "(interquartile range); the profile's iteration_cv takes the latter (--compute-cv sets another)",
            file, s.rank, s.cv, *s.robust_cv));
      }
    }
  }
  std::vector<FitNote> gemm_notes;
  p.calibration.gemm = gemm_efficiency_curves(gemm, p.gpu.peak_flops_per_s, true, gemm_notes);
  for (const FitNote& n : gemm_notes) notes.push_back(fit_note_text(n));
  if (datasheet_gpu) {
    for (const FitNote& n : gemm_warnings(p.calibration.gemm, p.gpu.peak_flops_per_s, p.compute.gemm_efficiency)) {
      warnings.push_back(fit_note_text(n));
    }
  }
  if (const auto bytes_per_s = copy_bandwidth_bytes_per_s(copy)) p.calibration.copy_bytes_per_s = *bytes_per_s;
  if (const auto measured = iteration_cv(cv)) p.compute.compute_cv = *measured;
}

/// The profile's contention factors from a GEMM beside an all-reduce and back (the raw
/// file's `contention`): compute x (GEMM beside / alone), communication x (all-reduce
/// beside / alone), never below 1 (a ratio under 1 is timing noise: no slowdown). Set only
/// from a collective across ranks whose timed spans were covered: on one rank NCCL copies
/// locally with a different kernel and no link, so that case is reported, not applied.
void add_contention(const FitInputs& in, ClusterProfile& p, std::vector<std::string>& notes) {
  for (const auto& [file, raw] : in.raws) {
    for (const auto& c : raw.contention) {
      const double compute = c.gemm_time_us_beside / c.gemm_time_us_alone;
      const double comm = c.collective_time_us_beside / c.collective_time_us_alone;
      const std::string measured = fmt::format(
          "{}: a {} GEMM {}x{}x{} ran x{:.3f} beside an all-reduce of {} MiB on {} rank{}, the all-reduce x{:.3f} "
          "beside GEMMs",
          file, name_of(c.dtype), c.m, c.n, c.k, compute, c.bytes / units::MiB, c.ranks, c.ranks == 1 ? "" : "s",
          comm);
      if (!c.covered) {
        notes.push_back(measured + "; not applied: the other side ended before the timed one.");
      } else if (c.ranks < 2) {
        notes.push_back(measured + "; not applied: on one rank NCCL copies locally (no link, another kernel), so "
                                   "the profile's interference factors are kept.");
      } else {
        p.compute.interference_factor = std::max(1.0, compute);
        p.compute.comm_interference_factor = std::max(1.0, comm);
        notes.push_back(measured + fmt::format("; the profile's interference factors are now {:.3f} (compute) and "
                                               "{:.3f} (communication).",
                                               p.compute.interference_factor, p.compute.comm_interference_factor));
      }
    }
  }
}

/// NCCL on one rank (group `self`): no link in the path, so not fitted as one; its floor
/// per call and local copy rate are reported.
void add_one_rank_notes(const FitInputs& in, std::vector<std::string>& notes) {
  for (const auto& [file, raw] : in.raws) {
    for (const auto& c : raw.collectives) {
      if (c.group != "self" || c.points.empty()) continue;
      const auto fastest = std::min_element(c.points.begin(), c.points.end(), [](const auto& a, const auto& b) {
        return a.time_us < b.time_us;
      });
      const auto& largest = c.points.back();
      notes.push_back(fmt::format(
          "{}: NCCL {} on one rank (no link, not fitted): {:.2f} us per call at best ({:g} B), {:.0f} GB/s at {:g} "
          "MiB (a local copy).",
          file, c.collective, fastest->time_us, fastest->bytes, largest.algbw_GB_per_s, largest.bytes / units::MiB));
    }
  }
}

/// Link levels whose measurements the hardware cannot explain from below (the far-below
/// guardrails): a run that fell back to sockets, P2P disabled, fewer NICs in use than
/// stated. Such a run measures a fault, not the cluster, so by default it is not fitted.
struct DegradedLevels {
  bool intra = false;
  bool inter = false;
};

DegradedLevels degraded_levels(const std::vector<FitNote>& warnings) {
  DegradedLevels d;
  for (const FitNote& w : warnings) {
    d.intra = d.intra || w.kind == FitNote::Kind::intra_far_below;
    d.inter = d.inter || w.kind == FitNote::Kind::nic_far_below;
  }
  return d;
}

/// Drops the tables and fits of a degraded level from the profile (a table replaces the
/// formula at its shape, so keeping it would carry the fault into predictions) and says
/// so; the link values stay those without them (not applied above).
void exclude_degraded(const DegradedLevels& degraded, ClusterProfile& p, std::vector<std::string>& warnings) {
  if (!degraded.intra && !degraded.inter) return;
  const auto excluded = [&](int ranks, int nodes) {
    return (degraded.inter && nodes > 1) || (degraded.intra && nodes <= 1 && ranks > 1);
  };
  auto& tables = p.calibration.tables;
  const std::size_t before = tables.size();
  tables.erase(std::remove_if(tables.begin(), tables.end(),
                              [&](const CollectiveTable& t) { return excluded(t.ranks, t.nodes); }),
               tables.end());
  auto& fits = p.calibration.fits;
  fits.erase(std::remove_if(fits.begin(), fits.end(), [&](const AlphaBetaFit& f) { return excluded(f.ranks, f.nodes); }),
             fits.end());
  const std::string level = degraded.intra && degraded.inter ? "inside and across nodes"
                            : degraded.intra                 ? "inside a node"
                                                             : "across nodes";
  warnings.push_back(fmt::format(
      "Not fitted: the measurements {} ({} table{}), far below the hardware as said above; the profile keeps the "
      "link values it has without them (the base profile's, or the command line's). Fix the run and measure again, "
      "or give --keep-degraded to fit it as measured.",
      level, before - tables.size(), before - tables.size() == 1 ? "" : "s"));
}

std::string join_sentences(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += (out.empty() ? "" : " ") + n;
  return out;
}

}  // namespace

std::vector<MeasuredSeries> collect_series(const FitInputs& in) {
  std::vector<MeasuredSeries> out;
  for (const auto& [file, raw] : in.raws) {
    for (const auto& c : raw.collectives) {
      if (c.group == "self") continue;  // no link to fit (add_one_rank_notes)
      MeasuredSeries s{file, c.pointer, c.collective, c.group, c.ranks, c.nodes, c.concurrent_per_node, {}};
      // The median per call where calls were timed one by one: robust to a busy host. Not
      // for communicators measured side by side: they start the loop together but not each
      // call, and when one of them gets more than its share of a link (TCP is not fair
      // over short spans) it finishes early and the others then run alone, so every
      // rank's median call is faster than the shared rate. What they measure together is
      // the time until the last one is done: the slowest rank's mean.
      const bool shared = c.concurrent_per_node > 1;
      for (const auto& p : c.points) {
        const double time_us = shared ? p.time_us : p.time_us_median.value_or(p.time_us);
        s.points.push_back({p.bytes, time_us * units::us});
      }
      out.push_back(std::move(s));
    }
  }
  for (const auto& [file, log] : in.logs) out.push_back(series_of_log(file, log));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& s = out[i];
    if (s.points.size() < 2) {
      throw InputError(s.file, s.where, fmt::format("at least 2 sizes are needed to fit {}, got {}", s.collective, s.points.size()));
    }
    for (std::size_t j = 0; j < i; ++j) {
      const auto& t = out[j];
      if (t.collective == s.collective && t.ranks == s.ranks && t.nodes == s.nodes &&
          t.concurrent_per_node == s.concurrent_per_node) {
        throw InputError(s.file, s.where,
                         fmt::format("{} on {} ranks over {} node(s) is measured twice (also in {}{})", s.collective,
                                     s.ranks, s.nodes, t.file, t.where.empty() ? "" : " at " + t.where));
      }
    }
  }
  return out;
}

FitOutcome build_calibrated_profile(const FitInputs& in, const FitSettings& settings) {
  FitOutcome out;
  out.series = collect_series(in);
  ClusterProfile& p = out.profile;
  bool datasheet_gpu = true;
  if (settings.base) {
    p = *settings.base;
    p.calibration = {};
  } else {
    datasheet_gpu = default_gpu(in, p, out.notes);
    default_links(p, out.notes);
  }
  set_shape(in, out.series, settings.base.has_value(), p);
  p.name = !settings.name.empty() ? settings.name : settings.base ? settings.base->name + "-calibrated" : "calibrated";
  p.description = fmt::format("{} nodes x {} GPUs ({}), calibrated with dtperf fit{}", p.nodes, p.gpus_per_node,
                              p.gpu.model, settings.base ? " over the profile " + settings.base->name : "");
  std::vector<GroupFit> groups;
  for (const auto& s : out.series) {
    out.fits.push_back(fit_collective(s.collective, s.ranks, s.nodes, s.points));
    groups.push_back({s.group, s.concurrent_per_node, out.fits.back().fit});
  }
  add_calibration(out.series, out.fits, p);
  KnownLinks known;
  if (settings.base) {
    known.intra_link_bytes_per_s = settings.base->intra.bandwidth_bytes_per_s;
    known.nics_per_node = settings.base->inter.nics_per_node;
    known.nic_gbps = settings.base->inter.nic_gbps;
  }
  if (settings.nics_per_node) known.nics_per_node = settings.nics_per_node;
  if (settings.nic_gbps) known.nic_gbps = settings.nic_gbps;
  LinkContext context;
  context.gpus_per_node = p.gpus_per_node;
  context.nics_per_node = known.nics_per_node;
  context.known_intra_latency_s = p.intra.latency_s;  // the base's, or the placeholder
  out.links = derive_link_measurements(groups, context);
  const std::vector<FitNote> warnings =
      link_warnings(out.links, known, known.nics_per_node.value_or(p.inter.nics_per_node));
  // The host backend measures CPU ranks over TCP on purpose: far below a GPU cluster's
  // links is what it measures, not a fault, so its files are always fitted.
  const bool host_transport = std::any_of(in.raws.begin(), in.raws.end(),
                                          [](const auto& file_raw) { return file_raw.second.backend == "host"; });
  const DegradedLevels degraded =
      settings.keep_degraded || host_transport ? DegradedLevels{} : degraded_levels(warnings);
  LinkMeasurements applied = out.links;
  if (degraded.inter) {
    applied.node_nic_bytes_per_s.reset();
    applied.inter_latency_s.reset();
  }
  if (degraded.intra) {
    applied.intra_bytes_per_s.reset();
    applied.intra_latency_s.reset();
  }
  std::vector<FitNote> link_notes = out.links.notes;
  apply_link_measurements(p, applied, known, link_notes);
  for (const FitNote& n : link_notes) out.notes.push_back(fit_note_text(n));
  for (const FitNote& n : warnings) out.warnings.push_back(fit_note_text(n));
  exclude_degraded(degraded, p, out.warnings);
  if (!settings.base && applied.intra_bytes_per_s) p.intra.link = "calibrated (dtperf fit)";
  if (!settings.base && applied.node_nic_bytes_per_s) p.inter.link = "calibrated (dtperf fit)";
  if (!applied.node_nic_bytes_per_s && (settings.nic_gbps || settings.nics_per_node)) {
    p.inter.nic_gbps = settings.nic_gbps.value_or(p.inter.nic_gbps);
    p.inter.nics_per_node = settings.nics_per_node.value_or(p.inter.nics_per_node);
  }
  add_compute(in, datasheet_gpu, p, out.notes, out.warnings);
  add_contention(in, p, out.notes);
  add_one_rank_notes(in, out.notes);
  for (const auto& [file, raw] : in.raws) {
    if (raw.truncated) out.notes.push_back(fmt::format("{}: the calibration budget cut the plan short.", file));
  }
  p.provenance = {};
  p.provenance.source = "calibrated";
  p.provenance.created = settings.created;
  p.provenance.tool = std::string("dtperf fit ") + kVersion;
  for (const auto& [file, raw] : in.raws) p.provenance.references.push_back(file);
  for (const auto& [file, log] : in.logs) p.provenance.references.push_back(file);
  std::vector<std::string> all_notes = out.notes;
  for (const auto& w : out.warnings) all_notes.push_back("Warning: " + w);
  p.provenance.notes = join_sentences(all_notes);
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    p.provenance.residuals.push_back(residual_line(out.series[i], out.fits[i]));
  }
  return out;
}

std::string format_bytes(double bytes) {
  const char* units_names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = bytes;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, units_names[unit]);
  return fmt::format("{:.3g} {}", value, units_names[unit]);
}

std::string residual_line(const MeasuredSeries& s, const CollectiveFit& fit) {
  std::string line = fmt::format("{} {} ranks/{} node{}{}: rms {:.1f} %", s.collective, s.ranks, s.nodes,
                                 s.nodes == 1 ? "" : "s",
                                 s.concurrent_per_node > 1 ? fmt::format(" x {} per node", s.concurrent_per_node) : "",
                                 100.0 * fit.fit.rms_relative_error);
  if (!fit.worst.empty()) {
    line += fmt::format(", worst {:.1f} % at {}", 100.0 * std::abs(fit.worst.front().relative_error),
                        format_bytes(fit.worst.front().bytes));
  }
  std::vector<std::string> outliers;
  for (const auto& r : fit.residuals) {
    if (r.outlier) outliers.push_back(fmt::format("{} ({:.1f}x the fit)", format_bytes(r.bytes), r.time_s / r.predicted_s));
  }
  if (!outliers.empty()) line += fmt::format("; outliers left out: {}", join_names(outliers));
  return line;
}

}  // namespace dtperf::io
