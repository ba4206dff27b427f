#include <epochrt/messages/tensor.hpp>

#include <charconv>
#include <cmath>
#include <numeric>

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>

namespace epochrt {

namespace {

constexpr const char* dtype_names[]
  = {"f32", "f64", "i32", "i64", "u8", "bool", "string"};

template <class T>
void append_float(std::string& out, T value) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, res.ptr);
}

template <class T>
void append_int(std::string& out, T value) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, res.ptr);
}

} // namespace

const char* to_string(dtype x) noexcept {
  auto index = static_cast<size_t>(x);
  return index < std::size(dtype_names) ? dtype_names[index] : "invalid";
}

bool from_string(std::string_view name, dtype& out) noexcept {
  for (size_t i = 0; i < std::size(dtype_names); ++i) {
    if (name == dtype_names[i]) {
      out = static_cast<dtype>(i);
      return true;
    }
  }
  return false;
}

size_t element_size(dtype x) noexcept {
  switch (x) {
    case dtype::f32:
    case dtype::i32:
      return 4;
    case dtype::f64:
    case dtype::i64:
      return 8;
    case dtype::u8:
    case dtype::boolean:
      return 1;
    case dtype::string:
      return 0;
  }
  return 0;
}

size_t tensor::element_count() const noexcept {
  size_t n = 1;
  for (auto dim : shape)
    n *= dim < 0 ? 0 : static_cast<size_t>(dim);
  return n;
}

size_t tensor::byte_size() const noexcept {
  if (type != dtype::string)
    return data.size();
  return std::accumulate(strings.begin(), strings.end(), size_t{0},
                         [](size_t n, const std::string& s) {
                           return n + s.size();
                         });
}

bool tensor::consistent() const noexcept {
  // Checked products: a shape whose element or byte count wraps around
  // could otherwise match a small payload.
  size_t count = 1;
  for (auto dim : shape)
    if (dim < 0
        || __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return false;
  if (static_cast<size_t>(type) >= std::size(dtype_names))
    return false;
  if (type == dtype::string)
    return data.empty() && strings.size() == count;
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, element_size(type), &bytes))
    return false;
  return strings.empty() && data.size() == bytes;
}

bool operator==(const tensor& x, const tensor& y) noexcept {
  return x.type == y.type && x.shape == y.shape && x.data == y.data
    && x.strings == y.strings;
}

tensor make_zero_tensor(dtype type, std::vector<int64_t> shape) {
  tensor result;
  result.type = type;
  result.shape = std::move(shape);
  if (type == dtype::string)
    result.strings.resize(result.element_count());
  else
    result.data.resize(result.element_count() * element_size(type));
  return result;
}

tensor make_string_tensor(std::vector<int64_t> shape,
                          std::vector<std::string> values) {
  tensor result;
  result.type = dtype::string;
  result.shape = std::move(shape);
  result.strings = std::move(values);
  return result;
}

double element_as_double(const tensor& x, size_t i) noexcept {
  switch (x.type) {
    case dtype::f32:
      return x.values<float>()[i];
    case dtype::f64:
      return x.values<double>()[i];
    case dtype::i32:
      return x.values<int32_t>()[i];
    case dtype::i64:
      return static_cast<double>(x.values<int64_t>()[i]);
    case dtype::u8:
      return x.values<uint8_t>()[i];
    case dtype::boolean:
      return x.data[i] != 0 ? 1.0 : 0.0;
    case dtype::string:
      break;
  }
  return 0.0;
}

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string result = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      result += ',';
    result += std::to_string(shape[i]);
  }
  result += ']';
  return result;
}

std::string format_values(const tensor& x) {
  std::string out;
  auto n = x.type == dtype::string ? x.strings.size() : x.element_count();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0)
      out += ',';
    switch (x.type) {
      case dtype::f32:
        append_float(out, x.values<float>()[i]);
        break;
      case dtype::f64:
        append_float(out, x.values<double>()[i]);
        break;
      case dtype::i32:
        append_int(out, x.values<int32_t>()[i]);
        break;
      case dtype::i64:
        append_int(out, x.values<int64_t>()[i]);
        break;
      case dtype::u8:
        append_int(out, static_cast<unsigned>(x.values<uint8_t>()[i]));
        break;
      case dtype::boolean:
        out += x.data[i] != 0 ? "true" : "false";
        break;
      case dtype::string:
        out += x.strings[i];
        break;
    }
  }
  return out;
}

namespace detail {

caf::error read_tensor_bytes(caf::deserializer& f, std::vector<char>& data) {
  size_t count = 0;
  if (auto err = f.begin_sequence(count))
    return err;
  if (auto* in = dynamic_cast<caf::binary_deserializer*>(&f)) {
    if (count > in->remaining())
      return caf::make_error(caf::sec::end_of_stream);
    auto* first = reinterpret_cast<const char*>(in->remainder().data());
    data.assign(first, first + count);
    in->skip(count);
  } else {
    data.resize(count);
    if (count > 0)
      if (auto err = f.apply_raw(count, data.data()))
        return err;
  }
  return f.end_sequence();
}

} // namespace detail

} // namespace epochrt
