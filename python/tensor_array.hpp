#pragma once

#include <memory>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

// Tensors to NumPy arrays and back. Both need the GIL.

namespace epochrt::python {

/// The NumPy array of `value`'s elements, in its shape (a scalar tensor of
/// shape [] is a 0-d array). Numeric and bool tensors are not copied: the
/// array is a view of `value`'s bytes, which it owns from then on (float32,
/// float64, int32, int64, uint8, bool). A string tensor becomes an array of
/// dtype object holding `bytes`: a blob's strings are bytes, not text, and
/// may not be UTF-8 (Caffe2 fetched them as bytes too).
pybind11::array to_ndarray(tensor&& value);

/// A new NumPy array of `value`'s elements, in its dtype and shape, in
/// memory NumPy allocates, filled without the GIL: the copy `fetch` makes.
/// Strings as `to_ndarray` gives them.
pybind11::array copy_to_ndarray(const tensor& value);

/// A read-only NumPy view of `value`'s elements that shares it: no copy
/// for numeric and bool tensors (the array holds `value` alive however
/// long Python keeps it), a new object array of `bytes` for strings. For
/// the inputs of Python ops, which may alias a workspace's blobs: writing
/// to one raises ValueError instead of changing a blob behind epochrt.
pybind11::array to_readonly_ndarray(std::shared_ptr<const tensor> value);

/// A writable NumPy view of `value`'s elements that shares it, for the
/// outputs a Python op fills: the array holds `value` alive however long
/// Python keeps it. Precondition: `value` is not a string tensor.
pybind11::array to_writable_ndarray(std::shared_ptr<tensor> value);

/// True when `object` is an array (or anything NumPy views without a copy,
/// a CPU torch tensor among them) over exactly `value`'s bytes, in its
/// dtype and shape, C-contiguous: what an op returns when it updated an
/// input in place and returned it. Never copies.
bool views_whole(pybind11::handle object, const tensor& value);

/// Copies `value`'s elements into `out`, which must be a writable
/// C-contiguous array of its dtype (native byte order) and shape; without
/// the GIL while it copies. Throws pybind11::type_error for another dtype
/// or a string tensor, pybind11::value_error for another shape or an
/// array that is read-only or not C-contiguous.
void copy_into(const tensor& value, pybind11::array& out);

/// The tensor of `object`, anything `numpy.asarray` takes: float32,
/// float64, int32, int64, uint8 and bool arrays as the tensor of that
/// dtype (one copy of the bytes, in C order, native byte order); arrays of
/// bytes or str (dtype S, U, or object with only bytes and str elements)
/// as a string tensor, str encoded as UTF-8. Throws pybind11::type_error
/// for any other dtype (int16, float16, complex, ...), naming it.
tensor from_ndarray(pybind11::handle object);

} // namespace epochrt::python
