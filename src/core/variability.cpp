#include "dtperf/variability.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "dtperf/limits.hpp"
#include "splitmix.hpp"

namespace dtperf {

std::vector<double> persistent_factors(const Variability& v, int ranks, int ranks_per_node) {
  std::vector<double> f(static_cast<std::size_t>(ranks), 1.0);
  for (const auto& [node, factor] : v.slow_nodes) {
    for (int r = node * ranks_per_node; r < (node + 1) * ranks_per_node && r < ranks; ++r) {
      f[static_cast<std::size_t>(r)] *= factor;
    }
  }
  for (const auto& [rank, factor] : v.slow_ranks) {
    if (rank >= 0 && rank < ranks) f[static_cast<std::size_t>(rank)] *= factor;
  }
  return f;
}

namespace {

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kNormalFloor = 0.05;  // a normal draw never makes compute faster than 5 %

}  // namespace

NoiseStream::NoiseStream(const Variability& v, int ranks, int ranks_per_node)
    : v_(v), persistent_(persistent_factors(v, ranks, ranks_per_node)) {
  std::uint64_t seed = v.seed;
  for (auto& word : state_) word = splitmix64(seed);
  const double variance = std::log(1.0 + v.cv * v.cv);
  log_sigma_ = std::sqrt(variance);
  log_mu_ = -0.5 * variance;  // so that the lognormal has mean 1
}

namespace {

// xoshiro256** (Blackman and Vigna), its state in registers while a row of draws runs.
struct Xoshiro256 {
  std::uint64_t s[4];
  std::uint64_t bits() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  double uniform() { return (static_cast<double>(bits() >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
};

// The ziggurat of Marsaglia and Tsang (2000), 256 layers of equal area kArea under
// f(x) = exp(-x^2 / 2) (unnormalised), the base layer including the tail beyond kRight.
constexpr int kLayers = 256;
constexpr double kRight = 3.6541528853610088;
constexpr double kArea = 4.92867323399e-3;

struct Ziggurat {
  double x[kLayers + 1];      // x[0] > x[1] = kRight > ... > x[256] = 0
  double ratio[kLayers];      // x[i+1] / x[i]: the part of layer i surely under f
  double f[kLayers + 1];      // f(x[i])
  Ziggurat() {
    const auto density = [](double v) { return std::exp(-0.5 * v * v); };
    x[0] = kArea / density(kRight);
    x[1] = kRight;
    for (int i = 1; i < kLayers - 1; ++i) x[i + 1] = std::sqrt(-2.0 * std::log(kArea / x[i] + density(x[i])));
    x[kLayers] = 0.0;
    for (int i = 0; i < kLayers; ++i) ratio[i] = x[i + 1] / x[i];
    for (int i = 0; i <= kLayers; ++i) f[i] = density(x[i]);
  }
};

const Ziggurat& ziggurat() {
  static const Ziggurat table;
  return table;
}

double standard_normal_of(Xoshiro256& g, const Ziggurat& z) {
  for (;;) {
    const std::uint64_t r = g.bits();
    const int i = static_cast<int>(r & (kLayers - 1));
    const double u = 2.0 * ((static_cast<double>(r >> 11) + 0.5) * 0x1.0p-53) - 1.0;  // in (-1, 1)
    if (std::abs(u) < z.ratio[i]) return u * z.x[i];  // inside the layer's rectangle
    if (i == 0) {
      // The tail beyond kRight (Marsaglia's exponential method).
      double tail = 0.0;
      double y = 0.0;
      do {
        tail = -std::log(g.uniform()) / kRight;
        y = -std::log(g.uniform());
      } while (y + y < tail * tail);
      return u > 0.0 ? kRight + tail : -(kRight + tail);
    }
    const double candidate = u * z.x[i];
    if (z.f[i + 1] + g.uniform() * (z.f[i] - z.f[i + 1]) < std::exp(-0.5 * candidate * candidate)) return candidate;
  }
}

Xoshiro256 load(const std::uint64_t (&state)[4]) { return {{state[0], state[1], state[2], state[3]}}; }

void store(const Xoshiro256& g, std::uint64_t (&state)[4]) { std::copy(g.s, g.s + 4, state); }

}  // namespace

std::uint64_t NoiseStream::bits() {
  Xoshiro256 g = load(state_);
  const std::uint64_t r = g.bits();
  store(g, state_);
  return r;
}

double NoiseStream::uniform() {
  Xoshiro256 g = load(state_);
  const double u = g.uniform();
  store(g, state_);
  return u;
}

double NoiseStream::standard_normal() {
  Xoshiro256 g = load(state_);
  const double x = standard_normal_of(g, ziggurat());
  store(g, state_);
  return x;
}

double test_standard_normal(NoiseStream& stream) { return stream.standard_normal(); }

double NoiseStream::factor_of_normal(double x) const {
  return v_.law == NoiseLaw::normal ? std::max(kNormalFloor, 1.0 + v_.cv * x) : std::exp(log_mu_ + log_sigma_ * x);
}

double NoiseStream::draw() {
  switch (v_.law) {
    case NoiseLaw::none: return 1.0;
    case NoiseLaw::normal:
    case NoiseLaw::lognormal: return v_.cv == 0.0 ? 1.0 : factor_of_normal(standard_normal());
    case NoiseLaw::empirical: {
      const auto n = v_.empirical_factors.size();
      const auto i = std::min(n - 1, static_cast<std::size_t>(uniform() * static_cast<double>(n)));
      return v_.empirical_factors[i];
    }
  }
  return 1.0;
}

void NoiseStream::next(std::span<double> factors) {
  const double* persistent = persistent_.data();
  if ((v_.law == NoiseLaw::normal || v_.law == NoiseLaw::lognormal) && v_.cv != 0.0) {
    // draw()'s arithmetic with the generator's state in registers for the whole row: the
    // same draws in the same order, so the same factors.
    Xoshiro256 g = load(state_);
    const Ziggurat& z = ziggurat();
    for (std::size_t r = 0; r < factors.size(); ++r) factors[r] = persistent[r] * factor_of_normal(standard_normal_of(g, z));
    store(g, state_);
    return;
  }
  for (std::size_t r = 0; r < factors.size(); ++r) factors[r] = persistent[r] * draw();
}

double SimulationWork::most_measured_iterations(double limit) const {
  const double room = std::floor(limit / rank_steps_per_iteration()) - (iterations - measured_iterations);
  return std::max(0.0, period * std::floor(room / period));
}

double SimulationWork::estimated_s_per_iteration() const {
  const double bucket_s = rounds_per_bucket <= 0.0
                              ? limits::kSimulationAllReduceBucketS
                              : limits::kSimulationGossipBucketS + (rounds_per_bucket - 1.0) * limits::kSimulationRoundS;
  const double cache = ranks <= limits::kSimulationCachedRanks ? 1.0 : limits::kSimulationUncachedFactor;
  return cache * ranks * (limits::kSimulationRankIterationS + buckets * bucket_s);
}

std::pair<double, double> normal_maximum_moments(int n) {
  // E[M^k] = integral of x^k n phi(x) Phi(x)^(n-1) dx, Simpson's rule on [-12, 12].
  const int steps = 24000;
  const double low = -12.0;
  const double h = 24.0 / steps;
  double m1 = 0.0;
  double m2 = 0.0;
  for (int i = 0; i <= steps; ++i) {
    const double x = low + i * h;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double density = n * phi * std::pow(cdf, n - 1);
    const double weight = (i == 0 || i == steps) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    m1 += weight * x * density;
    m2 += weight * x * x * density;
  }
  m1 *= h / 3.0;
  m2 *= h / 3.0;
  return {m1, std::sqrt(std::max(0.0, m2 - m1 * m1))};
}

}  // namespace dtperf
