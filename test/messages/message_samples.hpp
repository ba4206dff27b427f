#pragma once

// Every message type of epochrt (messages/message_list.hpp), and a sample of
// each built from its fields (message_fields.hpp): a new message type is
// tested by the suites that walk these with nothing more to write.
//
// A sample sets every field away from its default (a field that came back
// defaulted would otherwise look unchanged) and, where its type allows, to
// a value no other field of the sample has (two fields swapped on the wire
// would otherwise look unchanged). Vectors and maps are non-empty, numbers use
// their high bits, strings hold bytes that text handling could mangle, and
// tensors include both payloads at once, none, a scalar and one large enough to
// span many of the middleman's reads.

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/messages/message_list.hpp>

namespace epochrt::test {

template <class T>
struct type_tag {
  using type = T;
};

namespace detail {

template <class Tuple>
struct drop_first;

template <class First, class... Ts>
struct drop_first<std::tuple<First, Ts...>> {
  using type = std::tuple<Ts...>;
};

} // namespace detail

#define EPOCHRT_TEST_LIST_TYPE(...) , EPOCHRT_PP_FIRST(__VA_ARGS__)

/// Every message type, in the order of EPOCHRT_ALL_MESSAGES.
using all_message_types = typename detail::drop_first<
  std::tuple<void EPOCHRT_ALL_MESSAGES(EPOCHRT_TEST_LIST_TYPE)>>::type;

#undef EPOCHRT_TEST_LIST_TYPE

namespace detail {

template <class Tuple>
struct each_type;

template <class... Ts>
struct each_type<std::tuple<Ts...>> {
  template <class F>
  static void apply(F& f) {
    (f(type_tag<Ts>{}), ...);
  }
};

} // namespace detail

/// Calls `f(type_tag<T>{})` for every T of `Tuple`, in order.
template <class Tuple, class F>
void for_each_type(F&& f) {
  detail::each_type<Tuple>::apply(f);
}

/// The actor handles samples carry. Across processes: one of an actor in
/// this process, which the peer sees as a proxy, and one of an actor in the
/// peer, which this process sees as a proxy, so that both directions of
/// handle translation cross.
struct sample_handles {
  caf::actor local;
  caf::actor remote;
};

/// Builds samples. Each value it makes differs from every other it made.
class sample_maker {
public:
  explicit sample_maker(sample_handles handles) : handles_(std::move(handles)) {
    // nop
  }

  template <class T>
  T make() {
    ++serial_;
    if constexpr (std::is_same_v<T, bool>) {
      // (A bool member of a struct is set to the opposite of its default.)
      return true;
    } else if constexpr (std::is_enum_v<T>) {
      // Every enum of a message has a value 1 that is not its default.
      return static_cast<T>(1);
    } else if constexpr (std::is_integral_v<T>) {
      return make_integer<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(-0.25 - static_cast<double>(serial_));
    } else if constexpr (std::is_same_v<T, std::string>) {
      return tricky_text() + "#" + std::to_string(serial_);
    } else if constexpr (std::is_same_v<T, std::vector<char>>) {
      auto bytes = tricky_bytes();
      bytes.push_back(static_cast<char>(serial_));
      return bytes;
    } else if constexpr (std::is_same_v<T, tensor>) {
      return make_tensor_sample();
    } else if constexpr (std::is_same_v<
                           T, caf::actor> || is_typed_actor<T>::value) {
      return caf::actor_cast<T>(serial_ % 2 == 0 ? handles_.local
                                                 : handles_.remote);
    } else if constexpr (std::is_same_v<T, caf::message>) {
      // What an exchange_forward or exchange_relayed carries.
      if (serial_ % 2 == 0)
        return caf::make_message(make<exchange_put>());
      return caf::make_message(make<exchange_part>());
    } else {
      return make_struct<T>();
    }
  }

private:
  template <class T>
  struct is_typed_actor : std::false_type {};

  template <class... Sigs>
  struct is_typed_actor<caf::typed_actor<Sigs...>> : std::true_type {};

