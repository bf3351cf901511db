#include "dtperf/io/profile_json.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/embedded.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

namespace {

const std::vector<std::string> kDtypes = names_of<DType>();
const std::vector<std::string> kSources = {"datasheet", "calibrated", "manual"};

std::vector<std::pair<double, double>> read_points(const Json& points, const std::string& file,
                                                   const std::string& pointer, Range x_range,
                                                   Range y_range, double x_scale, double y_scale) {
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto [x, y] = number_pair(points[i], file, pointer_append(pointer, i), x_range, y_range);
    if (!out.empty() && x * x_scale <= out.back().first) {
      throw InputError(file, pointer_append(pointer, i),
                       "points must be sorted by strictly increasing size");
    }
    out.emplace_back(x * x_scale, y * y_scale);
  }
  if (out.empty()) throw InputError(file, pointer, "expected at least one point");
  return out;
}

// A fit's statistics as `fit` writes them. Relative errors: 0 to 10^3 (100,000 %); the
// residual's sigma in log space: up to 10 (a factor of e^10); a parameter's coordinate u
// (natural = unit x exp(u) for a log parameter, unit x u otherwise) within +-700 for a log
// one, so that exp(u) stays a finite double (e^709 is the largest), and +-10^15 for a
// linear one; its unit 10^-30 to 10^30 (seconds per byte to FLOP/s); covariances within
// +-10^30 (a standard deviation up to 10^15, as a coordinate).
constexpr Range kRelativeError{0.0, 1e3};
constexpr Range kLogSigma{0.0, 10.0, true};
constexpr Range kLogCoordinate{-700.0, 700.0};
constexpr Range kCoordinate{-1e15, 1e15};
constexpr Range kUnit{1e-30, 1e30};
constexpr Range kCovariance{-1e30, 1e30};
// A fitted segment's bus bandwidth, bus_factor / beta (fit.hpp), within what the fit itself
// can write: beta is held at >= 1e-15 s per byte (FitOptions::min_seconds_per_byte: a flat,
// latency-only segment) and bus_factor < 2, so at most 2e6 GB/s; at the other end a
// slope is at most the longest measured time over one byte (10^7 ms, limits::kTimeMs) and
// bus_factor >= 1/2 (two ranks), so at least 5e-14 GB/s. A latency-bound segment of small
// messages fits about 0.0002 GB/s.
constexpr Range kFittedBusGBps{1e-14, 2e6};

void read_gpu(ObjectReader r, ClusterProfile::Gpu& gpu) {
  gpu.model = r.string("model");
  ObjectReader peaks = r.object("peak_tflops");
  for (const auto& name : kDtypes) {
    if (const auto tflops = peaks.optional_number(name, limits::kTflops)) {
      gpu.peak_flops_per_s[*parse_name<DType>(name)] = *tflops * 1e12;
    }
  }
  peaks.finish();
  if (gpu.peak_flops_per_s.empty()) {
    r.fail("peak_tflops", "give the peak of at least one dtype (" + join_names(kDtypes) + ")");
  }
  gpu.memory_bytes_per_s = r.number("memory_bandwidth_GB_per_s", limits::kGBps) * units::GB;
  gpu.memory_gib = r.optional_number("memory_GiB", limits::kMemoryGiB).value_or(0.0);
  r.finish();
}

void read_intra(ObjectReader r, ClusterProfile::IntraNode& intra) {
  intra.link = r.optional_string("link").value_or("");
  intra.bandwidth_bytes_per_s = r.number("bandwidth_GB_per_s", limits::kGBps) * units::GB;
  intra.latency_s = r.number("latency_us", limits::kLatencyUs) * units::us;
  intra.efficiency = r.optional_number("efficiency", limits::kEfficiency).value_or(1.0);
  r.finish();
}

void read_inter(ObjectReader r, ClusterProfile::InterNode& inter) {
  inter.link = r.optional_string("link").value_or("");
  inter.nics_per_node = static_cast<int>(r.integer("nics_per_node", 1, limits::kMaxGpusPerNode));
  inter.nic_gbps = r.number("nic_gbps", limits::kNicGbps);
  inter.latency_s = r.number("latency_us", limits::kLatencyUs) * units::us;
  inter.transport_efficiency = r.number("transport_efficiency", limits::kEfficiency);
  inter.host_gbps = r.optional_number("host_gbps", limits::kNicGbps).value_or(0.0);
  inter.host_cpu_ns_per_byte = r.optional_number("host_cpu_ns_per_byte", limits::kNsPerByte).value_or(0.0);
  inter.host_exchange_share = r.optional_number("host_exchange_share", limits::kShare).value_or(1.0);
  inter.shared_nic_efficiency = r.optional_number("shared_nic_efficiency", limits::kEfficiency).value_or(1.0);
  r.finish();
}

