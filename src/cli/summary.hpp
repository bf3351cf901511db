#pragma once
// The header every predicting command prints (what was modelled, with which compute
// source and anchor) and the same facts as the start of its JSON report.
#include <optional>
#include <string>

#include "analysis_options.hpp"
#include "dtperf/io/json_reader.hpp"
#include "options.hpp"

namespace dtperf::cli {

std::string run_header(const char* command, const Loaded& loaded, const ComputeRequest& request,
                       const ModelOptions& options, const std::optional<AnchorResult>& anchored);

/// "# variable compute: ..." when compute varies, else "".
std::string variability_header(const Variability& v);
/// "# node-level gossip: ..." when it is on, else "".
std::string gossip_header(const GossipOptions& gossip);

/// The variable-compute settings (law, CV, slow ranks and nodes, iterations, seed), for
/// reports: a run with them is reproduced from the report alone. Null when compute does
/// not vary.
io::Json variability_settings_json(const Variability& v);

/// The report's start: schema, command, cluster, model, anchor and variable compute.
io::Json run_json(const char* command, const Loaded& loaded, const ComputeRequest& request,
                  const ModelOptions& options, const std::optional<AnchorResult>& anchored,
                  const Variability& variability);

}  // namespace dtperf::cli
