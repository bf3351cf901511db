#pragma once
// What every fuzz target shares: the input as text, and the one rule they check. A
// parser given any bytes either returns a value or throws dtperf::InputError; anything
// else (another exception, a crash, a sanitizer report, a hang) is a finding. libFuzzer
// aborts on an uncaught exception, so targets only catch InputError.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dtperf::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace dtperf::fuzz
