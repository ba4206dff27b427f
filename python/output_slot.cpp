#include "output_slot.hpp"

#include <limits>

#include "errors.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;

namespace epochrt::python {

namespace {

[[noreturn]] void refuse(const std::string& text) {
  throw error(make_error(runtime_errc::bad_argument, text),
              error_kind::bad_input);
}

} // namespace

py::array output_slot::reshape(const std::vector<int64_t>& shape,
                               const std::string& dtype_name) {
  check_open();
  dtype type = dtype::f32;
  if (!from_string(dtype_name, type) || type == dtype::string)
    refuse("output '" + name_
           + "': reshape takes a numeric or bool dtype "
             "(f32, f64, i32, i64, u8, bool), not '"
           + dtype_name + "'; feed strings instead");
  // Bytes as a tensor will hold them, checked before anything is allocated.
  uint64_t bytes = element_size(type);
  for (auto dim : shape) {
    if (dim < 0)
      refuse("output '" + name_ + "': negative dimension "
             + std::to_string(dim));
    if (dim != 0
        && bytes
          > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
      refuse("output '" + name_
             + "': the shape holds more bytes than "
               "memory can");
    bytes *= static_cast<uint64_t>(dim);
  }
  value_ = std::make_shared<tensor>(make_zero_tensor(type, shape));
  array_ = to_writable_ndarray(value_);
  return py::reinterpret_borrow<py::array>(array_);
}

void output_slot::feed(py::handle value) {
  check_open();
  value_ = std::make_shared<tensor>(from_ndarray(value));
  array_ = py::object{};
}

py::object output_slot::data() const {
  return array_ ? array_ : py::none();
}

std::optional<tensor> output_slot::take() {
  open_ = false;
  // The arrays reshape returned hold the value too: once ours is dropped,
  // another holder means the op kept one, which could still write to it.
  array_ = py::object{};
  auto value = std::move(value_);
  if (!value)
    return std::nullopt;
  if (value.use_count() == 1)
    return std::move(*value);
  return tensor{*value};
}

void output_slot::check_open() const {
  if (!open_)
    refuse("output '" + name_ + "': the op's call is over");
}

} // namespace epochrt::python
