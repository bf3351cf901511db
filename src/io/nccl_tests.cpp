// nccl-tests text logs: find the column header, read the rows under its prefix, collect
// what the surrounding lines state (collective, ranks, nodes, GPU); nccl_tests_checks.cpp
// checks the result.
#include "dtperf/io/nccl_tests.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/limits.hpp"
#include "nccl_tests_checks.hpp"

namespace dtperf::io {

namespace {

using detail::ReadResult;
using detail::ReadRow;
using detail::Stated;

struct Token {
  std::string text;
  std::size_t begin = 0;  // offset in the line
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t begin = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > begin) out.push_back({std::string(s.substr(begin, i - begin)), begin});
  }
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool is_unsigned(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<double> to_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

std::string line_ref(std::size_t line) { return fmt::format("line {}", line); }

// nccl-tests' type names (src/common.cu test_typenames), old and new.
const std::vector<std::string> kTypeNames = {"int8",   "uint8",  "int32",    "uint32", "int64",    "uint64", "half",
                                             "float",  "double", "bfloat16", "f8e4m3", "f8e5m2",   "char",   "int"};

bool is_type_name(const std::string& s) { return std::find(kTypeNames.begin(), kTypeNames.end(), s) != kTypeNames.end(); }

struct Layout {
  std::size_t line = 0;
  std::string prefix;        // what every data row starts with ("0:", "[1,0]<stdout>:", or "")
  std::size_t columns = 0;   // tokens per data row
  int redop = -1;
  struct Group {
    int time = -1, algbw = -1, busbw = -1, wrong = -1;
    bool error_column = false;  // old nccl-tests: max deviation instead of a count
  };
  std::vector<Group> groups;
};

// The column header ("size count type ..."), or nullopt if `tokens` is not one.
std::optional<Layout> header_layout(const std::vector<Token>& tokens, const std::string& line, std::size_t number) {
  std::size_t h = 0;
  while (h + 2 < tokens.size() &&
         !(tokens[h].text == "size" && tokens[h + 1].text == "count" && tokens[h + 2].text == "type")) {
    ++h;
  }
  if (h + 2 >= tokens.size()) return std::nullopt;
  Layout layout;
  layout.line = number;
  std::string prefix = trim(line.substr(0, tokens[h].begin));
  if (prefix.ends_with('#')) prefix.pop_back();
  layout.prefix = trim(prefix);
  bool timestamp = false;
  for (std::size_t i = h + 3; i < tokens.size(); ++i) {
    const std::string& name = tokens[i].text;
    const int column = static_cast<int>(i - h);
    if (name == "redop") layout.redop = column;
    if (name == "time" || name == "cputime") layout.groups.push_back({column, -1, -1, -1, false});
    if (name == "timestamp") timestamp = true;
    if (layout.groups.empty()) continue;
    auto& g = layout.groups.back();
    if (name == "algbw") g.algbw = column;
    if (name == "busbw") g.busbw = column;
    if (name == "#wrong" || name == "error") g = {g.time, g.algbw, g.busbw, column, name == "error"};
  }
  if (layout.groups.size() > 2) layout.groups.resize(2);
  if (layout.groups.empty()) return std::nullopt;
  for (const auto& g : layout.groups) {
    if (g.algbw < 0 || g.busbw < 0) return std::nullopt;
  }
  layout.columns = tokens.size() - h + (timestamp ? 1 : 0);
  return layout;
}

// A table posted without its column header: when a data row has the standard columns,
// the standard header stands in. 13 cells: size count type redop root, then time algbw
// busbw #wrong out-of-place and in-place (nccl-tests 2.x); 12: the older layout without
// root, whose fourth column of each group is "error" (a deviation, not a count). Any
// other count keeps the error: the columns cannot be told. The row checks (algbw = size /
// time, busbw / algbw = the collective's factor) then confirm the columns are what they
// are taken for. `type_at` is the position of the type cell in `tokens`.
std::optional<Layout> standard_layout(const std::vector<Token>& tokens, const std::string& line, std::size_t number,
                                      std::size_t type_at) {
  const std::size_t cells = tokens.size() - (type_at - 2);
  const bool with_root = cells == 13;
  if (cells != 13 && cells != 12) return std::nullopt;
  Layout layout;
  layout.line = number;
  layout.prefix = trim(line.substr(0, tokens[type_at - 2].begin));
  layout.columns = cells;
  layout.redop = 3;
  const int first = with_root ? 5 : 4;
  for (const int time : {first, first + 4}) layout.groups.push_back({time, time + 1, time + 2, time + 3, !with_root});
  return layout;
}

// Long tokens are cut in messages (a 401-digit size stays one short line).
std::string shown_token(const std::string& s) { return s.size() <= 24 ? s : s.substr(0, 20) + "..."; }

double number_at(const std::vector<Token>& t, int column, const char* what, const std::string& file, std::size_t line,
                 const limits::Range& range) {
  const std::string& s = t[static_cast<std::size_t>(column)].text;
  const auto x = to_number(s);
  if (!x || !std::isfinite(*x)) {
    throw InputError(file, line_ref(line), fmt::format("{} '{}' is not a finite number", what, shown_token(s)));
  }
  // Subnormal magnitudes (5e-324) overflow to infinity once divided into.
  if (*x != 0.0 && std::abs(*x) < limits::kMinMagnitude) {
    throw InputError(file, line_ref(line), fmt::format("{} '{}' is too small to be a measurement", what, shown_token(s)));
  }
  if (!range.contains(*x)) {
    throw InputError(file, line_ref(line),
                     fmt::format("{} '{}' is outside [{:g}, {:g}]", what, shown_token(s), range.low, range.high));
  }
  return *x;
}

// A whole number up to limits::kMaxBytes (sizes and element counts).
std::int64_t whole_at(const std::string& s, const char* what, const std::string& file, const std::string& where) {
  if (!is_unsigned(s)) throw InputError(file, where, fmt::format("{} '{}' is not a whole number", what, shown_token(s)));
  const std::string digits = s.substr(std::min(s.find_first_not_of('0'), s.size()));
  if (digits.size() > 16 || std::strtoll(s.c_str(), nullptr, 10) > limits::kMaxBytes) {
    throw InputError(file, where,
                     fmt::format("{} '{}' is over the limit of {} (1 PiB)", what, shown_token(s), limits::kMaxBytes));
  }
  return std::strtoll(s.c_str(), nullptr, 10);
}

ReadResult read_result(const std::vector<Token>& t, const Layout::Group& g, const std::string& file, std::size_t line) {
  ReadResult r;
  r.value.time_us = number_at(t, g.time, "time", file, line, detail::kTimeUs);
  r.value.algbw_GB_per_s = number_at(t, g.algbw, "algbw", file, line, detail::kRateGBps);
  r.value.busbw_GB_per_s = number_at(t, g.busbw, "busbw", file, line, detail::kRateGBps);
  r.time_half_us = detail::half_unit(t[static_cast<std::size_t>(g.time)].text);
  r.algbw_half = detail::half_unit(t[static_cast<std::size_t>(g.algbw)].text);
  r.busbw_half = detail::half_unit(t[static_cast<std::size_t>(g.busbw)].text);
  if (g.wrong >= 0 && !g.error_column) {
    const std::string& w = t[static_cast<std::size_t>(g.wrong)].text;
    if (is_unsigned(w)) {
      // Up to 2^53, as the JSON log's nwrong: strtoll would clamp a longer count to 2^63 - 1.
      errno = 0;
      const long long count = std::strtoll(w.c_str(), nullptr, 10);
      if (errno == ERANGE || count > (1LL << 53)) {
        throw InputError(file, line_ref(line),
                         fmt::format("#wrong '{}' is over the limit of 2^53 elements", w.size() > 24 ? w.substr(0, 20) + "..." : w));
      }
      r.value.wrong = count;
    } else if (w != "N/A") {
      throw InputError(file, line_ref(line), fmt::format("#wrong '{}' is not a count", w));
    }
  }
  return r;
}

ReadRow read_row(const std::vector<Token>& t, const Layout& layout, const std::string& file, std::size_t line) {
  if (t.size() != layout.columns) {
    throw InputError(file, line_ref(line),
                     fmt::format("the row has {} columns, the column header (line {}) has {}{}", t.size(), layout.line,
                                 layout.columns, t.size() < layout.columns ? ": the row is cut off" : ""));
  }
  ReadRow row;
  row.where = line_ref(line);
  row.line = static_cast<int>(line);
  row.bytes = static_cast<double>(whole_at(t[0].text, "size", file, row.where));
  row.count = whole_at(t[1].text, "count", file, row.where);
  row.type = t[2].text;
  if (!is_type_name(row.type)) {
    throw InputError(file, row.where,
                     fmt::format("unknown type '{}'{}; nccl-tests types: {}", row.type, did_you_mean(row.type, kTypeNames),
                                 join_names(kTypeNames)));
  }
  if (layout.redop >= 0) row.redop = t[static_cast<std::size_t>(layout.redop)].text;
  row.out_of_place = read_result(t, layout.groups[0], file, line);
  if (layout.groups.size() > 1) row.in_place = read_result(t, layout.groups[1], file, line);
  return row;
}

// Position of the type column if `tokens` look like a data row (two whole numbers and
// a type name), whatever comes before them.
std::optional<std::size_t> type_position(const std::vector<Token>& tokens) {
  for (std::size_t k = 2; k < tokens.size(); ++k) {
    if (is_type_name(tokens[k].text) && is_unsigned(tokens[k - 1].text) && is_unsigned(tokens[k - 2].text)) return k;
  }
  return std::nullopt;
}

std::optional<int> leading_int(const std::string& value) {
  const auto t = tokenize(value);
  if (t.empty() || !is_unsigned(t[0].text) || t[0].text.size() > 9) return std::nullopt;
  return std::atoi(t[0].text.c_str());
}

// "Rank N [Group G] Pid P on HOST device D [BUS] NAME": the position of "on", or nullopt.
std::optional<std::size_t> rank_line_host(const std::vector<Token>& words) {
  if (words.size() < 6 || words[0].text != "Rank" || !is_unsigned(words[1].text)) return std::nullopt;
  for (std::size_t on = 2; on + 3 < words.size(); ++on) {
    if (words[on].text == "on" && words[on + 2].text == "device") return on;
  }
  return std::nullopt;
}

// The sizes nccl-tests' parameter line asks for: "minBytes 8 maxBytes 1073741824 step:
// 2(factor)" (or "step: 1048576(bytes)"), wherever it stands in the line; nullopt unless
// all three read as whole numbers that make a sweep.
std::optional<detail::Sweep> sweep_of(const std::vector<Token>& words, std::size_t line) {
  const auto whole = [](const std::string& t) -> std::optional<double> {
    if (!is_unsigned(t) || t.size() > 16) return std::nullopt;
    return std::strtod(t.c_str(), nullptr);
  };
  std::optional<double> min, max;
  std::optional<detail::Sweep> out;
  detail::Sweep sweep;
  bool step = false;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& key = words[i].text;
    const std::string& value = words[i + 1].text;
    if (key == "minBytes") {
      min = whole(value);
    } else if (key == "maxBytes") {
      max = whole(value);
    } else if (key == "step:") {
      const std::size_t open = value.find('(');
      const std::string unit = open == std::string::npos ? "" : value.substr(open);
      if (const auto n = whole(value.substr(0, open)); n && (unit == "(factor)" || unit == "(bytes)")) {
        sweep.step = *n;
        sweep.factor = unit == "(factor)";
        step = true;
      }
    }
  }
  if (!min || !max || !step || *min < 1.0 || *max < *min || sweep.step < (sweep.factor ? 2.0 : 1.0)) return out;
  sweep.min_bytes = *min;
  sweep.max_bytes = *max;
  sweep.where = line_ref(line);
  out = sweep;
  return out;
}

// What the non-table lines of a log state.
struct Context {
  std::string file;
  // The first "# collective:" or "Collective test starting:"; a different one later is an error.
  std::optional<Stated<std::string>> collective;
  // The first program name elsewhere, and the first that differs from it (an error only
  // when no line names the collective). Only these are kept: linear in the log's length.
  std::optional<Stated<std::string>> program, other_program;
  std::optional<Stated<int>> total_ranks, gpus_per_node, nodes;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::string rank_line, gpu_key, gpu_rank0;
  std::optional<Stated<int>> out_of_bounds;
  std::optional<detail::Sweep> sweep;
  bool closed = false;