void read_transport(ObjectReader r, ClusterProfile::Transport& t) {
  t.library = r.optional_string("library").value_or("");
  if (r.has("lockstep_ring")) t.lockstep_ring = r.boolean("lockstep_ring");
  if (r.has("collectives_in_flight")) t.collectives_in_flight = static_cast<int>(r.integer("collectives_in_flight", 1, 64));
  t.launch_s = r.optional_number("launch_us", limits::kLatencyUs).value_or(0.0) * units::us;
  t.tensor_s = r.optional_number("tensor_us", limits::kLatencyUs).value_or(0.0) * units::us;
  t.host_s_per_byte = r.optional_number("host_ns_per_byte", limits::kNsPerByte).value_or(0.0) * 1e-9;
  t.inter_host_s_per_byte = r.optional_number("inter_host_ns_per_byte", limits::kNsPerByte).value_or(0.0) * 1e-9;
  r.finish();
}

void read_compute(ObjectReader r, ClusterProfile::Compute& c) {
  if (r.has("dtype")) c.dtype = *parse_name<DType>(r.choice("dtype", kDtypes));
  c.gemm_efficiency = r.optional_number("gemm_efficiency", limits::kEfficiency).value_or(c.gemm_efficiency);
  c.half_efficiency_flops =
      r.optional_number("half_efficiency_gflop", limits::kWorkGflop).value_or(c.half_efficiency_flops / 1e9) * 1e9;
  c.memory_efficiency =
      r.optional_number("memory_efficiency", limits::kEfficiency).value_or(c.memory_efficiency);
  if (const auto e = r.optional_number("fused_attention_efficiency", limits::kEfficiency)) {
    c.fused_attention_efficiency = e;
  }
  // An optional time in microseconds, kept in seconds (the default when absent).
  const auto seconds_from_us = [&r](const char* key, double default_s) {
    return r.optional_number(key, limits::kLatencyUs).value_or(default_s / units::us) * units::us;
  };
  c.kernel_overhead_s = seconds_from_us("kernel_overhead_us", c.kernel_overhead_s);
  c.interference_factor =
      r.optional_number("interference_factor", limits::kInterference).value_or(c.interference_factor);
  c.comm_interference_factor =
      r.optional_number("comm_interference_factor", limits::kInterference).value_or(c.comm_interference_factor);
  c.iteration_overhead_s = seconds_from_us("iteration_overhead_us", c.iteration_overhead_s);
  c.cross_node_overhead_s = seconds_from_us("cross_node_overhead_us", c.cross_node_overhead_s);
  if (r.has("runs_on_host")) c.runs_on_host = r.boolean("runs_on_host");
  c.compute_cv = r.optional_number("iteration_cv", limits::kComputeCv);
  r.finish();
}

