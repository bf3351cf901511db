#pragma once
// The compute model refuses a model it cannot time (no FLOPs, no measurement) with
// std::invalid_argument; for the reports that is bad input, named by the model as given.
#include <stdexcept>
#include <string>

#include "dtperf/error.hpp"

namespace dtperf {

/// `f()`, its std::invalid_argument an InputError on `model_source` (the model as given).
template <typename F>
auto checked_model(const std::string& model_source, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw InputError(model_source, "", e.what());
  }
}

}  // namespace dtperf
