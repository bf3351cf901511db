// Model files: per-layer timing logs (.bk.log), layer JSON files, iteration-time logs
// and reduction logs; the first byte picks the parser, the rest is the file. A model
// that parses is then predicted on a built-in cluster. The compute model refuses a model
// whose measurements contradict the cluster (std::invalid_argument, which the CLI turns
// into an input error naming the model file); anything else escaping is a finding.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "dtperf/error.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "fuzz_input.hpp"

namespace {

void predict(const dtperf::ModelSpec& model) {
  using namespace dtperf;
  static const ClusterProfile cluster = io::load_profile("p3dn-24xlarge");
  Setup setup;
  setup.cluster = cluster;
  setup.model = &model;
  Evaluator evaluator(setup);
  const SchemeOutcome outcome = evaluator.evaluate(Scheme::allreduce());
  if (!std::isfinite(outcome.iteration.iteration_s)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  if (size == 0) return 0;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: predict(io::parse_timing_log(text, "fuzz.bk.log")); break;
      case 1: predict(io::parse_layer_json(text, "fuzz.json")); break;
      case 2: (void)io::parse_iteration_times(text, "fuzz.txt"); break;
      default: (void)io::parse_reduction_log(text, "fuzz.log"); break;
    }
  } catch (const InputError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
