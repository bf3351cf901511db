#include "sources.hpp"

#include <algorithm>

namespace dtperf::cli {

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  // An echoed key, value or line of a megabyte stays readable: a word over kLongWord
  // characters keeps its first kKeptOfWord and says how long it was.
  constexpr std::size_t kLongWord = 120, kKeptOfWord = 80;
  std::string shortened;
  std::size_t start = 0;
  while (start <= out.size()) {
    std::size_t end = out.find(' ', start);
    if (end == std::string::npos) end = out.size();
    const std::string_view word(out.data() + start, end - start);
    if (word.size() > kLongWord) {
      // The punctuation that ends the word (a closing quote, a colon) stays after the cut.
      std::size_t tail = 0;
      while (tail < 3 && std::string_view(":;,.)'\"").find(word[word.size() - 1 - tail]) != std::string_view::npos) ++tail;
      shortened += std::string(word.substr(0, kKeptOfWord)) + "...(" + std::to_string(word.size() - tail) +
                   " characters)" + std::string(word.substr(word.size() - tail));
    } else {
      shortened += word;
    }
    if (end < out.size()) shortened += ' ';
    start = end + 1;
  }
  return shortened;
}

ValueSources::ValueSources(std::string scenario_file, std::map<std::string, std::string> pointers,
                           const std::vector<std::string>& command_line)
    : scenario_file_(std::move(scenario_file)), pointers_(std::move(pointers)) {
  for (const std::string& arg : command_line) {
    if (arg.rfind("--", 0) == 0) pointers_.erase(arg.substr(2, arg.find('=') - 2));
  }
}

std::string ValueSources::option(const std::string& name) const {
  const auto it = pointers_.find(name);
  if (it == pointers_.end()) return "--" + name;
  return scenario_file_ + ": at " + it->second;
}

std::string ValueSources::message(const InputError& e) const {
  std::string text = e.input().empty() ? e.place_and_reason() : option(e.input()) + ": " + e.reason();
  if (!e.needed_input().empty()) text += "; give --" + e.needed_input();
  return message(text);
}

std::string ValueSources::message(const std::string& text) const {
  if (text.rfind("--", 0) != 0) return text;
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return text;
  const std::string name = text.substr(2, colon - 2);
  if (!pointers_.contains(name)) return text;
  return option(name) + text.substr(colon);
}

}  // namespace dtperf::cli