void read_runs_fit(ObjectReader r, ClusterProfile::RunsFit& f) {
  // "models" (a list); "model" (one name) in profiles fitted before runs could mix models.
  if (r.has("model") == r.has("models")) r.fail("models", "give the models the runs trained (models: [...])");
  if (r.has("model")) {
    f.models = {r.string("model")};
  } else {
    const Json& models = r.array("models");
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (!models[i].is_string() || models[i].get<std::string>().empty()) {
        throw InputError(r.file(), pointer_append(r.pointer_of("models"), i), "expected a model name");
      }
      f.models.push_back(models[i].get<std::string>());
    }
    if (f.models.empty()) r.fail("models", "at least one model");
  }
  f.forward_scale = r.number("forward_scale", limits::kScale);
  f.backward_scale = r.number("backward_scale", limits::kScale);
  f.runs = static_cast<int>(r.integer("runs", 1));
  f.rms_error = r.number("rms_error", kRelativeError);
  f.loo_median_abs_error = r.optional_number("loo_median_abs_error", kRelativeError);
  f.loo_max_abs_error = r.optional_number("loo_max_abs_error", kRelativeError);
  if (auto u = r.optional_object("uncertainty")) {
    f.model_sigma = u->number("model_sigma", kLogSigma);
    const Json& parameters = u->array("parameters");
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      ObjectReader p(parameters[i], r.file(), pointer_append(u->pointer_of("parameters"), i));
      ClusterProfile::RunsFit::Parameter x;
      x.name = p.string("name");
      x.log = p.boolean("log");
      x.unit = p.number("unit", kUnit);
      const Range& coordinate = x.log ? kLogCoordinate : kCoordinate;
      x.u = p.number("u", coordinate);
      x.low_u = p.number("low_u", coordinate);
      x.high_u = p.number("high_u", coordinate);
      if (!(x.low_u <= x.u && x.u <= x.high_u)) p.fail("u", "is outside [low_u, high_u]");
      // The bands move each parameter inside its box: a unit or a box other than the one
      // the fit searched would put a parameter where the fit never could (a negative
      // overhead, a latency of 10^30 s).
      const std::optional<RunParameter> known = parse_name<RunParameter>(x.name);
      if (!known) p.fail("name", fmt::format("'{}' is not a parameter fit --runs fits", x.name));
      const RunParameterBox box = search_box(*known);
      if (x.log != box.log) p.fail("log", fmt::format("{} is fitted {}", x.name, box.log ? "in log" : "linearly"));
      if (x.unit != box.unit) {
        p.fail("unit", fmt::format("{} is fitted in units of {:g}, got {:g}", x.name, box.unit, x.unit));
      }
      if (x.low_u < box.low_u) {
        p.fail("low_u", fmt::format("{} is searched from {:.17g}, got {:.17g}", x.name, box.low_u, x.low_u));
      }
      if (x.high_u > box.high_u) {
        p.fail("high_u", fmt::format("{} is searched up to {:.17g}, got {:.17g}", x.name, box.high_u, x.high_u));
      }
      p.finish();
      f.parameters.push_back(x);
    }
    const Json& rows = u->array("covariance");
    const std::size_t n = f.parameters.size();
    if (rows.size() != n) u->fail("covariance", fmt::format("has {} rows for {} parameters", rows.size(), n));
    for (std::size_t i = 0; i < n; ++i) {
      const std::string at = pointer_append(u->pointer_of("covariance"), i);
      if (!rows[i].is_array() || rows[i].size() != n) {
        throw InputError(r.file(), at, fmt::format("expected a row of {} numbers", n));
      }
      for (std::size_t k = 0; k < n; ++k) {
        const double x = check_number(rows[i][k], r.file(), pointer_append(at, k), kCovariance);
        if (i == k && x < 0.0) throw InputError(r.file(), pointer_append(at, k), "a variance must not be negative");
        f.covariance.push_back(x);
      }
    }
    u->finish();
  }
  r.finish();
}

