#pragma once
// Cluster profiles as JSON (schema "dtperf.profile/1"); profiles/README.md documents
// every field with its unit and default. Parsing is strict: a missing required field,
// a wrong type, a value out of range or an unknown key is an InputError at its JSON
// pointer.
#include <string>
#include <vector>

#include "dtperf/cluster.hpp"
#include "dtperf/io/json_reader.hpp"

namespace dtperf::io {

inline constexpr const char* kProfileSchema = "dtperf.profile/1";

ClusterProfile parse_profile(const Json& json, const std::string& file);
Json profile_to_json(const ClusterProfile& profile);

/// The built-in profiles (compiled in from profiles/*.json), sorted by name.
const std::vector<ClusterProfile>& builtin_profiles();

/// A built-in profile by name, or a profile file by path (anything containing '/' or
/// ending in ".json"). Unknown names fail with the list of built-ins and a suggestion.
ClusterProfile load_profile(const std::string& name_or_path);

}  // namespace dtperf::io
