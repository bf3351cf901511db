#pragma once
// The two ways dtperf-calibrate fails. UsageError: the command line or its environment is
// wrong (exit code 2). CalibrationError: a measurement could not be made (a peer vanished,
// a CUDA or NCCL call failed, a file could not be written; exit code 1). Both carry one
// message that names what was wrong.
#include <stdexcept>
#include <string>

namespace dtperf::calibrate {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

class CalibrationError : public std::runtime_error {
 public:
  explicit CalibrationError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace dtperf::calibrate
