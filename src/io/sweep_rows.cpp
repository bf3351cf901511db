#include "dtperf/io/sweep_rows.hpp"

#include "dtperf/io/csv.hpp"
#include "dtperf/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>

namespace dtperf::io {

namespace {

// A cell: text, or a number (absent where the row has none).
struct Cell {
  bool text = false;
  std::string string;
  std::optional<double> number;
};

// In the table: always, when the grid varies this axis, with variable compute, with a
// fitted profile's bands, or never.
enum class InTable { always, axis, quantile, band, never };

struct Column {
  const char* key;    // JSON key and CSV field: the table name with its unit, snake_case
  const char* name;   // table header
  const char* unit;   // table unit ("" for none)
  int decimals;       // table; -1: integer; JSON and CSV print 7 significant digits
  InTable in_table;
  Cell (*get)(const SweepRow&);
};

Cell text(std::string s) { return {true, std::move(s), std::nullopt}; }
Cell number(double x) { return {false, {}, x}; }
Cell result(const SweepRow& r, double x) { return r.available ? number(x) : Cell{}; }
Cell quantile(const SweepRow& r, double x) { return r.available && r.has_quantiles ? number(x) : Cell{}; }
Cell banded(const SweepRow& r, double x) { return r.available && r.band ? number(x) : Cell{}; }

// The one list of columns.
const Column kColumns[] = {
    {"index", "index", "", -1, InTable::never, [](const SweepRow& r) { return number(static_cast<double>(r.point.index)); }},
    {"model", "model", "", 0, InTable::axis, [](const SweepRow& r) { return text(r.point.model->name); }},
    {"scheme", "scheme", "", 0, InTable::axis, [](const SweepRow& r) { return text(r.point.scheme->name()); }},
    {"nodes", "nodes", "", -1, InTable::axis, [](const SweepRow& r) { return number(r.point.nodes); }},
    {"gpus_per_node", "GPUs/node", "", -1, InTable::axis, [](const SweepRow& r) { return number(r.point.gpus_per_node); }},
    {"gpus", "GPUs", "", -1, InTable::axis,
     [](const SweepRow& r) { return number(static_cast<double>(r.point.nodes) * r.point.gpus_per_node); }},
    {"nic_gbps", "NIC-rate", "Gbit/s", 1, InTable::axis, [](const SweepRow& r) { return number(r.point.nic_gbps); }},
    {"inter_latency_us", "latency", "us", 1, InTable::axis, [](const SweepRow& r) { return number(r.point.inter_latency_us); }},
    {"batch_per_gpu", "batch", "/GPU", 1, InTable::axis, [](const SweepRow& r) { return number(r.point.batch_per_gpu); }},
    {"compression", "compress", "x", 1, InTable::axis, [](const SweepRow& r) { return number(r.point.compression_ratio); }},
    {"compute_cv", "CV", "", 3, InTable::axis, [](const SweepRow& r) { return number(r.point.compute_cv); }},
    {"iteration_ms", "iteration", "ms", 2, InTable::always, [](const SweepRow& r) { return result(r, r.iteration.iteration_s * 1e3); }},
    {"forward_ms", "forward", "ms", 2, InTable::never, [](const SweepRow& r) { return result(r, r.iteration.forward_s * 1e3); }},
    {"backward_ms", "backward", "ms", 2, InTable::never, [](const SweepRow& r) { return result(r, r.iteration.backward_s * 1e3); }},
    {"exposed_comm_ms", "exposed", "ms", 2, InTable::always,
     [](const SweepRow& r) { return result(r, r.iteration.exposed_comm_s * 1e3); }},
    {"optimizer_ms", "optimizer", "ms", 2, InTable::never, [](const SweepRow& r) { return result(r, r.iteration.optimizer_s * 1e3); }},
    {"scaling_factor", "scaling", "%", 1, InTable::always, [](const SweepRow& r) { return result(r, r.iteration.scaling_factor); }},
    {"nic_utilization", "NIC-util", "%", 1, InTable::always, [](const SweepRow& r) { return result(r, r.iteration.nic_utilization); }},
    {"throughput_samples_per_s", "throughput", "samples/s", 0, InTable::never,
     [](const SweepRow& r) { return result(r, r.iteration.throughput_samples_per_s); }},
    {"inter_mb_per_gpu", "inter", "MB/GPU", 2, InTable::never,
     [](const SweepRow& r) { return result(r, r.iteration.inter_bytes_per_gpu * 1e-6); }},
    {"memory_gib_per_gpu", "mem/GPU", "GiB", 1, InTable::always,
     [](const SweepRow& r) { return result(r, r.memory_bytes / units::GiB); }},
    {"iteration_p50_ms", "p50", "ms", 2, InTable::quantile, [](const SweepRow& r) { return quantile(r, r.iteration_p50_s * 1e3); }},
    {"iteration_p99_ms", "p99", "ms", 2, InTable::quantile, [](const SweepRow& r) { return quantile(r, r.iteration_p99_s * 1e3); }},
    {"band_p10_ms", "P10", "ms", 2, InTable::band,
     [](const SweepRow& r) { return banded(r, r.band ? r.band->p10_s * 1e3 : 0.0); }},
    {"band_p90_ms", "P90", "ms", 2, InTable::band,
     [](const SweepRow& r) { return banded(r, r.band ? r.band->p90_s * 1e3 : 0.0); }},
    {"unavailable_reason", "unavailable", "", 0, InTable::always,
     [](const SweepRow& r) { return r.available ? Cell{} : text(r.unavailable_reason); }},
};

// Table: fixed widths (the rows stream, so they cannot be measured first).
int table_width(const Column& c) {
  if (std::string_view(c.key) == "model") return 18;
  if (std::string_view(c.key) == "scheme") return 20;
  if (std::string_view(c.key) == "unavailable_reason") return 0;  // last: unpadded
  return std::max<int>(10, static_cast<int>(std::max(std::string_view(c.name).size(), std::string_view(c.unit).size() + 2)));
}

bool percent_column(const Column& c) { return std::string_view(c.unit) == "%"; }

void append_json_text(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

void append_number(std::string& out, double x, const Column& c) {
  if (c.decimals < 0) {
    fmt::format_to(std::back_inserter(out), "{:.0f}", x);
  } else {
    fmt::format_to(std::back_inserter(out), "{:.7g}", x);
  }
}

bool left_aligned(const Column& c) { return c.key == std::string_view("model") || c.key == std::string_view("scheme"); }

// Whether the grid varies the axis a column shows.
bool varied(const Column& c, const SweepGrid& grid) {
  const SweepAxes& a = grid.axes();
  const std::string_view key = c.key;
  if (key == "model") return !a.models.empty();
  if (key == "scheme") return !a.schemes.empty();
  if (key == "nodes") return !a.nodes.empty();
  if (key == "gpus_per_node") return !a.gpus_per_node.empty();
  if (key == "gpus") return !a.nodes.empty() || !a.gpus_per_node.empty();
  if (key == "nic_gbps") return !a.nic_gbps.empty();
  if (key == "inter_latency_us") return !a.inter_latency_us.empty();
  if (key == "batch_per_gpu") return !a.batch_per_gpu.empty();
  if (key == "compression") return !a.compression_ratio.empty();
  if (key == "compute_cv") return !a.compute_cv.empty();
  return false;
}

}  // namespace

SweepWriter::SweepWriter(RowFormat format, const SweepGrid& grid) : format_(format) {
  const bool quantiles = !grid.axes().compute_cv.empty() || grid.base().variability.any();
  for (int i = 0; i < static_cast<int>(std::size(kColumns)); ++i) {
    const Column& c = kColumns[i];
    const bool shown = format != RowFormat::table || c.in_table == InTable::always ||
                       (c.in_table == InTable::axis && varied(c, grid)) ||
                       (c.in_table == InTable::quantile && quantiles) || (c.in_table == InTable::band && grid.banded());
    if (shown) columns_.push_back(i);
  }
}

std::vector<std::string> sweep_column_names() {
  std::vector<std::string> names;
  for (const Column& c : kColumns) names.emplace_back(c.key);
  return names;
}

std::string json_quoted(const std::string& text) {
  std::string out;
  append_json_text(out, text);
  return out;
}

std::string SweepWriter::header() const {
  std::string out;
  switch (format_) {
    case RowFormat::jsonl:
      return out;
    case RowFormat::csv:
      for (const int i : columns_) {
        if (!out.empty()) out.push_back(',');
        out += kColumns[i].key;
      }
      out.push_back('\n');
      return out;
    case RowFormat::table: {
      std::string units = "#";
      out = "#";
      for (const int i : columns_) {
        const Column& c = kColumns[i];
        const int w = table_width(c);
        const std::string unit = *c.unit ? fmt::format("({})", c.unit) : "";
        if (w == 0) {
          out += fmt::format(" {}", c.name);
        } else if (left_aligned(c)) {
          out += fmt::format(" {:<{}}", c.name, w);
          units += fmt::format(" {:<{}}", unit, w);
        } else {
          out += fmt::format(" {:>{}}", c.name, w);
          units += fmt::format(" {:>{}}", unit, w);
        }
      }
      while (units.back() == ' ') units.pop_back();
      out += "\n" + units + "\n";
      return out;
    }
  }
  return out;
}

void SweepWriter::append(std::string& out, const SweepRow& row) const {
  const auto back = std::back_inserter(out);
  bool first = true;
  switch (format_) {
    case RowFormat::jsonl:
      out.push_back('{');
      for (const int i : columns_) {
        const Column& c = kColumns[i];
        if (!first) out.push_back(',');
        first = false;
        fmt::format_to(back, "\"{}\":", c.key);
        const Cell cell = c.get(row);
        if (cell.text) {
          append_json_text(out, cell.string);
        } else if (cell.number) {
          append_number(out, *cell.number, c);
        } else {
          out += "null";
        }
      }
      out += "}\n";
      return;
    case RowFormat::csv:
      for (const int i : columns_) {
        const Column& c = kColumns[i];
        if (!first) out.push_back(',');
        first = false;
        const Cell cell = c.get(row);
        if (cell.text) {
          append_csv_field(out, cell.string);
        } else if (cell.number) {
          append_number(out, *cell.number, c);
        }
      }
      out.push_back('\n');
      return;
    case RowFormat::table:
      out.push_back(' ');
      for (const int i : columns_) {
        const Column& c = kColumns[i];
        const int w = table_width(c);
        const Cell cell = c.get(row);
        if (w == 0) {
          if (cell.text) fmt::format_to(back, " {}", cell.string);
        } else if (cell.text) {
          fmt::format_to(back, " {:<{}}", cell.string, w);
        } else if (!cell.number) {
          fmt::format_to(back, " {:>{}}", "-", w);
        } else {
          const double x = percent_column(c) ? *cell.number * 100.0 : *cell.number;
          fmt::format_to(back, " {:>{}.{}f}", x, w, std::max(0, c.decimals));
        }
      }
      // No trailing blanks when the last column is empty.
      while (out.back() == ' ') out.pop_back();
      out.push_back('\n');
      return;
  }
}

}  // namespace dtperf::io
