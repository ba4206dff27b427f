#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// One output of a call of a Python op registered with `fills_outputs`
/// (Caffe2's Python op passed its outputs the same way): the op either
/// `reshape`s it and writes the returned array in place, or `feed`s it a
/// value. Lives for one call: after the call, epochrt `take`s the value
/// and every later use raises.
///
/// All members need the GIL, which also serializes them.
class output_slot {
public:
  explicit output_slot(std::string name) : name_(std::move(name)) {}

  const std::string& name() const noexcept {
    return name_;
  }

  /// A zero-filled writable array of `shape` and `dtype` (a name as in job
  /// files: "f32", "f64", "i32", "i64", "u8", "bool"), which becomes the
  /// output as the op leaves it: no copy unless the op keeps the array (or
  /// a view of it) past its call. Replaces what an earlier reshape or feed
  /// gave. Throws `error` (BadInput) for another dtype or a negative
  /// dimension, and after the call.
  pybind11::array reshape(const std::vector<int64_t>& shape,
                          const std::string& dtype);

  /// Makes a copy of `value` (what `fetch` returns or `put` takes) the
  /// output. Throws as `from_ndarray` does, and `error` after the call.
  void feed(pybind11::handle value);

  /// The array the last `reshape` returned; None before one, or after a
  /// `feed`.
  pybind11::object data() const;

  /// Ends the call: the output's value; none when the op neither
  /// reshaped nor fed it.
  std::optional<tensor> take();

private:
  void check_open() const;

  std::string name_;
  bool open_ = true;
  // Shared with the arrays `reshape` returned, which Python may keep.
  std::shared_ptr<tensor> value_;
  pybind11::object array_;
};

} // namespace epochrt::python
