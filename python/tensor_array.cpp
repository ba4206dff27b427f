#include "tensor_array.hpp"

#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace py = pybind11;

namespace epochrt::python {

namespace {

py::dtype numpy_dtype(dtype type) {
  switch (type) {
    case dtype::f32:
      return py::dtype::of<float>();
    case dtype::f64:
      return py::dtype::of<double>();
    case dtype::i32:
      return py::dtype::of<int32_t>();
    case dtype::i64:
      return py::dtype::of<int64_t>();
    case dtype::u8:
      return py::dtype::of<uint8_t>();
    case dtype::boolean:
      // One byte, 0 or 1, as a tensor stores it.
      return py::dtype::of<bool>();
    case dtype::string:
      break;
  }
  return py::dtype("O");
}

py::array strings_to_ndarray(const tensor& value) {
  auto count = static_cast<py::ssize_t>(value.strings.size());
  py::array result{py::dtype("O"), std::vector<py::ssize_t>{count}};
  auto* slots = static_cast<PyObject**>(result.mutable_data());
  for (py::ssize_t i = 0; i < count; ++i) {
    auto& text = value.strings[static_cast<size_t>(i)];
    auto* item = PyBytes_FromStringAndSize(
      text.data(), static_cast<py::ssize_t>(text.size()));
    if (item == nullptr)
      throw py::error_already_set();
    // NumPy fills a new object array with None or with nulls.
    Py_XDECREF(slots[i]);
    slots[i] = item;
  }
  std::vector<py::ssize_t> shape(value.shape.begin(), value.shape.end());
  return result.reshape(shape);
}

// The dtype of a tensor that holds `arr`'s elements as they are.
bool numeric_dtype_of(const py::array& arr, dtype& out) {
  auto kind = arr.dtype().kind();
  auto size = arr.dtype().itemsize();
  if (kind == 'f' && size == 4)
    out = dtype::f32;
  else if (kind == 'f' && size == 8)
    out = dtype::f64;
  else if (kind == 'i' && size == 4)
    out = dtype::i32;
  else if (kind == 'i' && size == 8)
    out = dtype::i64;
  else if (kind == 'u' && size == 1)
    out = dtype::u8;
  else if (kind == 'b')
    out = dtype::boolean;
  else
    return false;
  return true;
}

template <class T>
void copy_elements(const py::array& arr, tensor& out) {
  // The tensor's buffer first: an array too large for memory fails here
  // with MemoryError (std::bad_alloc), before NumPy makes a copy of its
  // own (a broadcast view of 2**40 elements has no bytes to copy from).
  auto count = static_cast<size_t>(arr.size());
  if (count > std::numeric_limits<size_t>::max() / sizeof(T))
    throw std::bad_alloc();
  out.data.resize(count * sizeof(T));
  if (count == 0)
    return;
  auto native = arr.dtype().attr("byteorder").cast<std::string>() != ">";
  if (native && (arr.flags() & py::array::c_style) != 0) {
    std::memcpy(out.data.data(), arr.data(), out.data.size());
    return;
  }
  // Strided or byte-swapped: NumPy copies it into the buffer, in C order.
  // A base that owns nothing: the view lives only for the copy below, and
  // without a base pybind11 would copy the buffer instead of viewing it.
  py::capsule no_owner{out.data.data(), [](void*) {}};
  py::array target{
    py::dtype::of<T>(),
    std::vector<py::ssize_t>(arr.shape(), arr.shape() + arr.ndim()),
    reinterpret_cast<T*>(out.data.data()), no_owner};
  py::module_::import("numpy").attr("copyto")(target, arr,
                                              py::arg("casting") = "equiv");
}

std::string string_element(py::handle item) {
  if (PyBytes_Check(item.ptr()))
    return std::string{PyBytes_AS_STRING(item.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(item.ptr()))};
  if (PyUnicode_Check(item.ptr())) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
    if (text == nullptr)
      throw py::error_already_set();
    return std::string{text, static_cast<size_t>(size)};
  }
  // NumPy makes an object array of anything it has no dtype for: an int
  // beyond int64 (2**70), None, a nested sequence of uneven length.
  auto text = std::string{py::repr(item)};
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  throw py::type_error(
    "an array of Python objects holding a "
    + std::string{py::str(item.get_type().attr("__name__"))} + " (" + text
    + "): epochrt's blobs hold float32, float64, int32, int64, uint8, bool "
      "or strings (bytes or str)");
}

} // namespace

py::array to_ndarray(tensor&& value) {
  if (value.type == dtype::string)
    return strings_to_ndarray(value);
  auto owner = std::make_unique<tensor>(std::move(value));
  auto type = numpy_dtype(owner->type);
  std::vector<py::ssize_t> shape(owner->shape.begin(), owner->shape.end());
  const void* bytes = owner->data.data();
  // The capsule owns the tensor from here on, and the array the capsule.
  py::capsule base{owner.get(), [](void* ptr) {
                     delete static_cast<tensor*>(ptr);
                   }};
  owner.release();
  return py::array{type, std::move(shape), bytes, base};
}

