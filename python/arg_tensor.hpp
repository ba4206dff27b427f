#pragma once

#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// The tensor of an op's argument given in Python, as a job file would
/// make it from the same JSON value: a bool a bool scalar, an int an i64
/// scalar, a float an f64 scalar, a str (or bytes) a string scalar; a list
/// or tuple of ints an i64 1-D tensor, of numbers with any float an f64
/// one, of strings a string one, an empty one i64 [0]. A NumPy array or
/// scalar keeps its dtype and shape (`from_ndarray`). Throws
/// pybind11::type_error for anything else (None, a dict, a mixed list),
/// naming `name`. Needs the GIL.
tensor arg_tensor(const std::string& name, pybind11::handle value);

} // namespace epochrt::python
