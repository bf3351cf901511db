#pragma once
// Counts heap allocations made while a scope is active, to check that the evaluation
// paths allocate nothing. The counting operator new lives in alloc_counter.cpp.
#include <cstddef>

namespace dtperf::test {

std::size_t allocations_now();

/// allocations() returns how many heap allocations happened since construction.
class AllocationScope {
 public:
  AllocationScope() : start_(allocations_now()) {}
  std::size_t allocations() const { return allocations_now() - start_; }

 private:
  std::size_t start_;
};

}  // namespace dtperf::test
