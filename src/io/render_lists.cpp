// The reports of collective (as nccl-tests prints it, or beside a measured log),
// topologies, and the built-in models and profiles.
#include <cstdint>

#include <fmt/format.h>

#include "dtperf/io/columns.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/units.hpp"
#include "dtperf/zoo.hpp"
#include "render_parts.hpp"

namespace dtperf::io {

namespace {

// nccl-tests' per-rank element count for a size (float elements).
std::int64_t count_of(Collective c, double bytes, int ranks) {
  const bool per_rank = c == Collective::all_gather || c == Collective::reduce_scatter || c == Collective::alltoall;
  return static_cast<std::int64_t>(bytes / 4.0 / (per_rank ? ranks : 1));
}

// nccl-tests prints times with 2 decimals, fewer as they grow (common.cu).
std::string time_text(double us) {
  if (us >= 1e6) return fmt::format("{:7.0f}", us);
  if (us >= 1e4) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

// The prediction in nccl-tests' own layout, so that it diffs against a user's log.
std::string nccl_tests_table(const CollectiveReport& r) {
  const Collective c = r.collective;
  const bool reduces = c == Collective::all_reduce || c == Collective::reduce_scatter;
  std::string text =
      "#\n"
      "#                                                              out-of-place                       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
  double busbw_sum = 0.0;
  for (const CollectivePoint& p : r.points) {
    const double algbw = p.bytes / (p.predicted_s * 1e9);
    const double busbw = algbw * r.bus_factor;
    busbw_sum += busbw;
    const std::string group = fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", time_text(p.predicted_s * 1e6), algbw, busbw, "0");
    text += fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}{}{}\n", static_cast<std::int64_t>(p.bytes),
                        count_of(c, p.bytes, r.ranks), "float", reduces ? "sum" : "none",
                        c == Collective::broadcast ? 0 : -1, group, group);
  }
  text += "# Out of bounds values : 0 OK\n";
  text += fmt::format("# Avg bus bandwidth    : {:g} \n", r.points.empty() ? 0.0 : busbw_sum / r.points.size());
  return text;
}

struct PointRow {
  const CollectivePoint& p;
  double bus_factor;
};
using Pt = PointRow;

const Columns<Pt>& point_columns() {
  static const Columns<Pt> columns = {
      {"size", "B", "bytes", [](const Pt& r) { return Cell(r.p.bytes); }, {},
       [](const Pt& r) { return fmt::format("{}", static_cast<std::int64_t>(r.p.bytes)); }},
      {"measured", "us", "measured_time_us",
       [](const Pt& r) { return r.p.measured_s ? Cell(*r.p.measured_s * 1e6) : Cell(); }},
      {"predicted", "us", "predicted_time_us", [](const Pt& r) { return Cell(r.p.predicted_s * 1e6); }},
      {"", "", "predicted_busbw_GB_per_s",
       [](const Pt& r) { return Cell(r.p.bytes / (r.p.predicted_s * 1e9) * r.bus_factor); }},
      {"error", "%", "error", [](const Pt& r) { return r.p.measured_s ? Cell(r.p.predicted_s / *r.p.measured_s - 1.0) : Cell(); },
       {}, [](const Pt& r) { return fmt::format("{:+.1f}", 100.0 * (r.p.predicted_s / *r.p.measured_s - 1.0)); }},
  };
  return columns;
}

}  // namespace