  void add_collective(std::string name, std::size_t line) {
    if (!collective) {
      collective = Stated<std::string>{std::move(name), line_ref(line), ""};
    } else if (collective->value != name) {
      throw InputError(file, line_ref(line), fmt::format("'{}' here but '{}' on {}: one collective per log", name,
                                                         collective->value, collective->where));
    }
  }

  // `body`: the line without prefix and '#'; `commented`: it had a '#'.
  void read(const std::string& body, const std::vector<Token>& tokens, bool commented, std::size_t line) {
    const auto words = tokenize(body);
    if (!sweep) sweep = sweep_of(words, line);
    if (body.starts_with("Avg bus bandwidth")) closed = true;
    if (body.starts_with("Out of bounds values")) {
      if (const auto colon = body.find(':'); colon != std::string::npos) {
        if (const auto n = leading_int(body.substr(colon + 1))) out_of_bounds = Stated<int>{*n, line_ref(line), ""};
      }
    } else if (body.starts_with("Collective test starting:")) {
      add_collective(detail::collective_of_program(trim(body.substr(25))), line);
    } else if (const auto on = rank_line_host(words)) {
      const int rank = std::atoi(words[1].text.c_str());
      ranks.insert(rank);
      hosts.insert(words[*on + 1].text);
      if (rank_line.empty()) rank_line = line_ref(line);
      if (rank == 0 && words.size() > *on + 5) gpu_rank0 = trim(body.substr(words[*on + 5].begin));
    } else if (commented && !words.empty() && words[0].text.ends_with(':')) {
      read_key(words[0].text.substr(0, words[0].text.size() - 1), trim(body.substr(words[0].text.size())), line);
    }
    for (const auto& t : tokens) {
      const std::string name = detail::collective_of_program(t.text);
      if (name.empty()) continue;
      if (!program) {
        program = Stated<std::string>{name, line_ref(line), ""};
      } else if (!other_program && name != program->value) {
        other_program = Stated<std::string>{name, line_ref(line), ""};
      }
    }
  }

