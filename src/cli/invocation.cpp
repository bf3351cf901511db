#include "invocation.hpp"

#include <algorithm>

namespace dtperf::cli {

namespace {

struct Invocation {
  std::vector<std::string> arguments;
  std::string scenario;
};

Invocation& invocation() {
  static Invocation value;
  return value;
}

}  // namespace

void record_invocation(std::vector<std::string> arguments, std::string scenario) {
  invocation() = {std::move(arguments), std::move(scenario)};
}

io::Json invocation_json() {
  io::Json json = {{"tool", kToolVersion}, {"arguments", invocation().arguments}};
  if (!invocation().scenario.empty()) json["scenario"] = invocation().scenario;
  return json;
}

io::Json invocation_json_without(const std::vector<std::string>& options, const std::vector<std::string>& flags) {
  const std::vector<std::string>& all = invocation().arguments;
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string& a = all[i];
    bool drop = std::find(flags.begin(), flags.end(), a) != flags.end();
    for (const std::string& name : options) {
      if (a == name) {
        drop = true;
        ++i;  // and its value
        break;
      }
      const bool short_name = name.size() == 2;
      if (a.starts_with(name + "=") || (short_name && a.starts_with(name) && a.size() > 2)) drop = true;
    }
    if (!drop) kept.push_back(a);
  }
  io::Json json = invocation_json();
  json["arguments"] = kept;
  return json;
}

}  // namespace dtperf::cli
