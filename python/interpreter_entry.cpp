#include "interpreter_entry.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <pybind11/pybind11.h>

namespace epochrt::python {

namespace {

std::atomic<bool> ending{false};
std::atomic<int> entries{0};

bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() != 0 && Py_IsFinalizing() == 0;
#else
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
#endif
}

} // namespace

interpreter_entry::interpreter_entry() {
  // Counted before the check: interpreter_ending sets `ending` and then
  // waits for the count, so an entry either sees `ending` or is waited for.
  entries.fetch_add(1);
  if (ending.load() || !interpreter_alive()) {
    entries.fetch_sub(1);
    return;
  }
  ok_ = true;
}

interpreter_entry::~interpreter_entry() {
  if (ok_)
    entries.fetch_sub(1);
}

void interpreter_ending() {
  ending.store(true);
  pybind11::gil_scoped_release release;
  while (entries.load() > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

} // namespace epochrt::python