  template <class T>
  struct is_vector : std::false_type {};

  template <class T>
  struct is_vector<std::vector<T>> : std::true_type {};

  template <class T>
  struct is_map : std::false_type {};

  template <class V>
  struct is_map<std::map<std::string, V>> : std::true_type {};

  template <class T>
  T make_struct() {
    if constexpr (is_vector<T>::value) {
      // Two elements near the top, one deeper down: a job's groups hold
      // tasks that hold steps that hold ops, and the sample stays small.
      T result;
      auto n = depth_ < 3 ? 2 : 1;
      ++depth_;
      for (int i = 0; i < n; ++i)
        result.push_back(make<typename T::value_type>());
      --depth_;
      return result;
    } else if constexpr (is_map<T>::value) {
      T result;
      ++depth_;
      for (int i = 0; i < 2; ++i)
        result.emplace(make<std::string>(), make<typename T::mapped_type>());
      --depth_;
      return result;
    } else {
      T result{};
      ++depth_;
      message_fields<T>::for_each([&](const char*, auto member) {
        using field_type = std::decay_t<decltype(result.*member)>;
        if constexpr (std::is_same_v<field_type, bool>)
          result.*member = !(result.*member);
        else
          result.*member = make<field_type>();
      });
      --depth_;
      return result;
    }
  }

  template <class T>
  T make_integer() {
    using limits = std::numeric_limits<T>;
    auto n = static_cast<T>(serial_ % 64);
    // High bits set: the top of the range, or its bottom for signed types.
    if constexpr (std::is_signed_v<T>)
      return serial_ % 2 == 0 ? static_cast<T>(limits::max() - n)
                              : static_cast<T>(limits::min() + n);
    else
      return static_cast<T>(limits::max() - n);
  }

  tensor make_tensor_sample();

  static std::string tricky_text();
  static std::vector<char> tricky_bytes();

  sample_handles handles_;
  uint64_t serial_ = 0;
  uint64_t tensors_ = 0;
  int depth_ = 0;
};

/// The sample of `T`.
template <class T>
T make_sample(const sample_handles& handles) {
  return sample_maker{handles}.make<T>();
}

// Text that a careless codec could cut or re-encode: non-ASCII UTF-8, an
// embedded NUL, and a byte that is not valid UTF-8.
inline std::string sample_maker::tricky_text() {
  return std::string("n\xc3\xb6"
                     "de\0\xff|",
                     8);
}

// Bytes with every high bit and a NUL, for nonces and payloads.
inline std::vector<char> sample_maker::tricky_bytes() {
  return {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff', 'a', '\x00'};
}

// In turn: both payloads set at once (no real tensor has that, but a codec
// that drops either one shows), strings, no elements, a scalar, and once
// per sample a large one whose values a float conversion could change (NaN
// with a payload, infinities, -0 and denormals).
inline tensor sample_maker::make_tensor_sample() {
  auto kind = tensors_++;
  if (kind == 4) {
    std::vector<float> values(1 << 16);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) * -0.5f;
    values[0] = std::numeric_limits<float>::quiet_NaN();
    values[1] = -std::numeric_limits<float>::infinity();
    values[2] = -0.0f;
    values[3] = std::numeric_limits<float>::denorm_min();
    values.back() = static_cast<float>(serial_);
    return make_tensor<float>({256, 256}, values);
  }
  switch (kind % 4) {
    case 0: {
      auto x = make_tensor<double>(
        {2, 2}, {1.5, -0.0, 1e300, -static_cast<double>(serial_)});
      x.strings = {"alpha", "", tricky_text()};
      return x;
    }
    case 1:
      return make_string_tensor({3}, {"x", tricky_text(), make<std::string>()});
    case 2:
      return make_tensor<int32_t>({0, 3}, {});
    default:
      return make_tensor<int64_t>(
        {},
        {std::numeric_limits<int64_t>::min() + static_cast<int64_t>(serial_)});
  }
}

} // namespace epochrt::test
