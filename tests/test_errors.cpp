// The one input-error type: where, what, and "did you mean".
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "dtperf/error.hpp"

using namespace dtperf;

TEST_CASE("an input error names the file, the place and the reason", "[errors]") {
  const InputError pointer("cluster.json", "/inter_node/nic_gbps", "expected a positive number, got -5");
  CHECK(std::string(pointer.what()) == "cluster.json: at /inter_node/nic_gbps: expected a positive number, got -5");
  const InputError line("resnet50.bk.log", "line 12", "wait_us 'x' is not a number");
  CHECK(std::string(line.what()) == "resnet50.bk.log: line 12: wait_us 'x' is not a number");
  const InputError file_only("missing.json", "", "cannot open the file for reading");
  CHECK(std::string(file_only.what()) == "missing.json: cannot open the file for reading");
}

TEST_CASE("errors in named inputs name the input, never a command-line flag", "[errors]") {
  // The engine and io say which input is wrong or missing; the front end turns the name
  // into --profile, or a scenario file's JSON pointer (tests/cli_test.sh).
  const InputError unknown = InputError::in_input("profile", "unknown profile 'x'");
  CHECK(std::string(unknown.what()) == "profile: unknown profile 'x'");
  CHECK(unknown.input() == "profile");
  CHECK(unknown.file().empty());
  const InputError needs = InputError("log.txt", "", "the log does not say how many nodes its 16 ranks span").needing("nodes");
  CHECK(std::string(needs.what()) == "log.txt: the log does not say how many nodes its 16 ranks span (give: nodes)");
  CHECK(needs.place_and_reason() == "log.txt: the log does not say how many nodes its 16 ranks span");
  CHECK(needs.needed_input() == "nodes");
  CHECK(needs.file() == "log.txt");
}

TEST_CASE("unknown names get the closest known one as a suggestion", "[errors]") {
  const std::vector<std::string> names = {"nodes", "gpus_per_node", "inter_node", "intra_node"};
  CHECK(closest_name("node", names) == "nodes");
  CHECK(closest_name("gpu_per_node", names) == "gpus_per_node");
  CHECK(closest_name("completely_different", names).empty());
  CHECK(did_you_mean("inter_nodes", names) == " (did you mean 'inter_node'?)");
  CHECK(did_you_mean("zzz", names).empty());
}
