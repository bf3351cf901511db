// One scheme's outcome: the iteration's time breakdown, traffic and rates, memory per
// GPU, the steps of a gossip period, variable compute's quantiles and a local-SGD round.
#include <algorithm>

#include <fmt/format.h>

#include "dtperf/io/columns.hpp"
#include "dtperf/io/render.hpp"
#include "render_parts.hpp"
#include "dtperf/units.hpp"

namespace dtperf::io {

namespace {

using R = IterationResult;
Cell ms(double s) { return s / units::ms; }

// The iteration, in two tables (time, then traffic and rates) and one JSON object. The
// throughput's unit names the model's samples, so the rates table takes it as an argument.
Columns<R> time_columns(bool accumulates) {
  Columns<R> c = {{"iteration", "ms", "iteration_ms", [](const R& r) { return ms(r.iteration_s); }}};
  if (accumulates) c.push_back({"accumulation", "ms", "accumulation_ms", [](const R& r) { return ms(r.accumulation_s); }});
  c.insert(c.end(), {
      {"forward", "ms", "forward_ms", [](const R& r) { return ms(r.forward_s); }},
      {"backward", "ms", "backward_ms", [](const R& r) { return ms(r.backward_s); }},
      {"exposed-comm", "ms", "exposed_comm_ms", [](const R& r) { return ms(r.exposed_comm_s); }},
      {"optimizer", "ms", "optimizer_ms", [](const R& r) { return ms(r.optimizer_s); }},
      {"overhead", "ms", "overhead_ms", [](const R& r) { return ms(r.overhead_s); }},
      {"comm-busy", "ms", "comm_busy_ms", [](const R& r) { return ms(r.comm_busy_s); }},
      {"NIC-busy", "ms", "nic_busy_ms", [](const R& r) { return ms(r.nic_busy_s); }},
  });
  if (!accumulates) c.push_back({"", "", "accumulation_ms", [](const R& r) { return ms(r.accumulation_s); }});
  return c;
}

Columns<R> rate_columns(const std::string& sample_unit) {
  return {
      {"intra/GPU", "MB", "intra_bytes_per_gpu", [](const R& r) { return Cell(r.intra_bytes_per_gpu); }, per(units::MB, 1)},
      {"", "", "inter_bytes_per_gpu", [](const R& r) { return Cell(r.inter_bytes_per_gpu); }},
      {"inter/node", "MB", "inter_bytes_per_node", [](const R& r) { return Cell(r.inter_bytes_per_node); }, per(units::MB, 1)},
      {"NIC-util", "%", "nic_utilization", [](const R& r) { return Cell(r.nic_utilization); }, as_percent()},
      {"throughput", sample_unit + "s/s", "throughput_samples_per_s",
       [](const R& r) { return Cell(r.throughput_samples_per_s); }, decimals(0)},
      {"scaling", "%", "scaling_factor", [](const R& r) { return Cell(r.scaling_factor); }, as_percent()},
      {"1-GPU-iter", "ms", "single_gpu_iteration_ms", [](const R& r) { return ms(r.single_gpu_iteration_s); }},
      {"buckets", "", "buckets", [](const R& r) { return Cell(static_cast<std::int64_t>(r.buckets)); }},
  };
}

double gib(double bytes) { return bytes / units::GiB; }

}  // namespace

Json iteration_json(const IterationResult& r) {
  Json json = record(time_columns(false), r);
  json.update(record(rate_columns(""), r));
  return json;
}

std::string iteration_tables(const IterationResult& r, const std::string& sample_unit) {
  return table(time_columns(r.accumulation_s > 0.0), r) + "\n" + table(rate_columns(sample_unit), r);
}

Json memory_json(const MemoryBreakdown& m) {
  return {{"weights_GiB", gib(m.weights_bytes)},
          {"gradients_GiB", gib(m.gradients_bytes)},
          {"optimizer_GiB", gib(m.optimizer_bytes)},
          {"activations_GiB", gib(m.activations_bytes)},
          {"activations_known", m.activations_known},
          {"comm_buffers_GiB", gib(m.comm_buffers_bytes)},
          {"reserve_GiB", gib(m.reserve_bytes)},
          {"total_GiB", gib(m.total_bytes())},
          {"fits", m.fits()},
          {"gpu_memory_GiB", m.capacity_bytes > 0.0 ? Json(gib(m.capacity_bytes)) : Json(nullptr)}};
}

std::string memory_line(const MemoryBreakdown& m) {
  const std::string of = m.capacity_bytes > 0.0 ? fmt::format(" of {:g}", gib(m.capacity_bytes)) : "";
  std::string line = fmt::format(
      "# memory per GPU: {:.1f}{} GiB (weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, activations {}, "
      "communication buffers {:.2f}, runtime reserve {:.2f})",
      gib(m.total_bytes()), of, gib(m.weights_bytes), gib(m.gradients_bytes), gib(m.optimizer_bytes),
      m.activations_known ? fmt::format("{:.2f}", gib(m.activations_bytes)) : std::string("unknown"),
      gib(m.comm_buffers_bytes), gib(m.reserve_bytes));
  if (m.capacity_bytes <= 0.0) line += "; the profile gives no GPU memory to check against";
  if (!m.fits()) line += ": DOES NOT FIT";
  return line + "\n";
}

Json mixing_json(const MixingQuality& m) {
  return {{"spectral_gap", m.spectral_gap},
          {"spectral_gap_converged", m.converged},
          {"exact_average_per_period", m.exact_average_per_period},
          {"peers_per_period", m.degree}};
}

namespace {

struct VariabilityRow {
  const VariabilityOutcome& v;
  std::span<const double> idle_per_rank_s;
};
using V = VariabilityRow;

const Columns<V>& variability_columns() {
  static const Columns<V> columns = {
      {"mean", "ms", "", [](const V& r) { return ms(r.v.iteration.iteration_s); }},
      {"p50", "ms", "iteration_p50_ms", [](const V& r) { return ms(r.v.iteration_p50_s); }},
      {"p99", "ms", "iteration_p99_ms", [](const V& r) { return ms(r.v.iteration_p99_s); }},
      {"idle-mean", "ms", "idle_mean_ms", [](const V& r) { return ms(r.v.idle_mean_s); }},
      {"idle-min", "ms", "idle_min_ms", [](const V& r) { return ms(r.v.idle_min_s); }},
      {"idle-max", "ms", "idle_max_ms", [](const V& r) { return ms(r.v.idle_max_s); }},
      {"straggler", "rank", "straggler_rank", [](const V& r) { return Cell(std::int64_t{r.v.straggler_rank}); }},
      {"iterations", "", "iterations", [](const V& r) { return Cell(std::int64_t{r.v.iterations}); }},
  };
  return columns;
}

}  // namespace

Json variability_json(const VariabilityOutcome& v, std::span<const double> idle_per_rank_s) {
  Json json = record(variability_columns(), V{v, idle_per_rank_s});
  Json idle = Json::array();
  for (const double s : idle_per_rank_s) idle.push_back(s / units::ms);
  json["idle_per_rank_ms"] = idle;
  return json;
}

std::string variability_table(const VariabilityOutcome& v) { return table(variability_columns(), V{v, {}}); }

namespace {

struct StepRow {
  std::size_t step;
  const StepTraffic& traffic;
  std::optional<double> iteration_s;
};
using S = StepRow;

Columns<S> step_columns(bool timed) {
  Columns<S> c = {
      {"step", "", "step", [](const S& r) { return Cell(static_cast<std::int64_t>(r.step)); }},
      {"intra/GPU", "MB", "intra_bytes_per_gpu", [](const S& r) { return Cell(r.traffic.intra_bytes_per_gpu); }, per(units::MB, 1)},
      {"inter/node", "MB", "inter_bytes_per_node", [](const S& r) { return Cell(r.traffic.inter_bytes_per_node); }, per(units::MB, 1)},
  };
  if (timed) c.push_back({"iteration", "ms", "iteration_ms", [](const S& r) { return ms(*r.iteration_s); }});
  return c;
}

std::vector<StepRow> step_rows(const SchemeOutcome& o) {
  std::vector<StepRow> rows;
  for (std::size_t k = 0; k < o.steps.size(); ++k) {
    rows.push_back({k, o.steps[k],
                    k < o.step_iteration_s.size() ? std::optional<double>(o.step_iteration_s[k]) : std::nullopt});
  }
  return rows;
}

}  // namespace

Json steps_json(const SchemeOutcome& o) {
  const Columns<S> timed = step_columns(true);
  const Columns<S> untimed = step_columns(false);
  Json out = Json::array();
  for (const StepRow& row : step_rows(o)) out.push_back(record(row.iteration_s ? timed : untimed, row));
  return out;
}

std::string steps_table(const SchemeOutcome& o) {
  const bool timed = o.step_iteration_s.size() == o.steps.size();
  const std::vector<StepRow> rows = step_rows(o);
  std::string out = table(step_columns(timed), std::span<const StepRow>(rows));
  if (timed) {
    out += fmt::format("# iteration time over the period: p50 {:.2f} ms, p90 {:.2f} ms, mean {:.2f} ms\n",
                       o.step_p50_s / units::ms, o.step_p90_s / units::ms, o.iteration.iteration_s / units::ms);
  }
  return out;
}

Json local_sgd_json(const LocalSgdRound& r, const LocalSgdOptions& o) {
  return {{"inner_steps", o.inner_steps},
          {"groups", r.groups},
          {"gpus_per_group", r.gpus_per_group},
          {"outer", o.outer_gossip ? "gossip" : "all-reduce"},
          {"sync", name_of(o.sync)},
          {"fragments", r.fragments},
          {"overlap_steps", r.overlap_steps},
          {"codec", name_of(o.codec)},
          {"top_k_fraction", o.codec == OuterCodec::top_k ? Json(o.top_k_fraction) : Json(nullptr)},
          {"inner_step_ms", r.inner_step_s / units::ms},
          {"round_ms", r.round_s / units::ms},
          {"compute_utilization", r.compute_utilization},
          {"per_sync",
           {{"prep_ms", r.prep_s / units::ms},
            {"comm_ms", r.comm_s / units::ms},
            {"overlap_window_ms", r.window_s / units::ms},
            {"wait_ms", r.wait_s / units::ms},
            {"compute_slowdown_ms", r.slow_s / units::ms},
            {"fold_ms", r.fold_s / units::ms},
            {"outer_step_ms", r.step_s / units::ms},
            {"wire_MB_per_gpu", r.wire_bytes_per_gpu / units::MB}}}};
}

std::string local_sgd_table(const LocalSgdRound& r, const LocalSgdOptions& o) {
  std::string out = fmt::format(
      "# round: {} inner steps of {:.2f} ms in {} groups of {} GPUs, then {} {} synchronisation{} by {} ({}{}); "
      "round {:.2f} ms, compute utilisation {}\n",
      o.inner_steps, r.inner_step_s / units::ms, r.groups, r.gpus_per_group,
      r.fragments > 1 ? std::to_string(r.fragments) : "one", name_of(o.sync), r.fragments > 1 ? "s" : "",
      o.outer_gossip ? "gossip between groups" : "all-reduce", name_of(o.codec),
      o.codec == OuterCodec::top_k ? fmt::format(" {:g} %", 100 * o.top_k_fraction) : std::string(),
      r.round_s / units::ms, percent(r.compute_utilization) + " %");
  Table t({{"per synchronisation", "", true}, {"time", "ms"}});
  const auto row = [&](const std::string& what, double s) { t.add_row({what, fixed(s / units::ms, 3)}); };
  row("outer gradient and encoding", r.prep_s);
  row(fmt::format("communication ({:.1f} MB per GPU across groups)", r.wire_bytes_per_gpu / units::MB), r.comm_s);
  row(fmt::format("  hidden behind {} inner step{}", r.overlap_steps, r.overlap_steps == 1 ? "" : "s"),
      std::min(r.comm_s, r.window_s));
  row("  waited for", r.wait_s);
  row("compute slowed beside it", r.slow_s);
  row("decoding into the average", r.fold_s);
  row("outer optimizer step", r.step_s);
  return out + t.render();
}

}  // namespace dtperf::io
