#pragma once

namespace epochrt::python {

/// Whether a thread of epochrt's own (a node's worker, a pool thread) may
/// take the GIL now, held for as long as it does. Once the interpreter
/// finalizes, a thread that asks for the GIL is ended by Python through
/// pthread_exit, which unwinds C++ frames that cannot be unwound and
/// aborts the process ("terminate called without an active exception",
/// about one run in 25 of a training script at exit). Checking
/// Py_IsFinalizing first leaves a window: finalization may begin between
/// the check and the take. So the module's atexit hook
/// (`interpreter_ending`), which runs before finalization, refuses every
/// later entry and waits, the GIL released, for the entries in flight.
///
/// Usage: construct, and take the GIL only when `ok()`; destroy it after
/// the GIL is released.
class interpreter_entry {
public:
  interpreter_entry();
  ~interpreter_entry();

  interpreter_entry(const interpreter_entry&) = delete;
  interpreter_entry& operator=(const interpreter_entry&) = delete;

  bool ok() const noexcept {
    return ok_;
  }

private:
  bool ok_ = false;
};

/// The interpreter is about to end: later entries are refused; returns
/// once every entry in flight is over. Called with the GIL held, from the
/// module's atexit hook; lets go of the GIL while it waits.
void interpreter_ending();

} // namespace epochrt::python