Rendered render(const CollectiveReport& r) {
  const char* collective = name_of(r.collective);
  std::vector<PointRow> rows;
  for (const CollectivePoint& p : r.points) rows.push_back({p, r.bus_factor});
  Json points = Json::array();
  for (const PointRow& row : rows) {
    Json j = record(point_columns(), row);
    if (!row.p.measured_s) {  // a prediction alone: no measured columns
      j.erase("measured_time_us");
      j.erase("error");
    }
    points.push_back(j);
  }
  Json json = {{"schema", kReportSchema}, {"command", "collective"}, {"collective", collective}, {"profile", r.profile},
               {"ranks", r.ranks},        {"nodes", r.nodes},         {"rows", points}};
  const std::string where = fmt::format("{} on {} ranks ({} node{} x {}) of {}", collective, r.ranks, r.nodes,
                                        r.nodes == 1 ? "" : "s", r.gpus_per_node, r.profile);
  std::string text;
  if (r.log.empty()) {
    text = fmt::format("# dtperf collective: {}, predicted\n# collective: {}_perf\n# total_ranks: {}\n# nodes: {}\n", where,
                       collective, r.ranks, r.nodes);
    text += nccl_tests_table(r);
  } else {
    text = fmt::format("# dtperf collective: {}, measured in {} (the faster of out-of-place and in-place)\n", where, r.log);
    text += table(point_columns(), std::span<const PointRow>(rows));
    if (r.geomean_factor_error_large) {
      text += fmt::format("# sizes >= 1 MiB: error as a factor, max(predicted/measured, measured/predicted) - 1: geometric mean {:.1f} %, worst {:.1f} %\n",
                          100.0 * *r.geomean_factor_error_large, 100.0 * *r.max_factor_error_large);
      json["geometric_mean_factor_error_at_least_1MiB"] = *r.geomean_factor_error_large;
      json["max_factor_error_at_least_1MiB"] = *r.max_factor_error_large;
    }
    json["log"] = r.log;
  }
  return {text, json, "/rows"};
}

namespace {

// Every step of the period: its mixing rule and its rounds of disjoint groups of ranks
// (a directed step: the distance every rank sends over).
Json schedule_json(const Topology& t) {
  Json steps = Json::array();
  for (const Step& step : t.steps) {
    if (step.mixing == Mixing::push_average) {
      steps.push_back({{"mixing", "push_average"}, {"send_to", fmt::format("(i + {}) mod {}", step.shift, t.ranks)}});
      continue;
    }
    Json rounds = Json::array();
    for (const Round& round : step.rounds) {
      Json groups = Json::array();
      for (std::size_t g = 0; g < round.groups(); ++g) {
        const auto members = round.group(g);
        groups.push_back(std::vector<int>(members.begin(), members.end()));
      }
      rounds.push_back(groups);
    }
    steps.push_back({{"mixing", step.mixing == Mixing::group_average ? "group_average" : "neighbour_average"},
                     {"rounds", rounds}});
  }
  return steps;
}

using TR = TopologyRow;

// Four decimals, or three significant digits for gaps below 0.001 (a ring of 131,072 GPUs
// has 5.7e-10, which four decimals would show as 0).
std::string gap_text(double gap) { return gap > 0.0 && gap < 1e-3 ? fmt::format("{:.3g}", gap) : fixed(gap, 4); }
Cell if_available(const TR& r, Cell cell) { return r.unavailable ? Cell() : cell; }

const Columns<TR>& topology_columns() {
  static const Columns<TR> columns = {
      {"name", "", "name", [](const TR& r) { return Cell(std::string(r.info.name)); }, {}, {}, true},
      {"period", "steps", "", [](const TR& r) { return if_available(r, std::int64_t{r.period}); }},
      {"spectral-gap", "", "", [](const TR& r) { return if_available(r, r.mixing.spectral_gap); }, decimals(4),
       [](const TR& r) { return r.unavailable ? std::string("-") : gap_text(r.mixing.spectral_gap); }},
      {"exact/period", "", "", [](const TR& r) { return if_available(r, r.mixing.exact_average_per_period); }},
      {"needs", "", "constraint", [](const TR& r) { return Cell(std::string(r.info.constraint)); }, {}, {}, true},
      {"description", "", "description", [](const TR& r) { return Cell(std::string(r.info.description)); }, {}, {}, true},
  };
  return columns;
}

}  // namespace

Rendered render(const TopologiesReport& r) {
  Json list = Json::array();
  for (const TopologyRow& row : r.rows) {
    Json j = record(topology_columns(), row);
    j["available"] = !row.unavailable;
    if (row.unavailable) {
      j["reason"] = *row.unavailable;
    } else {
      j["period"] = row.period;
      j["mixing"] = mixing_json(row.mixing);
      if (row.schedule) j["schedule"] = schedule_json(*row.schedule);
    }
    list.push_back(j);
  }
  const std::string text = fmt::format("# gossip topologies on {} GPUs in nodes of {}\n", r.gpus, r.gpus_per_node) +
                           table(topology_columns(), std::span<const TopologyRow>(r.rows));
  return {text,
          {{"schema", kReportSchema},
           {"command", "topologies"},
           {"gpus", r.gpus},
           {"gpus_per_node", r.gpus_per_node},
           {"topologies", list}},
          "/topologies"};
}

