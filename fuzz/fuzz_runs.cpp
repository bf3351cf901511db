// Measured-runs files (dtperf.runs/1, one JSON object or JSON lines), then a prediction
// of each run (the first few) with the prior values, as `dtperf fit --runs` starts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "dtperf/error.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/runs_file.hpp"
#include "dtperf/zoo.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  static const ModelSpec model = *zoo_model("resnet50");
  static const ClusterProfile cluster = io::load_profile("p3dn-24xlarge");
  try {
    const std::vector<MeasuredRun> runs = io::parse_runs(fuzz::text_of(data, size), "fuzz.jsonl");
    Setup base;
    base.cluster = cluster;
    base.model = &model;
    const RunsModel prior{cluster, 1.0, 1.0};
    for (std::size_t i = 0; i < std::min<std::size_t>(runs.size(), 4); ++i) {
      const ClusterOverrides& c = runs[i].config.cluster;
      const long long gpus = static_cast<long long>(c.nodes.value_or(cluster.nodes)) *
                             c.gpus_per_node.value_or(cluster.gpus_per_node);
      if (gpus > 4096) continue;  // valid but large: slow, not wrong
      const IterationResult r = predict_run(base, prior, runs[i]);
      if (!std::isfinite(r.iteration_s)) std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
