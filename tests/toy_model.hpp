#pragma once
// The model the engine tests derive timelines for by hand.
#include "dtperf/workload.hpp"

namespace dtperf::test {

// One tensor of 10 MB (2.5 M fp32 params) with 10 ms of measured backward; forward is
// then half of it, 5 ms.
inline ModelSpec one_tensor() {
  ModelSpec m;
  m.name = "toy";
  TensorSpec t;
  t.name = "w";
  t.params = 2'500'000;
  t.measured_backward_s = 10e-3;
  m.tensors.push_back(t);
  return m;
}

}  // namespace dtperf::test
