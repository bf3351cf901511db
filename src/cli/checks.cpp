#include <algorithm>
#include "checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace dtperf::cli {

namespace {

// Long inputs are cut in messages (a 309-digit number stays one short line).
std::string shown(const std::string& text) { return text.size() <= 24 ? text : text.substr(0, 20) + "..."; }

std::string limit(double x) {
  return x == std::floor(x) && std::abs(x) < 1e12 ? fmt::format("{:.0f}", x) : fmt::format("{:g}", x);
}

}  // namespace

CLI::Validator number_in(double low, double high, bool low_open) {
  const std::string description = fmt::format("{}{}, {}]", low_open ? "(" : "[", limit(low), limit(high));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double x = std::strtod(begin, &end);
        if (end == begin || *end != '\0') return fmt::format("'{}' is not a number", shown(text));
        if (!std::isfinite(x) || errno == ERANGE) return fmt::format("'{}' is not a finite number", shown(text));
        if (low_open ? !(x > low) : !(x >= low)) {
          return fmt::format("{} is out of range: it must be {} {}", shown(text), low_open ? "above" : "at least",
                             limit(low));
        }
        if (!(x <= high)) return fmt::format("{} is out of range: the limit is {}", shown(text), limit(high));
        return {};
      },
      description);
}

CLI::Validator number_in(const limits::Range& range) { return number_in(range.low, range.high, range.low_open); }

CLI::Validator zero_or(const limits::Range& range) {
  const CLI::Validator inside = number_in(range);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string copy = text;
        const std::string error = inside(copy);
        if (error.empty()) return {};
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && x == 0.0) return {};
        return error + " (or 0)";
      },
      fmt::format("0 or [{}, {}]", limit(range.low), limit(range.high)));
}

CLI::Validator count_up_to(double high) {
  const CLI::Validator range = number_in(1.0, high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string copy = text;
        if (std::string error = range(copy); !error.empty()) return error;
        const double x = std::strtod(text.c_str(), nullptr);
        if (x != std::floor(x)) return fmt::format("'{}' is not a whole number", shown(text));
        // Decimal digits only: the parser behind would read 010 as octal 8 and 0x10 as 16.
        if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          return fmt::format("'{}' is not a whole number in decimal digits", shown(text));
        }
        text.erase(0, std::min(text.find_first_not_of('0'), text.size() - 1));  // 010 -> 10
        return {};
      },
      fmt::format("[1, {}]", limit(high)));
}

CLI::Validator decimal_digits(bool unit_suffix) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto digits_end = std::find_if(text.begin(), text.end(), [](char c) { return c < '0' || c > '9'; });
        const bool letters_after = std::all_of(digits_end, text.end(), [](char c) {
          return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        });
        const bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
        if (digits_end == text.begin() || hex || (digits_end != text.end() && !(unit_suffix && letters_after))) {
          return fmt::format("'{}' is not a whole number in decimal digits{}", shown(text),
                             unit_suffix ? " (with an optional K, M or G)" : "");
        }
        const auto leading = static_cast<std::size_t>(std::distance(text.begin(), digits_end));
        text.erase(0, std::min(text.find_first_not_of('0'), leading - 1));  // 010 -> 10, 000 -> 0
        return {};
      },
      "");
}

}  // namespace dtperf::cli
