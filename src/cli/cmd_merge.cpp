// dtperf merge: joins the shards of a sweep (dtperf sweep --shard K/N, CSV or JSON lines)
// into the file one unsharded run writes, byte for byte. Shard K holds the points whose
// index is K modulo N, so row j of the whole comes from shard j mod N; every row's index
// is checked against the place it lands in. The files are streamed a line at a time
// (constant memory however large the grid) and may be given in any order.
//
// JSON lines carry what makes the check complete: each shard's header names its place
// (index, count) and the grid's point count, and the headers must agree on everything
// else. CSV carries only the column line, so a CSV shard's place is its first row's index
// and a shard cut short at its very end is found only by the point count a JSON-lines
// merge checks.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> files;
  std::string output_path;
};

constexpr std::size_t kLongestLine = std::size_t{1} << 20;  // a sweep row is under 1 kB

// One shard file, read a line at a time.
class ShardFile {
 public:
  explicit ShardFile(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    if (!in_) throw InputError(path_, "", "cannot open the file for reading");
  }
  const std::string& path() const { return path_; }
  std::uint64_t line_number() const { return line_; }

  // The next line without its newline, or none at the end; a last line without its
  // newline is a file cut short.
  std::optional<std::string> next() {
    std::string line;
    if (!std::getline(in_, line)) {
      if (in_.bad()) throw InputError(path_, fmt::format("line {}", line_ + 1), "read error");
      return std::nullopt;
    }
    ++line_;
    if (line_ == 1 && line.starts_with(io::kUtf8ByteOrderMark)) line.erase(0, io::kUtf8ByteOrderMark.size());
    if (in_.eof()) throw fail("cut short: the last line has no newline");
    if (line.size() > kLongestLine) throw fail(fmt::format("longer than {} bytes: not a sweep row", kLongestLine));
    return line;
  }

