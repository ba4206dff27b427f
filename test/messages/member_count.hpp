#pragma once

// The number of members of an aggregate, found by the compiler: the largest
// N for which `T{x1, ..., xN}` compiles, each x converting to any type. The
// guard that a member added to a message struct but not to its list
// (message_fields.hpp) does not cross the wire unseen.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace epochrt::test {

namespace detail {

// Converts to any member type (never evaluated).
struct any_member {
  template <class T>
  operator T() const;
};

template <class T, class Indices, class = void>
struct brace_constructible : std::false_type {};

template <class T, size_t... Is>
struct brace_constructible<
  T, std::index_sequence<Is...>,
  std::void_t<decltype(T{(static_cast<void>(Is), any_member{})...})>>
  : std::true_type {};

template <class T, size_t N>
constexpr size_t member_count_from() {
  if constexpr (N == 0)
    return 0;
  else if constexpr (brace_constructible<T, std::make_index_sequence<N>>::value)
    return N;
  else
    return member_count_from<T, N - 1>();
}

} // namespace detail

/// The members of aggregate `T` (at most 32).
template <class T>
constexpr size_t member_count() {
  static_assert(std::is_aggregate_v<T>, "member_count needs an aggregate");
  return detail::member_count_from<T, 32>();
}

} // namespace epochrt::test
