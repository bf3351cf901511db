#pragma once
// The printed forms of results: JSON objects and text tables, both made from the same
// structs. Report JSON is versioned ("dtperf.report/1"), keys carry units, and its
// content is deterministic (no clock, no host name).
#include <string>

#include "dtperf/allreduce.hpp"
#include "dtperf/cluster.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/io/json_reader.hpp"
#include "dtperf/result.hpp"
#include "dtperf/workload.hpp"

namespace dtperf::io {

inline constexpr const char* kReportSchema = "dtperf.report/1";

Json cluster_json(const ClusterProfile& cluster, DType dtype);
Json model_json(const ModelSpec& model, const ComputeRequest& request, ComputeSource source);
Json allreduce_options_json(const AllReduceOptions& options);
Json iteration_json(const IterationResult& result);

/// "resnet50 (25.56 M parameters, 102.2 MB) on 8 x p3dn-24xlarge = 64 GPUs (fp32)".
std::string run_summary(const ClusterProfile& cluster, const ModelSpec& model, DType dtype);

/// Two tables: the time breakdown, then traffic and rates.
std::string iteration_tables(const IterationResult& result, const std::string& sample_unit);

}  // namespace dtperf::io