  InputError fail(const std::string& reason) const {
    return InputError(path_, fmt::format("line {}", line_), reason);
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t line_ = 0;
};

enum class Format { csv, jsonl };

struct Shard {
  std::unique_ptr<ShardFile> file;
  std::string header;                 // as written (JSON lines: the header with the shard removed)
  std::optional<std::uint64_t> index;  // its place K (none: an empty CSV shard)
  std::uint64_t count = 0;             // N and the grid's points, as a JSON-lines header states them
  std::uint64_t points = 0;
  std::optional<std::string> first_row;
};

// A row's index: the first CSV field, or the JSON record's leading "index" member (the
// sweep writes it first).
std::uint64_t row_index(const ShardFile& file, const std::string& row, Format format) {
  const std::string prefix = format == Format::jsonl ? "{\"index\":" : "";
  std::size_t at = prefix.size();
  if (row.compare(0, prefix.size(), prefix) != 0) throw file.fail("not a sweep row: it does not start with its index");
  std::uint64_t value = 0;
  const std::size_t digits_from = at;
  while (at < row.size() && row[at] >= '0' && row[at] <= '9' && at - digits_from < 19) {
    value = value * 10 + static_cast<std::uint64_t>(row[at] - '0');
    ++at;
  }
  if (at == digits_from || at >= row.size() || row[at] != ',') {
    throw file.fail("not a sweep row: it does not start with its index");
  }
  return value;
}

Shard open_shard(const std::string& path, std::optional<Format>& format) {
  Shard s;
  s.file = std::make_unique<ShardFile>(path);
  const std::optional<std::string> first = s.file->next();
  if (!first) throw InputError(path, "", "empty: not a sweep shard");
  const Format this_format = !first->empty() && first->front() == '{' ? Format::jsonl : Format::csv;
  if (format && *format != this_format) {
    throw s.file->fail("CSV and JSON-lines shards cannot be merged together");
  }
  format = this_format;
  if (this_format == Format::csv) {
    if (!first->starts_with("index,")) throw s.file->fail("not a sweep's CSV: the first line is not its column line");
    s.header = *first;
  } else {
    io::Json header;
    try {
      header = io::Json::parse(*first);
    } catch (const io::Json::exception&) {
      throw s.file->fail("not a sweep's JSON lines: the first line is not a JSON header");
    }
    if (!header.is_object() || header.value("schema", "") != "dtperf.sweep/1") {
      throw s.file->fail("not a sweep's JSON lines: the header's schema is not dtperf.sweep/1");
    }
    const io::Json* shard = header.contains("shard") ? &header["shard"] : nullptr;
    if (!shard || !shard->is_object() || !(*shard)["index"].is_number_unsigned() ||
        !(*shard)["count"].is_number_unsigned()) {
      throw s.file->fail("the header has no shard {index, count}: not written by dtperf sweep --shard");
    }
    if (!header.contains("points") || !header["points"].is_number_unsigned()) {
      throw s.file->fail("the header has no point count: not written by dtperf sweep");
    }
    s.index = (*shard)["index"].get<std::uint64_t>();
    s.count = (*shard)["count"].get<std::uint64_t>();
    s.points = header["points"].get<std::uint64_t>();
    header.erase("shard");
    // Written as the sweep writes its header: the unsharded run's first line.
    s.header = header.dump(-1, ' ', false, io::Json::error_handler_t::replace);
  }
  s.first_row = s.file->next();
  if (s.first_row && this_format == Format::csv) s.index = row_index(*s.file, *s.first_row, Format::csv);
  return s;
}

void run(const MergeOptions& o) {
  std::optional<Format> format;
  std::vector<Shard> shards;
  for (const std::string& path : o.files) shards.push_back(open_shard(path, format));
  const std::uint64_t n = shards.size();
  // The first file given, which every other must agree with (copied: the shards are
  // sorted below).
  const std::string header = shards.front().header;
  const std::string first_path = shards.front().file->path();
  const std::uint64_t points = shards.front().points;
  for (const Shard& s : shards) {
    if (s.header != header) {
      throw InputError(s.file->path(), "line 1",
                       fmt::format("not a shard of the same sweep as {}: the {} differ{}", first_path,
                                   *format == Format::csv ? "column lines" : "headers",
                                   *format == Format::csv ? "" : " (axes, base, columns or the command's options)"));
    }
  }
  for (const Shard& s : shards) {
    if (*format == Format::jsonl && s.count != n) {
      throw InputError(s.file->path(), "line 1",
                       fmt::format("shard {}/{}, but {} file{} given: give all {} shards", *s.index, s.count, n,
                                   n == 1 ? " was" : "s were", s.count));
    }
  }
  // In place order: shard K at position K. An empty CSV shard (K at or past the grid's
  // size) has no place to check and contributes nothing; it goes last.
  std::stable_sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) {
    return a.index.value_or(UINT64_MAX) < b.index.value_or(UINT64_MAX);
  });
  for (std::uint64_t k = 0; k < n; ++k) {
    const Shard& s = shards[k];
    if (!s.index) break;
    if (*s.index != k) {
      const Shard& previous = shards[k == 0 ? 0 : k - 1];
      if (k > 0 && previous.index == s.index) {
        throw InputError(s.file->path(), *format == Format::csv ? "line 2" : "line 1",
                         fmt::format("shard {} again: {} is the same shard", *s.index, previous.file->path()));
      }
      throw InputError(s.file->path(), *format == Format::csv ? "line 2" : "line 1",
                       fmt::format("shard {} of {} is missing (this file is shard {}): give every shard once", k, n,
                                   *s.index));
    }
  }

  std::unique_ptr<StreamedFile> file;
  if (!o.output_path.empty()) file = std::make_unique<StreamedFile>(o.output_path);
  std::string buffer;
  const auto flush = [&](bool last) {
    if (!last && buffer.size() < (std::size_t{1} << 20)) return;
    if (file) {
      file->write(buffer);
    } else {
      std::cout << buffer;
    }
    buffer.clear();
  };
  buffer += header;
  buffer += '\n';

  // Row j is shard j mod n's next row. The first shard to run out ends the grid: the
  // shards before it hold one row more than it, those after it as many, so every one of
  // them must have run out too.
  std::uint64_t rows = 0;
  std::vector<std::optional<std::string>> pending;
  for (Shard& s : shards) pending.push_back(std::move(s.first_row));
  for (;; ++rows) {
    const std::uint64_t k = rows % n;
    Shard& s = shards[k];
    std::optional<std::string>& row = pending[k];
    if (!row) break;
    const std::uint64_t index = row_index(*s.file, *row, *format);
    if (index != rows) {
      throw s.file->fail(fmt::format("row index {} where the merge is at {}: a shard of another sweep, or "
                                     "rows missing",
                                     index, rows));
    }
    buffer += *row;
    buffer += '\n';
    flush(false);
    row = s.file->next();
  }
  const Shard& ended = shards[rows % n];
  for (std::uint64_t k = 0; k < n; ++k) {
    if (pending[k]) {
      throw InputError(ended.file->path(), "",
                       fmt::format("ends after {} rows, while {} has more: a shard was cut short, or is of another "
                                   "sweep",
                                   ended.file->line_number() - 1, shards[k].file->path()));
    }
  }
  if (*format == Format::jsonl && points != rows) {
    throw InputError(shards[rows % n].file->path(), "",
                     fmt::format("the sweep has {} points but the shards hold {}: this shard was cut short",
                                 points, rows));
  }
  flush(true);
  if (file) {
    file->commit();
    std::cout << fmt::format("# {} shards merged: {} points written to {}\n", n, rows, o.output_path);
  }
}

}  // namespace

void add_merge_command(CLI::App& app) {
  auto [cmd, options] = add_command<MergeOptions>(app, run,
      "merge",
      "Join the shards of a sweep (dtperf sweep --shard K/N, as CSV or JSON lines, given in any order) into the\n"
      "file one unsharded run writes, byte for byte; every row's place and every shard's presence are checked.");
  cmd->add_option("files", options->files, "The N shard files, one per K")->type_name("SHARD")->required();
  cmd->add_option("-o,--output", options->output_path, "Write the merged file here (written whole or not at all; "
                                                       "default: stdout)")
      ->type_name("FILE");
}

}  // namespace dtperf::cli
