#include "output.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include "dtperf/error.hpp"
#include "dtperf/io/csv.hpp"
#include "invocation.hpp"
#include "dtperf/io/temporary_file_guard.hpp"

namespace dtperf::cli {

// A name or path that is not UTF-8 (a Latin-1 file name, a --name of raw bytes) is written
// with U+FFFD for each bad byte: JSON text must be UTF-8.
std::string json_text(const io::Json& json) {
  return json.dump(2, ' ', false, io::Json::error_handler_t::replace) + "\n";
}

namespace {

// Where the bytes for `path` go: through a symbolic link to its target (renaming onto the
// link itself would replace the link with a regular file).
std::string written_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path p(path);
  if (!std::filesystem::is_symlink(p, error)) return path;
  std::filesystem::path target = std::filesystem::read_symlink(p, error);
  if (error) return path;
  if (target.is_relative()) target = p.parent_path() / target;
  return target.string();
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  write_files_atomically({{path, content}});
}

StreamedFile::StreamedFile(std::string path)
    : shown_(std::move(path)), path_(written_path(shown_)), temporary_(path_ + ".tmp." + std::to_string(::getpid())) {
  guard_ = std::make_unique<io::TemporaryFileGuard>(temporary_);
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!out_) throw InputError(shown_, "", "cannot create the output file");
}

StreamedFile::~StreamedFile() {
  if (committed_) return;
  out_.close();
  std::remove(temporary_.c_str());
}

void StreamedFile::write(const std::string& text) {
  out_ << text;
  if (!out_) throw InputError(shown_, "", "write error (disk full, or a file size limit?)");
}

void StreamedFile::finish() {
  if (finished_) return;
  out_.flush();
  if (!out_) throw InputError(shown_, "", "write error (disk full, or a file size limit?)");
  out_.close();
  finished_ = true;
}

void StreamedFile::commit() {
  finish();
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    throw InputError(shown_, "", "cannot move the finished output into place");
  }
  committed_ = true;
}

void add_list_command(CLI::App& app, const std::string& name, const std::string& help, io::Rendered (*render)()) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = app.add_subcommand(name, help);
  output->add_to(*cmd);
  cmd->callback([output, render] { emit(*output, render()); });
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::unique_ptr<StreamedFile>> open;
  for (const auto& [path, content] : files) {
    open.push_back(std::make_unique<StreamedFile>(path));
    open.back()->write(content);
  }
  for (const auto& file : open) file->finish();  // every byte on disk before any is renamed
  for (const auto& file : open) file->commit();
}

void emit(const OutputOptions& output, const io::Rendered& rendered,
          const std::vector<std::pair<std::string, std::string>>& also) {
  io::Json report = rendered.json;
  report["invocation"] = invocation_json();
  std::vector<std::pair<std::string, std::string>> files;
  if (output.output_path == kStdout) {
    write_files_atomically(also);
    std::cout << json_text(report);
    return;
  }
  if (output.output_path.ends_with(".csv")) {
    files.emplace_back(output.output_path,
                       io::csv_from_records(rendered.json.at(io::Json::json_pointer(rendered.csv_records))));
  } else if (!output.output_path.empty()) {
    files.emplace_back(output.output_path, json_text(report));
  }
  files.insert(files.end(), also.begin(), also.end());
  write_files_atomically(files);
  if (output.json) {
    std::cout << json_text(report);
  } else {
    std::cout << rendered.text;
  }
}

}  // namespace dtperf::cli
