#include "dtperf/cluster.hpp"

namespace dtperf {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(const std::string& name) {
  if (name == "fp32") return DType::fp32;
  if (name == "tf32") return DType::tf32;
  if (name == "fp16") return DType::fp16;
  if (name == "bf16") return DType::bf16;
  return std::nullopt;
}

}  // namespace dtperf
