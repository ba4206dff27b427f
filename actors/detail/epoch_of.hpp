#pragma once

// Internal to actors/: the epoch a protocol message is about, for the site
// of a fault plan's remote points.

#include <cstdint>
#include <type_traits>
#include <utility>

namespace epochrt::detail {

template <class T, class = void>
struct has_epoch : std::false_type {};

template <class T>
struct has_epoch<T, std::void_t<decltype(std::declval<const T&>().epoch)>>
  : std::true_type {};

/// `x.epoch` for messages that have one; -1 for the others.
template <class T>
int64_t epoch_of(const T& x) {
  if constexpr (has_epoch<T>::value)
    return x.epoch;
  else
    return -1;
}

} // namespace epochrt::detail
