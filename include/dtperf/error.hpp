#pragma once
// One error type for bad input. It says where the bad input is (file, then a JSON
// pointer or a line number), what was wrong, and, for unknown names, what was meant.
// The command line prints it on one line and exits with code 2.
//
// The engine and io never name command-line flags: an error in a value that is not in a
// file (a profile name, a topology, a measured time) names the input ("profile"), and an
// error that another input would resolve names that input ("nodes"). The front end says
// where the value came from (`--profile`, or a scenario file and its JSON pointer).
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dtperf {

class InputError : public std::runtime_error {
 public:
  /// `where` is a JSON pointer ("/inter_node/nic_gbps"), "line 12", or empty.
  InputError(std::string file, std::string where, std::string reason);

  /// An error in the value of the named input; what() is "input: reason".
  static InputError in_input(std::string input, std::string reason);
  /// This error, adding the input that would resolve it; what() ends "(give: nodes)".
  InputError needing(std::string input) const;

  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }
  const std::string& reason() const { return reason_; }
  const std::string& input() const { return input_; }
  /// what() without the input that would resolve the error.
  std::string place_and_reason() const;
  const std::string& needed_input() const { return needed_; }

 private:
  InputError(std::string file, std::string where, std::string reason, std::string input, std::string needed);

  std::string file_;
  std::string where_;
  std::string reason_;
  std::string input_;   // the named input whose value is wrong, or ""
  std::string needed_;  // the input that would resolve the error, or ""
};

/// The closest candidate to `word` by edit distance, or "" if none is close enough
/// to be a plausible typo (distance at most max(2, |word|/3)).
std::string closest_name(std::string_view word, std::span<const std::string> candidates);

/// " (did you mean 'x'?)" or "" when no candidate is close.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

/// "a, b, c" for messages that list the valid choices.
std::string join_names(std::span<const std::string> names);

}  // namespace dtperf