void read_calibration(ObjectReader r, ClusterProfile::Calibration& cal) {
  if (const Json* tables = r.optional_array("collectives")) {
    for (std::size_t i = 0; i < tables->size(); ++i) {
      ObjectReader t((*tables)[i], r.file(), pointer_append(r.pointer_of("collectives"), i));
      CollectiveTable table;
      table.collective = t.choice("collective", {"all_reduce", "sendrecv", "all_gather", "reduce_scatter"});
      table.ranks = static_cast<int>(t.integer("ranks", 1, limits::kMaxGpus));
      table.nodes = static_cast<int>(t.integer("nodes", 1, limits::kMaxNodes));
      if (table.ranks % table.nodes != 0) {
        t.fail("ranks", fmt::format("{} ranks do not split evenly over {} nodes", table.ranks, table.nodes));
      }
      table.bytes_and_time_s = read_points(t.array("points_bytes_us"), r.file(),
                                           t.pointer_of("points_bytes_us"), limits::kBytes,
                                           limits::kTimeUs, 1.0, units::us);
      t.finish();
      cal.tables.push_back(std::move(table));
    }
  }
  if (const Json* fits = r.optional_array("fits")) {
    for (std::size_t i = 0; i < fits->size(); ++i) {
      ObjectReader f((*fits)[i], r.file(), pointer_append(r.pointer_of("fits"), i));
      AlphaBetaFit fit;
      fit.collective = f.string("collective");
      fit.level = f.choice("level", {"intra", "inter"});
      fit.ranks = static_cast<int>(f.integer("ranks", 1, limits::kMaxGpus));
      fit.nodes = static_cast<int>(f.integer("nodes", 1, limits::kMaxNodes));
      fit.rms_relative_error = f.number("rms_relative_error", kRelativeError);
      const Json& segments = f.array("segments");
      for (std::size_t k = 0; k < segments.size(); ++k) {
        ObjectReader s(segments[k], r.file(), pointer_append(f.pointer_of("segments"), k));
        AlphaBetaSegment seg;
        seg.min_bytes = s.number("min_bytes", limits::kBytesOrZero);
        seg.max_bytes = s.number("max_bytes", limits::kBytes);
        seg.alpha_s = s.number("alpha_us", limits::kLatencyUs) * units::us;
        seg.bus_bytes_per_s = s.number("busbw_GB_per_s", kFittedBusGBps) * units::GB;
        s.finish();
        fit.segments.push_back(seg);
      }
      f.finish();
      cal.fits.push_back(std::move(fit));
    }
  }
  if (const Json* gemm = r.optional_array("gemm")) {
    for (std::size_t i = 0; i < gemm->size(); ++i) {
      ObjectReader g((*gemm)[i], r.file(), pointer_append(r.pointer_of("gemm"), i));
      GemmEfficiencyCurve curve;
      curve.dtype = *parse_name<DType>(g.choice("dtype", kDtypes));
      curve.flops_and_efficiency =
          read_points(g.array("points_gflop_efficiency"), r.file(),
                      g.pointer_of("points_gflop_efficiency"), limits::kWorkGflop, limits::kEfficiency, 1e9, 1.0);
      g.finish();
      cal.gemm.push_back(std::move(curve));
    }
  }
  if (const auto copy = r.optional_number("copy_bandwidth_GB_per_s", limits::kGBps)) {
    cal.copy_bytes_per_s = *copy * units::GB;
  }
  r.finish();
}

void read_provenance(ObjectReader r, Provenance& p) {
  p.source = r.choice("source", kSources);
  p.created = r.optional_string("created").value_or("");
  p.tool = r.optional_string("tool").value_or("");
  if (r.has("references")) p.references = r.string_list("references");
  p.notes = r.optional_string("notes").value_or("");
  if (r.has("residuals")) p.residuals = r.string_list("residuals");
  r.finish();
}

Json points_json(const std::vector<std::pair<double, double>>& points, double x_scale, double y_scale) {
  Json out = Json::array();
  for (const auto& [x, y] : points) out.push_back(Json::array({x / x_scale, y / y_scale}));
  return out;
}

}  // namespace

ClusterProfile parse_profile(const Json& json, const std::string& file) {
  ObjectReader r(json, file, "");
  r.expect_schema(kProfileSchema);
  ClusterProfile p;
  p.name = r.string("name");
  if (p.name.empty()) r.fail("name", "the name must not be empty");
  p.description = r.optional_string("description").value_or("");
  p.nodes = static_cast<int>(r.integer("nodes", 1, limits::kMaxNodes));
  p.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, limits::kMaxGpusPerNode));
  read_gpu(r.object("gpu"), p.gpu);
  read_intra(r.object("intra_node"), p.intra);
  read_inter(r.object("inter_node"), p.inter);
  if (auto transport = r.optional_object("transport")) read_transport(*transport, p.transport);
  if (auto compute = r.optional_object("compute")) read_compute(*compute, p.compute);
  if (!p.gpu.peak_flops_per_s.contains(p.compute.dtype)) {
    throw InputError(file, "/compute/dtype",
                     fmt::format("the default dtype '{}' has no peak in /gpu/peak_tflops",
                                 name_of(p.compute.dtype)));
  }
  if (auto calibration = r.optional_object("calibration")) read_calibration(*calibration, p.calibration);
  if (auto runs_fit = r.optional_object("runs_fit")) {
    p.runs_fit = ClusterProfile::RunsFit{};
    read_runs_fit(*runs_fit, *p.runs_fit);
  }
  read_provenance(r.object("provenance"), p.provenance);
  r.finish();
  return p;
}