  void read_key(const std::string& key, const std::string& value, std::size_t line) {
    if (key == "collective") {
      const auto t = tokenize(value);
      if (t.empty()) return;
      std::string name = detail::collective_of_program(t[0].text);
      add_collective(name.empty() ? t[0].text : name, line);
    } else if (key == "gpu") {
      gpu_key = value;
    } else if (key == "total_ranks" || key == "gpus_per_node" || key == "nodes") {
      const auto n = leading_int(value);
      if (!n) return;
      Stated<int> stated{*n, line_ref(line), "# " + key + " on " + line_ref(line)};
      (key == "total_ranks" ? total_ranks : key == "nodes" ? nodes : gpus_per_node) = stated;
    }
  }

  detail::ReadFacts facts(std::size_t lines) const {
    detail::ReadFacts f;
    if (collective) {
      f.collective = collective;
    } else if (program) {
      if (other_program) {
        throw InputError(file, other_program->where,
                         fmt::format("'{}' here but '{}' on {}: one collective per log", other_program->value,
                                     program->value, program->where));
      }
      f.collective = program;
    }
    if (total_ranks) {
      f.ranks = total_ranks;
    } else if (gpus_per_node && nodes) {
      f.ranks = Stated<int>{gpus_per_node->value * nodes->value, gpus_per_node->where,
                            fmt::format("{} x {}", gpus_per_node->source, nodes->source)};
    } else if (!ranks.empty()) {
      f.ranks = Stated<int>{static_cast<int>(ranks.size()), rank_line,
                            fmt::format("{} '#  Rank' lines from {}", ranks.size(), rank_line)};
    }
    if (nodes) {
      f.nodes = nodes;
    } else if (!hosts.empty()) {
      f.nodes = Stated<int>{static_cast<int>(hosts.size()), rank_line,
                            fmt::format("{} hosts in the '#  Rank' lines", hosts.size())};
    }
    f.out_of_bounds = out_of_bounds;
    f.gpu = !gpu_key.empty() ? gpu_key : gpu_rank0;
    f.end_where = line_ref(lines);
    f.sweep = sweep;
    f.closed = closed;
    return f;
  }
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

NcclTestsLog parse_text(const std::string& text, const std::string& file, const NcclTestsOptions& options) {
  const std::vector<std::string> lines = split_lines(text);
  std::optional<Layout> layout;
  std::vector<ReadRow> rows;
  Context context;
  context.file = file;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t number = i + 1;
    const std::vector<Token> tokens = tokenize(line);
    if (tokens.empty()) continue;
    if (auto header = header_layout(tokens, line, number)) {
      if (layout && !rows.empty()) {
        throw InputError(file, line_ref(number),
                         fmt::format("a second table starts here (the first on line {}): one run per log", layout->line));
      }
      layout = std::move(header);
      continue;
    }
    if (layout) {
      std::string_view rest = line;
      while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
      if (rest.starts_with(layout->prefix)) {
        rest.remove_prefix(layout->prefix.size());
        const std::vector<Token> cells = tokenize(rest);
        // A data row, or one whose size or count is not a number ("nan", "-1") but whose
        // type column says it is one: read_row names what is wrong with it.
        const bool row_shaped = cells.size() > 2 && is_type_name(cells[2].text) && !cells[0].text.starts_with('#');
        if (!cells.empty() && (is_unsigned(cells[0].text) || row_shaped)) {
          rows.push_back(read_row(cells, *layout, file, number));
          continue;
        }
      }
    }
    if (const auto k = type_position(tokens)) {
      const std::string prefix = trim(line.substr(0, tokens[*k - 2].begin));
      if (!layout) {
        layout = standard_layout(tokens, line, number, *k);
        if (layout) {
          const std::vector<Token> cells = tokenize(std::string_view(line).substr(tokens[*k - 2].begin));
          rows.push_back(read_row(cells, *layout, file, number));
          continue;
        }
        throw InputError(file, line_ref(number),
                         fmt::format("a data row before the column header ('size count type redop root time algbw "
                                     "busbw #wrong ...'), and its {} columns are not the standard 13 (or the older "
                                     "12): the table has no header",
                                     tokens.size() - (*k - 2)));
      }
      throw InputError(file, line_ref(number),
                       fmt::format("the row's prefix '{}' differs from the column header's '{}' (line {}): output of "
                                   "another process?",
                                   prefix, layout->prefix, layout->line));
    }
    // A comment: the text after the first '#' when at most a prefix precedes it.
    const std::size_t hash = line.find('#');
    const bool commented = hash != std::string::npos && tokenize(line.substr(0, hash)).size() <= 1;
    std::string body = commented ? trim(line.substr(hash + 1)) : trim(line);
    if (!commented && layout && !layout->prefix.empty() && body.starts_with(layout->prefix)) {
      body = trim(body.substr(layout->prefix.size()));
    }
    context.read(body, tokens, commented, number);
  }
  return detail::finish_log(std::move(rows), context.facts(lines.size()), file, options);
}

}  // namespace

