#pragma once
// Files compiled into the binary by tools/embed_files.cpp (the built-in profiles).
#include <cstddef>
#include <span>

namespace dtperf {

struct EmbeddedFile {
  const char* name;      // base name, e.g. "dgx-a100.json"
  const char* contents;  // whole file
};

extern const EmbeddedFile builtin_profile_files[];
extern const std::size_t builtin_profile_files_count;

inline std::span<const EmbeddedFile> builtin_profiles_raw() {
  return {builtin_profile_files, builtin_profile_files_count};
}

}  // namespace dtperf
