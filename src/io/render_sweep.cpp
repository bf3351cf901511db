// What comes before a sweep's rows: the table's header lines, or the JSON-lines header
// record (the rows themselves: sweep_rows.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "dtperf/io/render.hpp"
#include "dtperf/io/sweep_rows.hpp"

namespace dtperf::io {

namespace {

Json axes_json(const SweepAxes& a, const std::vector<std::string>& models) {
  Json json = Json::object();
  if (!models.empty()) json["model"] = models;
  if (!a.schemes.empty()) {
    Json names = Json::array();
    for (const Scheme& s : a.schemes) names.push_back(s.name());
    json["scheme"] = names;
  }
  if (!a.nodes.empty()) json["nodes"] = a.nodes;
  if (!a.gpus_per_node.empty()) json["gpus_per_node"] = a.gpus_per_node;
  if (!a.nic_gbps.empty()) json["nic_gbps"] = a.nic_gbps;
  if (!a.inter_latency_us.empty()) json["inter_latency_us"] = a.inter_latency_us;
  if (!a.batch_per_gpu.empty()) json["batch_per_gpu"] = a.batch_per_gpu;
  if (!a.compression_ratio.empty()) json["compression"] = a.compression_ratio;
  if (!a.compute_cv.empty()) json["compute_cv"] = a.compute_cv;
  return json;
}

}  // namespace

std::string sweep_header_text(const SweepReport& r) {
  std::string text = run_header(r.run) + fmt::format("# {} points\n", r.grid.size());
  // Where the P10 and P90 columns come from, for each source among the grid's models.
  std::vector<const ModelSpec*> models = r.grid.axes().models;
  if (models.empty()) models.push_back(r.grid.base().model);
  for (const BandSource source : {BandSource::fitted, BandSource::datasheet}) {
    if (std::none_of(models.begin(), models.end(), [&](const ModelSpec* m) { return r.grid.band_source(*m) == source; })) {
      continue;
    }
    RunContext run = r.run;
    run.band_source = source;
    text += "# P10-P90: the iteration's band from " + band_origin(run) + "\n";
  }
  return text;
}

Json sweep_header_json(const SweepReport& r) {
  Json header = run_json(r.run);
  header["schema"] = "dtperf.sweep/1";
  header["axes"] = axes_json(r.grid.axes(), r.model_names);
  header["points"] = r.grid.size();
  header["columns"] = sweep_column_names();
  if (!r.grid.axes().compute_cv.empty()) header["seed"] = r.grid.base().variability.seed;  // of the CV axis' draws
  return header;
}

}  // namespace dtperf::io
