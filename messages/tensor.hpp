#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <caf/fwd.hpp>

#include <epochrt/messages/message_fields.hpp>

namespace epochrt {

/// Element type of a tensor.
enum class dtype : uint8_t { f32, f64, i32, i64, u8, boolean, string };

/// Returns the name used in job files and on the command line ("f32", ...).
const char* to_string(dtype x) noexcept;

/// Parses a name returned by `to_string(dtype)`; false when unknown.
bool from_string(std::string_view name, dtype& out) noexcept;

/// Size of one element in bytes; 0 for `dtype::string`.
size_t element_size(dtype x) noexcept;

/// A named value's contents: typed, shaped, dense, row-major.
///
/// Numeric and boolean elements live in `data` (native byte order, which is
/// little-endian on every platform we build for); strings live in
/// `strings`. A tensor is a plain value: copying it copies its bytes.
struct tensor {
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  std::vector<char> data;
  std::vector<std::string> strings;

  /// Product of the dimensions (1 for a scalar of shape {}).
  size_t element_count() const noexcept;

  /// Bytes of payload (for strings: the sum of their lengths).
  size_t byte_size() const noexcept;

  /// True when the payload matches type and shape.
  bool consistent() const noexcept;

  /// Pointer to the elements. Precondition: `T` matches `type`.
  template <class T>
  const T* values() const noexcept {
    return reinterpret_cast<const T*>(data.data());
  }
  template <class T>
  T* values() noexcept {
    return reinterpret_cast<T*>(data.data());
  }
};

bool operator==(const tensor& x, const tensor& y) noexcept;
inline bool operator!=(const tensor& x, const tensor& y) noexcept {
  return !(x == y);
}

/// Maps a C++ element type to its dtype.
template <class T>
constexpr dtype dtype_of() noexcept {
  if constexpr (std::is_same_v<T, float>)
    return dtype::f32;
  else if constexpr (std::is_same_v<T, double>)
    return dtype::f64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return dtype::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return dtype::i64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return dtype::u8;
  else if constexpr (std::is_same_v<T, bool>)
    return dtype::boolean;
  else
    static_assert(std::is_same_v<T, void>, "not a tensor element type");
}

/// Builds a numeric tensor from row-major values. Precondition: the shape's
/// element count equals `values.size()`.
template <class T>
tensor make_tensor(std::vector<int64_t> shape, const std::vector<T>& values) {
  tensor result;
  result.type = dtype_of<T>();
  result.shape = std::move(shape);
  result.data.resize(values.size() * sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i)
      result.data[i] = values[i] ? 1 : 0;
  } else if (!values.empty()) {
    std::memcpy(result.data.data(), values.data(), result.data.size());
  }
  return result;
}

/// A zero-filled tensor of the given type and shape.
tensor make_zero_tensor(dtype type, std::vector<int64_t> shape);

/// A scalar (shape {}) tensor.
template <class T>
tensor make_scalar(T value) {
  return make_tensor<T>({}, std::vector<T>{value});
}

tensor make_string_tensor(std::vector<int64_t> shape,
                          std::vector<std::string> values);

/// Element `i` as a double, for any numeric or boolean tensor.
/// Precondition: `i < x.element_count()` and `x.type != dtype::string`.
double element_as_double(const tensor& x, size_t i) noexcept;

/// Formats a shape as it appears in error messages: "[4,3]", "[]" for a
/// scalar.
std::string format_shape(const std::vector<int64_t>& shape);

/// Formats all elements row-major, comma-separated ("1,2.5,3"); floats use
/// the shortest text that reads back to the same value.
std::string format_values(const tensor& x);

// Every message type of this header and its fields, in wire order
// (message_fields.hpp). A tensor's `inspect` is written out below.
#define EPOCHRT_TENSOR_MESSAGES(X) X(tensor, type, shape, data, strings)

EPOCHRT_TENSOR_MESSAGES(EPOCHRT_DEFINE_MESSAGE_FIELDS)

namespace detail {

/// A tensor's bytes, on the wire as CAF writes any std::vector<char>: their
/// count, then the bytes.
struct tensor_bytes {
  std::vector<char>* data;
};

/// Reads a tensor's bytes. From a caf::binary_deserializer (every message
/// between processes) they are copied once, straight from the input: not
/// zero-filled first, as CAF's own reading of a vector does, and a count
/// larger than the input left is refused before anything is allocated.
caf::error read_tensor_bytes(caf::deserializer& f, std::vector<char>& data);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tensor_bytes& x) {
  if constexpr (std::is_base_of_v<caf::deserializer, Inspector>)
    return read_tensor_bytes(f, *x.data);
  else
    return f(*x.data);
}

} // namespace detail

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tensor& x) {
  detail::tensor_bytes bytes{&x.data};
  return f(caf::meta::type_name(message_fields<tensor>::name), x.type, x.shape,
           bytes, x.strings);
}

} // namespace epochrt
