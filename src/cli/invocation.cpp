#include "invocation.hpp"

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

}  // namespace dtperf::cli
