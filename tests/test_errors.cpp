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

TEST_CASE("unknown names get the closest known one as a suggestion", "[errors]") {
  const std::vector<std::string> names = {"nodes", "gpus_per_node", "inter_node", "intra_node"};
  CHECK(closest_name("node", names) == "nodes");
  CHECK(closest_name("gpu_per_node", names) == "gpus_per_node");
  CHECK(closest_name("completely_different", names).empty());
  CHECK(did_you_mean("inter_nodes", names) == " (did you mean 'inter_node'?)");
  CHECK(did_you_mean("zzz", names).empty());
}