namespace {

struct ModelRow {
  ModelSpec model;
  std::int64_t published_params = 0;
  double forward_flops = 0.0;
};
using M = ModelRow;

const Columns<M>& model_columns() {
  static const Columns<M> columns = {
      {"name", "", "name", [](const M& r) { return Cell(r.model.name); }, {}, {}, true},
      {"params", "M", "params", [](const M& r) { return Cell(static_cast<std::int64_t>(r.model.total_params())); },
       {}, [](const M& r) { return fixed(static_cast<double>(r.model.total_params()) / 1e6, 2); }},
      {"", "", "published_params", [](const M& r) { return Cell(r.published_params); }},
      {"tensors", "", "tensors", [](const M& r) { return Cell(static_cast<std::int64_t>(r.model.tensors.size())); }},
      {"fwd/sample", "GFLOP", "forward_flops_per_sample", [](const M& r) { return Cell(r.forward_flops); }, per(1e9, 2)},
      {"unit", "", "sample_unit", [](const M& r) { return Cell(r.model.sample_unit); }, {}, {}, true},
      {"batch", "", "default_batch_per_gpu", [](const M& r) { return Cell(r.model.default_batch_per_gpu); }, decimals(0)},
      {"optimizer", "", "optimizer", [](const M& r) { return Cell(std::string(name_of(r.model.default_optimizer))); },
       {}, {}, true},
      {"description", "", "description", [](const M& r) { return Cell(r.model.description); }, {}, {}, true},
      {"", "", "citation", [](const M& r) { return Cell(r.model.citation); }},
  };
  return columns;
}

using PR = ClusterProfile;
const Columns<PR>& profile_columns() {
  static const Columns<PR> columns = {
      {"name", "", "", [](const PR& p) { return Cell(p.name); }, {}, {}, true},
      {"nodes", "", "", [](const PR& p) { return Cell(std::int64_t{p.nodes}); }},
      {"GPUs/node", "", "", [](const PR& p) { return Cell(std::int64_t{p.gpus_per_node}); }},
      {"GPU", "", "", [](const PR& p) { return Cell(p.gpu.model); }, {}, {}, true},
      {"intra", "GB/s", "", [](const PR& p) { return Cell(p.intra.bandwidth_bytes_per_s); }, per(units::GB, 1)},
      {"NICs", "", "", [](const PR& p) { return Cell(std::int64_t{p.inter.nics_per_node}); }},
      {"NIC", "Gbit/s", "", [](const PR& p) { return Cell(p.inter.nic_gbps); }, decimals(0)},
      {"eff", "", "", [](const PR& p) { return Cell(p.inter.transport_efficiency); }, decimals(2)},
      {"provenance", "", "", [](const PR& p) { return Cell(p.provenance.source); }, {}, {}, true},
  };
  return columns;
}

}  // namespace

Rendered render_models() {
  std::vector<ModelRow> rows;
  for (const ZooEntry& entry : model_zoo()) {
    ModelRow row{entry.build(), static_cast<std::int64_t>(entry.published_params), 0.0};
    row.forward_flops = row.model.forward_flops_per_sample();
    rows.push_back(std::move(row));
  }
  const std::span<const ModelRow> view(rows);
  return {table(model_columns(), view) +
              "# and models by size: gpt:layers=L,d=D[,heads,ffn,seq,vocab,batch,attention,dropout,gelu] (GPT-2's "
              "architecture), llama:layers=L,d=D[,heads,kv_heads,ffn,seq,vocab,batch,attention,elementwise] (Llama's); "
              "docs/MANUAL.md lists the defaults\n",
          {{"schema", kReportSchema}, {"command", "models"}, {"models", records(model_columns(), view)}},
          "/models"};
}

Rendered render_profiles() {
  const std::span<const ClusterProfile> profiles = builtin_profiles();
  Json list = Json::array();
  for (const ClusterProfile& p : profiles) list.push_back(profile_to_json(p));
  return {table(profile_columns(), profiles), {{"schema", kReportSchema}, {"command", "profiles"}, {"profiles", list}},
          "/profiles"};
}

}  // namespace dtperf::io
