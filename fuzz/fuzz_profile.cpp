// Cluster profiles (dtperf.profile/1), then a prediction on the profile: All-Reduce and
// gossip for ResNet-50, as `dtperf compare` runs them. A profile that parses must give
// finite times in bounded time.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "dtperf/error.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  static const ModelSpec model = *zoo_model("resnet50");
  try {
    const io::Json json = io::parse_json_text(fuzz::text_of(data, size), "fuzz.json");
    Setup setup;
    setup.cluster = io::parse_profile(json, "fuzz.json");
    setup.dtype = setup.cluster.compute.dtype;  // as the command line does (the engine refuses a dtype without a peak)
    if (setup.cluster.ranks() > 4096) return 0;  // a valid but large cluster: slow, not wrong
    setup.model = &model;
    Evaluator evaluator(setup);
    for (const Scheme& scheme : {Scheme::allreduce(), Scheme::gossip("ring")}) {
      const SchemeOutcome outcome = evaluator.evaluate(scheme);
      if (outcome.available && !std::isfinite(outcome.iteration.iteration_s)) std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
