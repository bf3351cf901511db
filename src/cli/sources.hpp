#pragma once
// Where a bad value came from, for the one-line error message. On the command line an
// option is named as the user typed it (`--nodes`); in `dtperf run FILE` a value that
// the scenario file gave (and the command line did not override) is named by the file
// and its JSON pointer (`s.json: at /options/nodes`). The engine and io name inputs
// without flags (InputError::input, needed_input); this is where they become flags.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dtperf/error.hpp"

namespace dtperf::cli {

/// `text` with control characters written as escapes (\n, \t, \r, \xNN): an error
/// message stays one line whatever a file's keys or values contain; a word over 120
/// characters (an echoed key or value) is cut to its first 80 and its length.
std::string printable(std::string_view text);

class ValueSources {
 public:
  ValueSources() = default;
  /// `pointers`: option long name -> JSON pointer in `scenario_file`; `command_line`: the
  /// arguments given after the file, whose options win over the file's.
  ValueSources(std::string scenario_file, std::map<std::string, std::string> pointers,
               const std::vector<std::string>& command_line);

  /// "--nodes", or "s.json: at /options/nodes" when the file gave the value.
  std::string option(const std::string& name) const;
  /// The message for an error: its source named as above, and the input that would
  /// resolve it as an option ("; give --nodes").
  std::string message(const InputError& e) const;
  /// A message that starts with "--name:" (an option's check failed), its source named.
  std::string message(const std::string& text) const;

 private:
  std::string scenario_file_;
  std::map<std::string, std::string> pointers_;  // only the options the file still decides
};

}  // namespace dtperf::cli
