#pragma once

// A message type is declared once: its struct, and one entry in the list of
// its header, `X(type, field, field, ...)`. From that entry come
//
// - its `inspect` (EPOCHRT_DEFINE_MESSAGE), which CAF uses to send it and to
//   print it; the type name is "epochrt::<type>";
// - `message_fields<type>`, its fields by name and member pointer, which the
//   tests use to build samples and compare values field by field;
// - its CAF registration, under the same name (add_message_types walks
//   EPOCHRT_ALL_MESSAGES in message_list.hpp).
//
// A type whose `inspect` must be written by hand (collective_contribution's
// views) is listed with EPOCHRT_DEFINE_MESSAGE_FIELDS instead: its fields
// are still known by name, and its hand-written `inspect` hands CAF the same
// fields in the same order.
//
// The field order of an entry is the wire order: append new fields, never
// reorder (and bump remote_protocol_version when a field is added to a type
// that crosses between processes).

#include <cstddef>

#include <caf/meta/type_name.hpp>

namespace epochrt {

/// The fields of a message type, from its entry in its header's list.
/// Specialized by EPOCHRT_DEFINE_MESSAGE for every listed type:
///
///   static constexpr const char* name;   // "epochrt::<type>"
///   static constexpr size_t count;       // number of fields
///   template <class F> static void for_each(F&& f);
///     // calls f(field_name, &type::field) for every field, in wire order
template <class T>
struct message_fields;

} // namespace epochrt

// Preprocessor helpers: apply M(type, field) to every field of an entry.
// Entries have at most 16 fields.

#define EPOCHRT_PP_CAT(a, b) EPOCHRT_PP_CAT_I(a, b)
#define EPOCHRT_PP_CAT_I(a, b) a##b

// The text of `x` after expansion.
#define EPOCHRT_PP_STRING(x) EPOCHRT_PP_STRING_I(x)
#define EPOCHRT_PP_STRING_I(x) #x

#define EPOCHRT_PP_FIRST(...) EPOCHRT_PP_FIRST_I(__VA_ARGS__, unused)
#define EPOCHRT_PP_FIRST_I(first, ...) first

// The number of arguments, 1 to 17 (the type and up to 16 fields).
#define EPOCHRT_PP_COUNT(...)                                                 \
  EPOCHRT_PP_COUNT_I(__VA_ARGS__, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, \
                     5, 4, 3, 2, 1, unused)
#define EPOCHRT_PP_COUNT_I(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, \
                           _13, _14, _15, _16, _17, n, ...)                   \
  n

#define EPOCHRT_PP_EACH(M, ...)                                   \
  EPOCHRT_PP_CAT(EPOCHRT_PP_EACH_, EPOCHRT_PP_COUNT(__VA_ARGS__)) \
  (M, __VA_ARGS__)
#define EPOCHRT_PP_EACH_1(M, T)
#define EPOCHRT_PP_EACH_2(M, T, a) M(T, a)
#define EPOCHRT_PP_EACH_3(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_2(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_4(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_3(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_5(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_4(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_6(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_5(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_7(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_6(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_8(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_7(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_9(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_8(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_10(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_9(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_11(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_10(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_12(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_11(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_13(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_12(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_14(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_13(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_15(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_14(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_16(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_15(M, T, __VA_ARGS__)
#define EPOCHRT_PP_EACH_17(M, T, a, ...) \
  M(T, a) EPOCHRT_PP_EACH_16(M, T, __VA_ARGS__)

#define EPOCHRT_PP_FIELD_ONE(T, a) +1
#define EPOCHRT_PP_FIELD_VISIT(T, a) f(#a, &T::a);
#define EPOCHRT_PP_FIELD_INSPECT(T, a) , x.a

/// `message_fields<type>` for the entry `type, fields...`. Use at namespace
/// epochrt.
#define EPOCHRT_DEFINE_MESSAGE_FIELDS(...) \
  EPOCHRT_DEFINE_MESSAGE_FIELDS_I(EPOCHRT_PP_FIRST(__VA_ARGS__), __VA_ARGS__)
#define EPOCHRT_DEFINE_MESSAGE_FIELDS_I(T, ...)                           \
  template <>                                                             \
  struct message_fields<T> {                                              \
    static constexpr const char* name = "epochrt::" EPOCHRT_PP_STRING(T); \
    static constexpr size_t count                                         \
      = 0 EPOCHRT_PP_EACH(EPOCHRT_PP_FIELD_ONE, __VA_ARGS__);             \
    template <class F>                                                    \
    static void for_each([[maybe_unused]] F&& f) {                        \
      EPOCHRT_PP_EACH(EPOCHRT_PP_FIELD_VISIT, __VA_ARGS__)                \
    }                                                                     \
  };

/// `message_fields<type>` and the `inspect` that hands CAF the fields of
/// the entry `type, fields...` in order. Use at namespace epochrt.
#define EPOCHRT_DEFINE_MESSAGE(...)          \
  EPOCHRT_DEFINE_MESSAGE_FIELDS(__VA_ARGS__) \
  EPOCHRT_DEFINE_MESSAGE_INSPECT(EPOCHRT_PP_FIRST(__VA_ARGS__), __VA_ARGS__)
#define EPOCHRT_DEFINE_MESSAGE_INSPECT(T, ...)                          \
  template <class Inspector>                                            \
  typename Inspector::result_type inspect(Inspector& f,                 \
                                          [[maybe_unused]] T& x) {      \
    return f(caf::meta::type_name(message_fields<T>::name)              \
               EPOCHRT_PP_EACH(EPOCHRT_PP_FIELD_INSPECT, __VA_ARGS__)); \
  }
