#include "dtperf/error.hpp"

#include <algorithm>
#include <vector>

namespace dtperf {

namespace {

std::string format_message(const std::string& file, const std::string& where, const std::string& reason,
                           const std::string& input = "", const std::string& needed = "") {
  std::string message = input;
  if (!file.empty()) message += file;
  if (!where.empty()) {
    if (!message.empty()) message += ": ";
    // A JSON pointer reads better with "at"; a line reference stands alone.
    if (where.front() == '/' || where == "(root)") message += "at ";
    message += where;
  }
  if (!message.empty()) message += ": ";
  message += reason;
  if (!needed.empty()) message += " (give: " + needed + ")";
  return message;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

InputError::InputError(std::string file, std::string where, std::string reason)
    : std::runtime_error(format_message(file, where, reason)),
      file_(std::move(file)),
      where_(std::move(where)),
      reason_(std::move(reason)) {}

InputError::InputError(std::string file, std::string where, std::string reason, std::string input,
                       std::string needed)
    : std::runtime_error(format_message(file, where, reason, input, needed)),
      file_(std::move(file)),
      where_(std::move(where)),
      reason_(std::move(reason)),
      input_(std::move(input)),
      needed_(std::move(needed)) {}

std::string InputError::place_and_reason() const { return format_message(file_, where_, reason_, input_); }

InputError InputError::in_input(std::string input, std::string reason) {
  return InputError("", "", std::move(reason), std::move(input), "");
}

InputError InputError::needing(std::string input) const {
  return InputError(file_, where_, reason_, input_, std::move(input));
}

std::string closest_name(std::string_view word, std::span<const std::string> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const std::string best = closest_name(word, candidates);
  return best.empty() ? std::string{} : " (did you mean '" + best + "'?)";
}

std::string join_names(std::span<const std::string> names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace dtperf
