#pragma once
// dtperf's version: reports, profiles' provenance and raw calibration files name it.
// The one place it is written besides meson.build's project(), which checks the two agree.
namespace dtperf {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace dtperf
