#pragma once

#include <chrono>

namespace epochrt::detail {

/// A timeout at least this long means "never": no timer is armed, and a
/// wait is clamped to it. Time points a century ahead of now still fit the
/// steady clock's nanoseconds, where milliseconds::max() would overflow.
constexpr std::chrono::milliseconds never = std::chrono::hours(24 * 365 * 100);

/// `timeout` plus the margin a requester waits beyond the timeout of the
/// work it asked for, so that the inner timeout is what gets reported.
/// Saturates: a host that passes milliseconds::max() as "practically never"
/// must not wrap around into an immediate timeout.
inline std::chrono::milliseconds
with_margin(std::chrono::milliseconds timeout) {
  constexpr std::chrono::milliseconds margin = std::chrono::seconds(30);
  if (timeout > std::chrono::milliseconds::max() - margin)
    return std::chrono::milliseconds::max();
  return timeout + margin;
}

} // namespace epochrt::detail
