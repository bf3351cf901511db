#pragma once
// Units. Every quantity in dtperf carries its unit in its name (`latency_s`,
// `bandwidth_bytes_per_s`, `nic_gbps`). Decimal prefixes are decimal and binary
// prefixes are binary, as nccl-tests counts them: GB = 1e9 bytes, GiB = 2^30 bytes,
// Gbps = 1e9 bits per second. Mixing them silently loses 7.4 % at the giga scale.

namespace dtperf::units {

inline constexpr double kB = 1e3;
inline constexpr double MB = 1e6;
inline constexpr double GB = 1e9;
inline constexpr double KiB = 1024.0;
inline constexpr double MiB = 1024.0 * 1024.0;
inline constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

inline constexpr double us = 1e-6;  // seconds per microsecond
inline constexpr double ms = 1e-3;  // seconds per millisecond

/// Gbit/s (line rate, decimal) to bytes per second.
constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }
/// Bytes per second to Gbit/s.
constexpr double bytes_per_s_to_gbps(double bytes_per_s) { return bytes_per_s * 8.0 / 1e9; }
/// GB/s (decimal, as nccl-tests prints busbw) to bytes per second.
constexpr double gb_per_s_to_bytes_per_s(double gb_per_s) { return gb_per_s * GB; }

}  // namespace dtperf::units
