#pragma once
// The model the engine tests derive timelines for by hand.
#include <string>

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/workload.hpp"

namespace dtperf::test {

// `count` tensors of 10 MB (2.5 M fp32 params), each with 10 ms of measured backward.
inline ModelSpec ten_mb_tensors(int count) {
  ModelSpec m;
  m.name = "toy";
  for (int i = 0; i < count; ++i) {
    TensorSpec t;
    t.name = "t";
    t.name += std::to_string(i);
    t.params = 2'500'000;
    t.measured_backward_s = 10e-3;
    m.tensors.push_back(t);
  }
  return m;
}

// One tensor of 10 MB (2.5 M fp32 params) with 10 ms of measured backward; forward is
// then half of it, 5 ms.
inline ModelSpec one_tensor() { return ten_mb_tensors(1); }

// Two nodes of one GPU joined by one NIC of `nic_bytes_per_s`, no latency.
inline NetworkParams two_single_gpu_nodes(double nic_bytes_per_s) {
  NetworkParams n;
  n.nodes = 2;
  n.gpus_per_node = 1;
  n.intra_bytes_per_s = 100e9;
  n.nics_per_node = 1;
  n.nic_line_bytes_per_s = nic_bytes_per_s;
  return n;
}

// No dispatch floor and memory at 1 TB/s: an SGD step over 10 MB is 3 passes = 30 us.
inline ComputeParams fast_memory() {
  ComputeParams c;
  c.kernel_overhead_s = 0.0;
  c.memory_bytes_per_s = 1e12;
  return c;
}

}  // namespace dtperf::test
