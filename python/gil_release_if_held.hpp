#pragma once

#include <pybind11/pybind11.h>

namespace epochrt::python {

/// Releases the GIL for its lifetime when the calling thread holds it, and
/// does nothing otherwise: for destructors, which Python runs with the GIL
/// held but C++ may run without it. (What pybind11::gil_scoped_release
/// does, made optional.)
class gil_release_if_held {
public:
  gil_release_if_held()
    : state_(PyGILState_Check() == 1 ? PyEval_SaveThread() : nullptr) {}

  ~gil_release_if_held() {
    if (state_ != nullptr)
      PyEval_RestoreThread(state_);
  }

  gil_release_if_held(const gil_release_if_held&) = delete;
  gil_release_if_held& operator=(const gil_release_if_held&) = delete;

private:
  PyThreadState* state_;
};

} // namespace epochrt::python
