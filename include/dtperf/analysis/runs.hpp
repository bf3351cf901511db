#pragma once
// Measured training runs: a configuration (scheme, cluster shape, workload, framework
// settings) and what one iteration took on the real cluster. The typed form of a
// `dtperf.runs/1` file (io/runs_file.hpp); the fitter (fit_runs.hpp) explains them.
#include <memory>
#include <optional>
#include <string>

#include "dtperf/allreduce.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/scenario.hpp"

namespace dtperf {

/// One configuration as it ran: everything not given is the profile's or the model's.
struct RunConfig {
  // The model this run trained, when it names one (a runs file may mix models: the
  // compute and link parameters are the cluster's, whatever it trains); else the fit's.
  std::string model_name;
  std::shared_ptr<const ModelSpec> model;
  Scheme scheme = Scheme::allreduce();
  ClusterOverrides cluster;    // nodes, GPUs per node, link what-ifs, dtype
  WorkloadOptions workload;    // batch, optimizer, compression, measured single-GPU time
  AllReduceOptions allreduce;  // algorithm, bucketing, bucket caps
  GossipOptions gossip;        // bucket size
  LocalSgdOptions local_sgd;   // inner steps, groups, outer synchronisation
  // Equal configurations predict alike (the same model object, options and what-ifs):
  // a fit predicts each distinct one once.
  bool operator==(const RunConfig&) const = default;
};

/// What one iteration took. The median is required; the spread (p10, p90) weights the run
/// in the fit; a breakdown, where the run recorded one, lets the fit tell forward from
/// backward and exposed communication from compute.
struct RunMeasurement {
  double iteration_s = 0.0;  // median
  std::optional<double> p10_s;
  std::optional<double> p90_s;
  std::optional<double> forward_s;
  std::optional<double> backward_s;
  std::optional<double> exposed_comm_s;
  std::optional<double> optimizer_s;
  bool has_breakdown() const { return forward_s || backward_s || exposed_comm_s || optimizer_s; }
};

struct MeasuredRun {
  std::string label;   // for tables ("ar-8"), unique in a file
  std::string file;     // for messages: the file ("runs.jsonl:3" for JSON lines)
  std::string pointer;  // and the run's JSON pointer in it ("/runs/2"; empty for a line)
  std::string source;  // where the measurement comes from (free text), if given
  RunConfig config;
  RunMeasurement measured;
};

}  // namespace dtperf
