#include "arg_tensor.hpp"

#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "errors.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;

namespace epochrt::python {

namespace {

template <class T>
tensor scalar(dtype type, T value) {
  tensor result;
  result.type = type;
  result.data.resize(sizeof(T));
  *result.values<T>() = value;
  return result;
}

template <class T>
tensor vector_tensor(dtype type, const std::vector<T>& values) {
  tensor result;
  result.type = type;
  result.shape = {static_cast<int64_t>(values.size())};
  result.data.resize(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i)
    result.values<T>()[i] = values[i];
  return result;
}

std::string type_name(py::handle value) {
  return py::str(value.get_type().attr("__name__"));
}

[[noreturn]] void refuse(const std::string& text) {
  throw error(make_error(runtime_errc::bad_argument, text),
              error_kind::bad_input);
}

[[noreturn]] void unsupported(const std::string& name,
                              const std::string& what) {
  refuse("arg '" + name
         + "': expected a bool, int, float, str, a list of ints, numbers or "
           "strings, or a NumPy array; got "
         + what);
}

int64_t integer(const std::string& name, py::handle value) {
  auto overflow = 0;
  auto result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0)
    refuse("arg '" + name + "': " + std::string{py::str(value)}
           + " does not fit in a 64-bit integer");
  if (result == -1 && PyErr_Occurred())
    throw py::error_already_set();
  return result;
}

tensor list_tensor(const std::string& name, py::sequence items) {
  bool all_strings = true;
  bool all_numbers = true;
  bool any_float = false;
  for (auto item : items) {
    bool is_string
      = py::isinstance<py::str>(item) || py::isinstance<py::bytes>(item);
    // bool is an int in Python, but a job file's list holds no bools.
    bool is_int
      = py::isinstance<py::int_>(item) && !py::isinstance<py::bool_>(item);
    bool is_float = py::isinstance<py::float_>(item);
    all_strings = all_strings && is_string;
    all_numbers = all_numbers && (is_int || is_float);
    any_float = any_float || is_float;
  }
  if (items.size() == 0)
    return vector_tensor<int64_t>(dtype::i64, {});
  if (all_strings) {
    tensor result;
    result.type = dtype::string;
    result.shape = {static_cast<int64_t>(items.size())};
    for (auto item : items)
      result.strings.push_back(item.cast<std::string>());
    return result;
  }
  if (!all_numbers)
    unsupported(name, "a list of mixed or other elements");
  if (any_float)
    return vector_tensor(dtype::f64, items.cast<std::vector<double>>());
  std::vector<int64_t> values;
  for (auto item : items)
    values.push_back(integer(name, item));
  return vector_tensor(dtype::i64, values);
}

} // namespace

tensor arg_tensor(const std::string& name, py::handle value) {
  if (py::isinstance<py::bool_>(value))
    return scalar<bool>(dtype::boolean, value.cast<bool>());
  if (py::isinstance<py::int_>(value))
    return scalar<int64_t>(dtype::i64, integer(name, value));
  if (py::isinstance<py::float_>(value))
    return scalar<double>(dtype::f64, value.cast<double>());
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value)) {
    tensor result;
    result.type = dtype::string;
    result.strings.push_back(value.cast<std::string>());
    return result;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value))
    return list_tensor(name, py::reinterpret_borrow<py::sequence>(value));
  if (py::isinstance<py::array>(value)
      || py::isinstance(value, py::module_::import("numpy").attr("generic"))) {
    try {
      return from_ndarray(value);
    } catch (const py::builtin_exception& ex) {
      refuse("arg '" + name + "': " + ex.what());
    }
  }
  unsupported(name, value.is_none() ? std::string{"None"} : type_name(value));
}

} // namespace epochrt::python
