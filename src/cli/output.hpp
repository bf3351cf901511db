#pragma once
// Where a command's report goes: the table on stdout, or JSON on stdout (--json), and
// with -o FILE the JSON into a file that appears whole or not at all.
#include <string>

#include "dtperf/io/json_reader.hpp"
#include "options.hpp"

namespace dtperf::cli {

/// Writes through a temporary file in the same folder and renames it into place, so a
/// failed write leaves no partial file. Failure is an InputError on the path.
void write_file_atomically(const std::string& path, const std::string& content);

void emit_report(const OutputOptions& output, const std::string& table_text, const io::Json& json);

/// Stable JSON text (2-space indent, trailing newline).
std::string json_text(const io::Json& json);

}  // namespace dtperf::cli
