#pragma once
// Where a command's report goes: the table on stdout, or JSON on stdout (--json), and
// with -o FILE the JSON (or, for FILE.csv, its records as CSV) into a file that appears
// whole or not at all.
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/io/json_reader.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/io/temporary_file_guard.hpp"
#include "options.hpp"

namespace dtperf::cli {

/// `-o -`: the output goes to stdout instead of a file.
inline constexpr const char* kStdout = "-";

/// Writes through a temporary file in the same folder and renames it into place, so a
/// failed write leaves no partial file. Failure is an InputError on the path.
void write_file_atomically(const std::string& path, const std::string& content);

/// A file written piece by piece (a sweep's rows) that appears whole or not at all: the
/// pieces go to a temporary file in the same folder, commit() renames it into place, and
/// a StreamedFile destroyed before commit() (an error on the way) removes it.
class StreamedFile {
 public:
  explicit StreamedFile(std::string path);
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  void write(const std::string& text);
  void finish();  // flushed and closed, a write error thrown; commit() then only renames
  void commit();

 private:
  std::string shown_;  // the path as given, for messages
  std::string path_;   // where the bytes go (a symbolic link's target)
  std::string temporary_;
  std::unique_ptr<io::TemporaryFileGuard> guard_;
  std::ofstream out_;
  bool finished_ = false;
  bool committed_ = false;
};

/// Several files of one command, all or none: each goes to a temporary file beside it, and
/// only when every one is written are they renamed into place (an error before that
/// removes them all). Pairs of (path, content).
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

/// A rendered report (io/render.hpp): the table (or with --json the JSON, the invocation
/// added) on stdout; with -o FILE the JSON, or with -o FILE.csv its records as CSV
/// (io/csv.hpp: one row per scheme, rate, size...); with -o - the JSON on stdout alone. `also` are more files of the same
/// command (a --plot chart), written with -o's all or none.
void emit(const OutputOptions& output, const io::Rendered& report,
          const std::vector<std::pair<std::string, std::string>>& also = {});

/// Adds a command that lists something built in (models, profiles): `render()` emitted
/// with the output options (--json, -o).
void add_list_command(CLI::App& app, const std::string& name, const std::string& help, io::Rendered (*render)());

/// Stable JSON text (2-space indent, trailing newline).
std::string json_text(const io::Json& json);

}  // namespace dtperf::cli