Json profile_to_json(const ClusterProfile& p) {
  Json peaks = Json::object();
  for (const auto& [dtype, flops] : p.gpu.peak_flops_per_s) peaks[name_of(dtype)] = flops / 1e12;
  Json j = {
      {"schema", kProfileSchema},
      {"name", p.name},
      {"description", p.description},
      {"nodes", p.nodes},
      {"gpus_per_node", p.gpus_per_node},
      {"gpu", {{"model", p.gpu.model},
               {"peak_tflops", peaks},
               {"memory_bandwidth_GB_per_s", p.gpu.memory_bytes_per_s / units::GB}}},
      {"intra_node", {{"link", p.intra.link},
                      {"bandwidth_GB_per_s", p.intra.bandwidth_bytes_per_s / units::GB},
                      {"latency_us", p.intra.latency_s / units::us},
                      {"efficiency", p.intra.efficiency}}},
      {"inter_node", {{"link", p.inter.link},
                      {"nics_per_node", p.inter.nics_per_node},
                      {"nic_gbps", p.inter.nic_gbps},
                      {"latency_us", p.inter.latency_s / units::us},
                      {"transport_efficiency", p.inter.transport_efficiency}}},
      {"compute", {{"dtype", name_of(p.compute.dtype)},
                   {"gemm_efficiency", p.compute.gemm_efficiency},
                   {"half_efficiency_gflop", p.compute.half_efficiency_flops / 1e9},
                   {"memory_efficiency", p.compute.memory_efficiency},
                   {"kernel_overhead_us", p.compute.kernel_overhead_s / units::us},
                   {"interference_factor", p.compute.interference_factor}}},
  };
  if (p.gpu.memory_gib > 0.0) j["gpu"]["memory_GiB"] = p.gpu.memory_gib;
  if (p.compute.fused_attention_efficiency) {
    j["compute"]["fused_attention_efficiency"] = *p.compute.fused_attention_efficiency;
  }
  if (p.inter.host_gbps > 0.0) j["inter_node"]["host_gbps"] = p.inter.host_gbps;
  if (p.inter.host_cpu_ns_per_byte > 0.0) j["inter_node"]["host_cpu_ns_per_byte"] = p.inter.host_cpu_ns_per_byte;
  if (p.inter.host_exchange_share != 1.0) j["inter_node"]["host_exchange_share"] = p.inter.host_exchange_share;
  if (p.inter.shared_nic_efficiency != 1.0) j["inter_node"]["shared_nic_efficiency"] = p.inter.shared_nic_efficiency;
  const auto& t = p.transport;
  if (!t.library.empty() || t.lockstep_ring || t.collectives_in_flight > 0 || t.launch_s > 0.0 || t.tensor_s > 0.0 || t.host_s_per_byte > 0.0 ||
      t.inter_host_s_per_byte > 0.0) {
    j["transport"] = {{"lockstep_ring", t.lockstep_ring}};
    if (!t.library.empty()) j["transport"]["library"] = t.library;
    if (t.collectives_in_flight > 0) j["transport"]["collectives_in_flight"] = t.collectives_in_flight;
    if (t.launch_s > 0.0) j["transport"]["launch_us"] = t.launch_s / units::us;
    if (t.tensor_s > 0.0) j["transport"]["tensor_us"] = t.tensor_s / units::us;
    if (t.host_s_per_byte > 0.0) j["transport"]["host_ns_per_byte"] = t.host_s_per_byte * 1e9;
    if (t.inter_host_s_per_byte > 0.0) j["transport"]["inter_host_ns_per_byte"] = t.inter_host_s_per_byte * 1e9;
  }
  if (p.compute.compute_cv) j["compute"]["iteration_cv"] = *p.compute.compute_cv;
  if (p.compute.comm_interference_factor != 1.0) {
    j["compute"]["comm_interference_factor"] = p.compute.comm_interference_factor;
  }
  if (p.compute.runs_on_host) j["compute"]["runs_on_host"] = true;
  if (p.compute.iteration_overhead_s > 0.0) {
    j["compute"]["iteration_overhead_us"] = p.compute.iteration_overhead_s / units::us;
  }
  if (p.compute.cross_node_overhead_s > 0.0) {
    j["compute"]["cross_node_overhead_us"] = p.compute.cross_node_overhead_s / units::us;
  }
  const auto& cal = p.calibration;
  if (!cal.tables.empty() || !cal.fits.empty() || !cal.gemm.empty() || cal.copy_bytes_per_s) {
    Json c = Json::object();
    if (!cal.tables.empty()) {
      c["collectives"] = Json::array();
      for (const auto& table : cal.tables) {
        c["collectives"].push_back({{"collective", table.collective},
                                    {"ranks", table.ranks},
                                    {"nodes", table.nodes},
                                    {"points_bytes_us", points_json(table.bytes_and_time_s, 1.0, units::us)}});
      }
    }
    if (!cal.fits.empty()) {
      c["fits"] = Json::array();
      for (const auto& f : cal.fits) {
        Json segments = Json::array();
        for (const auto& s : f.segments) {
          segments.push_back({{"min_bytes", s.min_bytes},
                              {"max_bytes", s.max_bytes},
                              {"alpha_us", s.alpha_s / units::us},
                              {"busbw_GB_per_s", s.bus_bytes_per_s / units::GB}});
        }
        c["fits"].push_back({{"collective", f.collective},
                             {"level", f.level},
                             {"ranks", f.ranks},
                             {"nodes", f.nodes},
                             {"rms_relative_error", f.rms_relative_error},
                             {"segments", segments}});
      }
    }
    if (!cal.gemm.empty()) {
      c["gemm"] = Json::array();
      for (const auto& g : cal.gemm) {
        c["gemm"].push_back({{"dtype", name_of(g.dtype)},
                             {"points_gflop_efficiency", points_json(g.flops_and_efficiency, 1e9, 1.0)}});
      }
    }
    if (cal.copy_bytes_per_s) c["copy_bandwidth_GB_per_s"] = *cal.copy_bytes_per_s / units::GB;
    j["calibration"] = c;
  }
  if (p.runs_fit) {
    const auto& f = *p.runs_fit;
    j["runs_fit"] = {{"models", f.models},
                     {"forward_scale", f.forward_scale},
                     {"backward_scale", f.backward_scale},
                     {"runs", f.runs},
                     {"rms_error", f.rms_error}};
    if (f.loo_median_abs_error) j["runs_fit"]["loo_median_abs_error"] = *f.loo_median_abs_error;
    if (f.loo_max_abs_error) j["runs_fit"]["loo_max_abs_error"] = *f.loo_max_abs_error;
    if (f.model_sigma > 0.0) {
      Json parameters = Json::array();
      for (const auto& x : f.parameters) {
        parameters.push_back({{"name", x.name}, {"log", x.log}, {"unit", x.unit}, {"u", x.u}, {"low_u", x.low_u},
                              {"high_u", x.high_u}});
      }
      Json rows = Json::array();
      const std::size_t n = f.parameters.size();
      for (std::size_t i = 0; i < n; ++i) {
        rows.push_back(std::vector<double>(f.covariance.begin() + static_cast<std::ptrdiff_t>(i * n),
                                           f.covariance.begin() + static_cast<std::ptrdiff_t>((i + 1) * n)));
      }
      j["runs_fit"]["uncertainty"] = {{"model_sigma", f.model_sigma}, {"parameters", parameters}, {"covariance", rows}};
    }
  }
  Json prov = {{"source", p.provenance.source}};
  if (!p.provenance.created.empty()) prov["created"] = p.provenance.created;
  if (!p.provenance.tool.empty()) prov["tool"] = p.provenance.tool;
  if (!p.provenance.references.empty()) prov["references"] = p.provenance.references;
  if (!p.provenance.notes.empty()) prov["notes"] = p.provenance.notes;
  if (!p.provenance.residuals.empty()) prov["residuals"] = p.provenance.residuals;
  j["provenance"] = prov;
  return j;
}

const std::vector<ClusterProfile>& builtin_profiles() {
  static const std::vector<ClusterProfile> profiles = [] {
    std::vector<ClusterProfile> out;
    for (const EmbeddedFile& file : builtin_profiles_raw()) {
      const std::string name = std::string("profiles/") + file.name;
      out.push_back(parse_profile(parse_json_text(file.contents, name), name));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return profiles;
}

ClusterProfile load_profile(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (is_path) return parse_profile(read_json_file(name_or_path), name_or_path);
  std::vector<std::string> names;
  for (const auto& p : builtin_profiles()) {
    if (p.name == name_or_path) return p;
    names.push_back(p.name);
  }
  throw InputError::in_input("profile", fmt::format("unknown profile '{}'{}; built-in profiles: {}", name_or_path,
                                                did_you_mean(name_or_path, names), join_names(names)));
}

}  // namespace dtperf::io