bool is_nccl_tests_json(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  try {
    const Json j = Json::parse(text);
    return j.is_object() && j.contains("results");
  } catch (const Json::out_of_range&) {
    return true;  // JSON with a number beyond double range: the JSON reader says where
  } catch (const Json::parse_error&) {
    return false;
  }
}

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file, const NcclTestsOptions& options) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return detail::parse_nccl_tests_json(text, file, options);
  return parse_text(text, file, options);
}

NcclTestsLog read_nccl_tests_file(const std::string& path, const NcclTestsOptions& options) {
  return parse_nccl_tests(read_text_file(path), path, options);
}

std::vector<std::pair<double, double>> bytes_and_time_s(const NcclTestsLog& log, NcclTestsColumn column) {
  std::vector<std::pair<double, double>> out;
  for (const auto& row : log.rows) {
    const auto& first = column == NcclTestsColumn::in_place ? row.in_place : row.out_of_place;
    const auto& second = column == NcclTestsColumn::in_place ? row.out_of_place : row.in_place;
    double us = first ? first->time_us : second->time_us;
    if (column == NcclTestsColumn::faster && first && second) us = std::min(first->time_us, second->time_us);
    out.emplace_back(row.bytes, us * 1e-6);
  }
  return out;
}

}  // namespace dtperf::io
