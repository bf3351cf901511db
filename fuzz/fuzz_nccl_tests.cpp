// nccl-tests logs (text tables or -J JSON), then what `dtperf fit` does with one: its
// measured series and a calibrated profile fitted to them.
#include <cstdint>

#include "dtperf/error.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/io/profile_json.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  try {
    io::NcclTestsLog log = io::parse_nccl_tests(fuzz::text_of(data, size), "fuzz.txt");
    if (log.nodes < 1) log.nodes = 1;
    io::FitInputs inputs;
    inputs.logs.emplace_back("fuzz.txt", std::move(log));
    io::FitSettings settings;
    settings.base = io::load_profile("dgx-h100");
    settings.created = "2026-01-01";
    (void)io::build_calibrated_profile(inputs, settings);
  } catch (const InputError&) {
  }
  return 0;
}
