#pragma once
// The limits every input is checked against (command line and files alike), so that an
// absurd but well-formed input is refused with a message naming the limit rather than
// answered with overflowed integers or unbounded time and memory. docs/MANUAL.md
// ("Limits") lists them.
#include <cstdint>

namespace dtperf::limits {

inline constexpr std::int64_t kMaxNodes = 1'048'576;      // 2^20
inline constexpr std::int64_t kMaxGpusPerNode = 1'024;    // also NICs per node
inline constexpr std::int64_t kMaxGpus = 1'048'576;       // nodes x GPUs per node
inline constexpr std::int64_t kMaxInnerSteps = 1'000'000;  // local SGD's H, fragments
inline constexpr std::int64_t kMaxAccumulationSteps = 1'000'000;  // gradient accumulation micro-steps
inline constexpr std::int64_t kMaxCount = 2'147'483'647;  // any other count (runs, iterations)
inline constexpr std::int64_t kMaxParams = 1'000'000'000'000'000;  // parameters of one tensor
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;    // one message (1 PiB)
inline constexpr std::int64_t kMaxFileBytes = std::int64_t{256} << 20;  // any input file
inline constexpr double kMinMagnitude = 1e-300;          // below: refused (subnormal numbers)
inline constexpr double kMaxGbps = 1e6;                  // per NIC, Gbit/s
inline constexpr double kMaxGBps = 1e6;                  // intra-node, GB/s
inline constexpr double kMaxLatencyUs = 1e7;             // 10 s
inline constexpr double kMaxTimeMs = 1e7;                // 2.8 hours per iteration
inline constexpr double kMaxSamples = 1e9;
inline constexpr double kMaxMiB = 1e6;                   // buckets
inline constexpr double kMaxFactor = 1e3;                // slow ranks and nodes
// Models by size (gpt:, llama:): with these the largest tensor (10^6 x 8 x 10^6, or
// 10^8 x 10^6) stays below kMaxParams and a whole model's count (10^4 layers of at most
// 3 x 8 x 10^12 + 4 x 10^12 parameters) within int64.
inline constexpr std::int64_t kMaxLayers = 10'000;
inline constexpr std::int64_t kMaxWidth = 1'000'000;      // model width, heads; FFN up to 8 x this
inline constexpr std::int64_t kMaxTokens = 100'000'000;   // context, vocabulary

}  // namespace dtperf::limits
