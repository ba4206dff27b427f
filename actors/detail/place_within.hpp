#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

namespace epochrt::detail {

/// Places a span that a node reported as `offset_us` after `from`, lasting
/// `duration_us`, inside [from, to]: returns its start and end. The numbers
/// come from another process; whatever they say (negative, past the end,
/// near INT64_MAX), the result stays inside the interval and no time point
/// overflows.
template <class TimePoint>
std::pair<TimePoint, TimePoint> place_within(TimePoint from, TimePoint to,
                                             int64_t offset_us,
                                             int64_t duration_us) {
  using us = std::chrono::microseconds;
  auto span
    = std::max<int64_t>(0, std::chrono::duration_cast<us>(to - from).count());
  auto offset = std::clamp<int64_t>(offset_us, 0, span);
  auto duration = std::clamp<int64_t>(duration_us, 0, span - offset);
  auto start = from + us{offset};
  return {start, start + us{duration}};
}

} // namespace epochrt::detail