py::array copy_to_ndarray(const tensor& value) {
  if (value.type == dtype::string)
    return strings_to_ndarray(value);
  std::vector<py::ssize_t> shape(value.shape.begin(), value.shape.end());
  py::array result{numpy_dtype(value.type), std::move(shape)};
  auto* target = result.mutable_data();
  py::gil_scoped_release release;
  if (!value.data.empty())
    std::memcpy(target, value.data.data(), value.data.size());
  return result;
}

py::array to_readonly_ndarray(std::shared_ptr<const tensor> value) {
  if (value->type == dtype::string)
    return strings_to_ndarray(*value);
  auto owner
    = std::make_unique<std::shared_ptr<const tensor>>(std::move(value));
  auto& elements = **owner;
  auto type = numpy_dtype(elements.type);
  std::vector<py::ssize_t> shape(elements.shape.begin(), elements.shape.end());
  const void* bytes = elements.data.data();
  py::capsule base{owner.get(), [](void* ptr) {
                     delete static_cast<std::shared_ptr<const tensor>*>(ptr);
                   }};
  owner.release();
  py::array result{type, std::move(shape), bytes, base};
  // pybind11 makes an array over a base writable; this one is not.
  result.attr("setflags")(py::arg("write") = false);
  return result;
}

py::array to_writable_ndarray(std::shared_ptr<tensor> value) {
  auto owner = std::make_unique<std::shared_ptr<tensor>>(std::move(value));
  auto& elements = **owner;
  auto type = numpy_dtype(elements.type);
  std::vector<py::ssize_t> shape(elements.shape.begin(), elements.shape.end());
  void* bytes = elements.data.data();
  py::capsule base{owner.get(), [](void* ptr) {
                     delete static_cast<std::shared_ptr<tensor>*>(ptr);
                   }};
  owner.release();
  return py::array{type, std::move(shape), bytes, base};
}

bool views_whole(py::handle object, const tensor& value) {
  if (value.type == dtype::string || value.data.empty())
    return false;
  // Not `py::array::ensure`: that may copy (a list, another dtype).
  py::array arr;
  if (py::isinstance<py::array>(object)) {
    arr = py::reinterpret_borrow<py::array>(object);
  } else if (py::hasattr(object, "__array_interface__")
             || py::hasattr(object, "__array__")) {
    auto numpy = py::module_::import("numpy");
    auto viewed = numpy.attr("asarray")(object);
    if (!py::isinstance<py::array>(viewed))
      return false;
    arr = py::reinterpret_borrow<py::array>(viewed);
  } else {
    return false;
  }
  dtype type = dtype::f32;
  if (!numeric_dtype_of(arr, type) || type != value.type
      || arr.dtype().attr("byteorder").cast<std::string>() == ">")
    return false;
  if (arr.data() != static_cast<const void*>(value.data.data())
      || static_cast<size_t>(arr.nbytes()) != value.data.size()
      || (arr.flags() & py::array::c_style) == 0)
    return false;
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  return shape == value.shape;
}

void copy_into(const tensor& value, py::array& out) {
  if (value.type == dtype::string)
    throw py::type_error("out= takes a numeric or bool blob; this one holds "
                         "strings");
  dtype type = dtype::f32;
  auto order = out.dtype().attr("byteorder").cast<std::string>();
  if (!numeric_dtype_of(out, type) || type != value.type || order == ">")
    throw py::type_error("out has dtype " + std::string{py::str(out.dtype())}
                         + ", the blob "
                         + std::string{py::str(numpy_dtype(value.type))});
  std::vector<int64_t> shape(out.shape(), out.shape() + out.ndim());
  if (shape != value.shape)
    throw py::value_error("out has another shape than the blob's");
  if ((out.flags() & py::array::c_style) == 0 || !out.writeable())
    throw py::value_error("out must be writable and C-contiguous");
  auto* target = out.mutable_data();
  py::gil_scoped_release release;
  if (!value.data.empty())
    std::memcpy(target, value.data.data(), value.data.size());
}

tensor from_ndarray(py::handle object) {
  auto arr = py::array::ensure(object);
  if (!arr) {
    // ensure() clears NumPy's error: ask again for it to be raised.
    py::module_::import("numpy").attr("asarray")(object);
    throw py::type_error("numpy.asarray cannot convert the value");
  }
  tensor result;
  result.shape.assign(arr.shape(), arr.shape() + arr.ndim());
  auto kind = arr.dtype().kind();
  if (kind == 'S' || kind == 'U' || kind == 'O') {
    result.type = dtype::string;
    // Element by element: strings have no shared buffer to copy.
    auto flat = arr.attr("ravel")();
    for (auto item : flat.attr("tolist")())
      result.strings.push_back(string_element(item));
    return result;
  }
  if (!numeric_dtype_of(arr, result.type))
    throw py::type_error("epochrt has no tensor of numpy dtype "
                         + std::string{py::str(arr.dtype())});
  switch (result.type) {
    case dtype::f32:
      copy_elements<float>(arr, result);
      break;
    case dtype::f64:
      copy_elements<double>(arr, result);
      break;
    case dtype::i32:
      copy_elements<int32_t>(arr, result);
      break;
    case dtype::i64:
      copy_elements<int64_t>(arr, result);
      break;
    case dtype::u8:
      copy_elements<uint8_t>(arr, result);
      break;
    case dtype::boolean:
      copy_elements<bool>(arr, result);
      break;
    case dtype::string:
      break;
  }
  return result;
}

} // namespace epochrt::python
