// Deterministic random numbers: the same seed gives the same numbers with any compiler and
// standard library (std::uniform_*_distribution is implementation-defined, so we map the
// raw 64-bit output ourselves).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace wulf {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t next() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias is below 2^-32
  // for the n used here).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(engine_()) * n) >> 64);
  }
  // A stream for a sub-task (rank, class, ...) that does not overlap this one's use.
  Rng split(std::uint64_t salt) const { return Rng(mix(seed_of_engine() ^ mix(salt + 1))); }

  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {  // splitmix64 finaliser
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t seed_of_engine() const {
    std::mt19937_64 copy = engine_;
    return copy();
  }
  std::mt19937_64 engine_;
};

}  // namespace wulf
