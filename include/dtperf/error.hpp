#pragma once
// One error type for bad input. It says where the bad input is (file, then a JSON
// pointer or a line number), what was wrong, and, for unknown names, what was meant.
// The command line prints `what()` on one line and exits with code 2.
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dtperf {

class InputError : public std::runtime_error {
 public:
  /// `where` is a JSON pointer ("/inter_node/nic_gbps"), "line 12", or empty.
  InputError(std::string file, std::string where, std::string reason);

  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_;
  std::string where_;
  std::string reason_;
};

/// The closest candidate to `word` by edit distance, or "" if none is close enough
/// to be a plausible typo (distance at most max(2, |word|/3)).
std::string closest_name(std::string_view word, std::span<const std::string> candidates);

/// " (did you mean 'x'?)" or "" when no candidate is close.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

/// "a, b, c" for messages that list the valid choices.
std::string join_names(std::span<const std::string> names);

}  // namespace dtperf
