// Raw calibration files (dtperf.calibration/1) and the profile `dtperf fit` builds from
// one, with no base profile (peaks from the measurements, or a refusal).
#include <cstdint>

#include "dtperf/error.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "dtperf/io/calibration_json.hpp"
#include "dtperf/io/json_reader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  try {
    const io::Json json = io::parse_json_text(fuzz::text_of(data, size), "fuzz.json");
    io::FitInputs inputs;
    inputs.raws.emplace_back("fuzz.json", io::parse_calibration(json, "fuzz.json"));
    io::FitSettings settings;
    settings.created = "2026-01-01";
    (void)io::build_calibrated_profile(inputs, settings);
  } catch (const InputError&) {
  }
  return 0;
}
