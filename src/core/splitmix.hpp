#pragma once
// splitmix64 (Steele, Lea, Flood 2014): the engine's seeding and shuffling generator,
// the same on every platform (the standard library's distributions are not).
#include <cstdint>

namespace dtperf {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace dtperf
