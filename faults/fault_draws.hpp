#pragma once

#include <cstdint>

namespace epochrt {

/// Successive pseudo-random numbers from a seed (splitmix64): the draws of
/// a fault plan — whether a rule strikes, which byte a corruption flips,
/// which cases a sweep samples — the same on every run and every machine.
/// A value type; not thread-safe.
class fault_draws {
public:
  explicit fault_draws(uint64_t seed) noexcept : state_(seed) {}

  uint64_t next() noexcept {
    auto z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// A number below `n`. Precondition: n > 0.
  uint64_t below(uint64_t n) noexcept {
    return next() % n;
  }

private:
  uint64_t state_;
};

} // namespace epochrt
