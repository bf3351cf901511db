#pragma once
// The limits every input is checked against (command line and files alike), so that an
// absurd but well-formed input is refused with a message naming the limit rather than
// answered with overflowed integers or unbounded time and memory. docs/MANUAL.md
// ("Limits") lists them.
#include <cstdint>
#include <limits>

namespace dtperf::limits {

/// An interval a read number must lie in: [low, high], or (low, high] when low_open.
/// The generic ones (positive, fraction...) describe themselves; the physical ones below
/// print as their bounds. Every reader (options, profiles, runs, models, calibration and
/// nccl-tests files) checks through one of these, so a flag and a file key of the same
/// quantity share their range.
struct Range {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  bool low_open = false;
  const char* description = nullptr;  // "a positive number"; nullptr: "a number from LOW to HIGH"

  constexpr bool contains(double x) const {
    return (low_open ? x > low : x >= low) && x <= high;  // false for NaN
  }

  static const Range any;
  static const Range positive;      // > 0
  static const Range non_negative;  // >= 0
  static const Range fraction;      // in (0, 1]
  static const Range at_least_one;  // >= 1
};

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
inline constexpr Range Range::any{-kInfinity, kInfinity, false, "a number"};
inline constexpr Range Range::positive{0.0, kInfinity, true, "a positive number"};
inline constexpr Range Range::non_negative{0.0, kInfinity, false, "a number >= 0"};
inline constexpr Range Range::fraction{0.0, 1.0, true, "a fraction in (0, 1]"};
inline constexpr Range Range::at_least_one{1.0, kInfinity, false, "a number >= 1"};

inline constexpr std::int64_t kMaxNodes = 1'048'576;      // 2^20
inline constexpr std::int64_t kMaxGpusPerNode = 1'024;    // also NICs per node
inline constexpr std::int64_t kMaxGpus = 1'048'576;       // nodes x GPUs per node
inline constexpr std::int64_t kMaxInnerSteps = 1'000'000;  // local SGD's H, fragments
inline constexpr std::int64_t kMaxAccumulationSteps = 1'000'000;  // gradient accumulation micro-steps
inline constexpr std::int64_t kMaxCount = 2'147'483'647;  // any other count (runs, iterations)
inline constexpr std::int64_t kMaxParams = 1'000'000'000'000'000;  // parameters of one tensor
// Parameters of a whole model: 10^17 (50,000 x the largest trained, ~2 x 10^12), so that
// bytes at 16 per parameter (1.6 x 10^18) stay within int64 and every sum over tensors too.
inline constexpr std::int64_t kMaxModelParams = 100'000'000'000'000'000;
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;    // one message (1 PiB)
inline constexpr std::int64_t kMaxFileBytes = std::int64_t{256} << 20;  // any input file
inline constexpr double kMinMagnitude = 1e-300;          // below: refused (subnormal numbers)
inline constexpr double kMaxFactor = 1e3;                // slow ranks and nodes
// Variable compute simulates every rank (variability.hpp): at most 2^17 = 131,072 ranks,
// above the largest clusters trained on so far (about 100,000 GPUs), and at most 2^31
// rank-steps per simulation (SimulationWork: ranks x buckets x steps per bucket x
// iterations). Measured on one core of the 2-core development VM, a rank-step took 0.85
// ns while the state fits in cache (GPT-2 XL on 1,024 GPUs: ring, exponential graph) and
// 2.5-6 ns at 131,072 ranks (ResNet-50, 1,000 iterations: All-Reduce 2.2, ring 2.7,
// one-peer-exp 3.2, random matching 4.4, SGP's push 4.0 counting its send and receive):
// the limit keeps each simulation within about 10 s there (docs/MANUAL.md, "Limits"). At
// 1,048,576 ranks the same runs took 13-183 s and up to 1.7 GB.
inline constexpr std::int64_t kMaxVariableRanks = 131'072;
inline constexpr double kMaxRankSteps = 2'147'483'648.0;
// `topologies --schedule` lists every group of every step: at 65,536 GPUs (8 per node) a
// 183 MB file written in 3.5 s with 0.7 GB of memory, at 262,144 an 817 MB file in 16 s
// and 2.9 GB, at 1,048,576 over 60 s and 9 GB (2-core development VM, 2026-11-30). A
// schedule is for an implementation to run the same groups; beyond 65,536 GPUs it is
// refused up front (the table, periods and spectral gaps, stays available to the limit).
inline constexpr std::int64_t kMaxScheduleGpus = 65'536;
// A command's variable-compute simulations together (compare's schemes; advise's schemes,
// its factor attribution and its compute-CV search, advice.cpp, check_simulation_budget;
// its node and NIC-rate searches are held to their own limits): at most
// kMaxCommandSimulationS seconds as SimulationWork::estimated_s prices them on the
// reference core (one core of the 2-core development VM). Its rates, per simulated
// iteration, from `dtperf predict --compute-cv 0.1 --sim-iterations` 20 and 80 (the
// difference over 60 iterations), ResNet-50 (4-5 buckets) and GPT-2 XL (145 buckets) on
// dgx-h100 nodes, 2026-11-29:
//  - a rank's compute factor drawn and its iteration closed: 8 ns (All-Reduce at 131,072
//    ranks, 1.5 ms per iteration with 5 buckets and 13.5 ms with 145);
//  - All-Reduce per rank and bucket: 0.65 ns (16,384 and 131,072 ranks, GPT-2 XL);
//  - a gossip bucket per rank (its compute pass and its first exchange round) up to
//    16,384 ranks: ring 2.4, complete 2.4, alternating-exp-ring 2.8, SGP's push (send and
//    receive) 3.9 ns; each further round of pairs 0.2 ns (exponential graph, 10 rounds:
//    4.4 ns per bucket; torus, 4 rounds: 3.5 ns);
//  - at 131,072 ranks the per-rank state leaves the cache: ring 2.4, complete 2.8,
//    alternating-exp-ring 4.2, SGP's push 10 ns per bucket, the exponential graph (17
//    rounds) 7.2 ns.
// The estimate takes 10 ns per rank, 1 ns per All-Reduce bucket, 3 ns per gossip bucket
// and 0.3 ns per further round, twice as much beyond 16,384 ranks: from 2.7x high (ring at
// 131,072 ranks) to 30 % low (SGP's push there) on the cases above.
inline constexpr double kMaxCommandSimulationS = 10.0;
inline constexpr double kSimulationRankIterationS = 10e-9;
inline constexpr double kSimulationAllReduceBucketS = 1e-9;
inline constexpr double kSimulationGossipBucketS = 3e-9;
inline constexpr double kSimulationRoundS = 0.3e-9;
inline constexpr double kSimulationCachedRanks = 16'384.0;
inline constexpr double kSimulationUncachedFactor = 2.0;

// A fit to measured runs (fit_runs.cpp): its evaluations (every distinct configuration
// predicted at one set of parameters) at most kMaxFitS seconds as the reference core
// would take them, shared over the threads that make them (the configurations of one
// evaluation; the held-out refits, one per thread). Its rates, from the fits of 300 runs
// per scheme (ResNet-50 on p3dn-24xlarge, 2 to 32 nodes, each run its own configuration;
// `dtperf fit --runs F --profile p3dn-24xlarge --model resnet50 --no-leave-one-out`,
// user time on the 2-core development VM, all in one sitting, 2026-11-30), by least
// squares of the relative error on the counted work of each scheme's fit:
//  - an All-Reduce, sharded or local-SGD prediction (closed forms): 1.9 us;
//  - a gossip prediction's set-up and results: 3.7 us;
//  - each iteration it simulates: 142 ns (whatever its rank classes);
//  - and per rank class, bucket and simulated iteration, each exchange the class takes
//    part in: 11.7 ns.
// On the ten fits (All-Reduce, complete, one-peer-exp, exponential, torus, ring,
// alternating-exp-ring, SGP, D-PSGD, random matching) the estimate is 0.71x
// (exponential) to 1.25x (D-PSGD) the time taken; on three draws it was not fitted on
// (ring, torus and alternating-exp-ring, other seeds) 0.87-0.93x. A rate per rank class
// and bucket beside the exchanges' came out at 0, and without the rate per iteration
// the held-out draws read 0.70-0.90x. The VM's own speed moves the figures by as much:
// the same fits had taken 1.2-1.5x less time earlier that day.
inline constexpr double kMaxFitS = 10.0;
inline constexpr double kFitClosedFormPredictionS = 1.9e-6;
inline constexpr double kFitGossipPredictionS = 3.7e-6;
inline constexpr double kFitIterationS = 142e-9;
inline constexpr double kFitExchangeSlotS = 11.7e-9;

// Physical quantities, wherever they are read. Each range is wide enough for any cluster
// built or announced, and narrow enough that every product the model forms (bytes / rate,
// time x batch ratio) stays a finite double.
//
// One NIC's line rate, Gbit/s: 1 Mbit/s (below any Ethernet a cluster has used; 10 Mbit/s
// Ethernet dates from 1983) to 100 Tbit/s (125 x the fastest NIC sold, 800 Gbit/s).
inline constexpr Range kNicGbps{1e-3, 1e5};
// A per-GPU rate in GB/s (intra-node link, memory, copy bandwidth of a profile): 1 MB/s
// to 100 TB/s (HBM3e: 8 TB/s; NVLink 5: 900 GB/s per direction).
inline constexpr Range kGBps{1e-3, 1e5};
// One GPU's peak, TFLOP/s: 1 MFLOP/s to 1 EFLOP/s (B200 dense FP4: 9 PFLOP/s).
inline constexpr Range kTflops{1e-6, 1e6};
// A latency or a fixed cost, us: 0 to 10 s.
inline constexpr Range kLatencyUs{0.0, 1e7};
// An achieved / peak ratio: one millionth to all of it.
inline constexpr Range kEfficiency{1e-6, 1.0};
// A measured duration, ms: 1 ns (one GPU clock is 0.5-1 ns) to 10^7 ms (2.8 hours per
// iteration); and the same in us.
inline constexpr Range kTimeMs{1e-6, 1e7};
inline constexpr Range kTimeUs{1e-3, 1e10};
// A duration that may be zero (an optimizer step, exposed communication), ms and us.
inline constexpr Range kTimeOrZeroMs{0.0, 1e7};
inline constexpr Range kTimeOrZeroUs{0.0, 1e10};
// Samples per GPU (or per cluster): 10^-6 (one sample shared by the 2^20 GPUs of the GPU
// limit is 9.5 x 10^-7 per GPU, and is computed, never read) to 10^9.
inline constexpr Range kSamples{1e-6, 1e9};
// Bucket sizes, MiB: one byte to 10^6 MiB.
inline constexpr Range kBucketMiB{1.0 / 1048576.0, 1e6};
// A GPU's memory, GiB: 1 MiB to 1 PiB.
inline constexpr Range kMemoryGiB{1.0 / 1024.0, 1024.0 * 1024.0};
// Host CPU time per byte moved, ns: 0 to 10^6 (1 kB/s).
inline constexpr Range kNsPerByte{0.0, 1e6};
// A share of something, 0 to 1 (all of it).
inline constexpr Range kShare{0.0, 1.0};
// A slow-down while another stream runs beside (contention): 1 to 10.
inline constexpr Range kInterference{1.0, 10.0};
// A GEMM's work, GFLOP: one FLOP to 10^18.
inline constexpr Range kWorkGflop{1e-9, 1e9};
// A message size read from a file, bytes: one byte (or none) to kMaxBytes (1 PiB).
inline constexpr Range kBytes{1.0, static_cast<double>(kMaxBytes)};
inline constexpr Range kBytesOrZero{0.0, static_cast<double>(kMaxBytes)};
// A fitted compute scale (fitted / datasheet time): 10^-6 to 10^6.
inline constexpr Range kScale{1e-6, 1e6};
// The longest time a prediction may report, s: 10^18 (twice the age of the universe).
// Not a physical bound but what a report can carry: in us it is still far from a double's
// range after the simulations sum it over their iterations.
inline constexpr double kMaxPredictedS = 1e18;
// A gradient compression ratio: none to 10^6 (a 1-bit sign of a 4-byte gradient is 32).
inline constexpr Range kCompression{1.0, 1e6};
// The coefficient of variation of a rank's compute time: 0 to 10.
inline constexpr Range kComputeCv{0.0, 10.0};
// Models by size (gpt:, llama:): with these the largest tensor (10^6 x 8 x 10^6, or
// 10^8 x 10^6) stays below kMaxParams and a whole model's count (10^4 layers of at most
// 3 x 8 x 10^12 + 4 x 10^12 parameters) within int64.
inline constexpr std::int64_t kMaxLayers = 10'000;
inline constexpr std::int64_t kMaxWidth = 1'000'000;      // model width, heads; FFN up to 8 x this
inline constexpr std::int64_t kMaxTokens = 100'000'000;   // context, vocabulary
// Tensors of one model read from a file (a layer file or a per-layer log): 2^18 =
// 262,144. That is 5 x the ~45,000 of the largest published model kept tensor by tensor
// (DeepSeek-V3, arXiv 2412.19437: 58 MoE layers x 257 experts x 3 matrices) and above the
// 90,003 of the largest model by size (10,000 layers of 9). Every prediction walks the
// tensors, so the count also bounds how long advise's searches take (docs/MANUAL.md).
inline constexpr std::int64_t kMaxTensors = 262'144;

}  // namespace dtperf::limits
