#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// Python's OpRegistry: epochrt's builtin ops plus ops written in Python,
/// owned by this object and by the sessions and jobs that use it (there is
/// no global registry). A Python op is a callable that gets the op's
/// inputs as read-only NumPy arrays (views of the blobs, no copy, for
/// numeric and bool tensors) and its declared arguments as keyword
/// arguments, and returns its outputs: the output itself for an op of one
/// output, a tuple or list of them for several, None for none. An op added
/// with `fills_outputs` gets an `output_slot` per output after its inputs
/// instead, fills them and returns None.
///
/// The registry is complete once something uses it: `freeze`, which a
/// session or a job load calls, makes every later `add` fail, because
/// epochrt shares a registry read-only between threads.
///
/// The GIL: `add`, `freeze` and `types` must be called with the GIL held
/// (that also serializes them). A Python op runs on one of epochrt's
/// worker threads, which takes the GIL for the call only, while its task
/// holds the node's workspace: the op must not call the session, a
/// checkpoint manager or a job runner (those calls raise when it does,
/// see `in_python_op`). The callables are released with the GIL taken by
/// whichever thread drops the registry last (a node's, possibly).
class op_registry {
public:
  /// A registry with epochrt's builtin ops.
  op_registry();

  op_registry(const op_registry&) = delete;
  op_registry& operator=(const op_registry&) = delete;

  /// Registers `fn` as op `type`, taking `min_inputs` to `max_inputs`
  /// inputs and `min_outputs` to `max_outputs` outputs (-1: unbounded) and
  /// the optional arguments `args`. Its code version
  /// (epochrt::op_registry::code_version) is "v:" `version` when given,
  /// else a digest of `fn`'s code. Throws `error` (BadInput) when the
  /// registry is frozen or epochrt refuses the op (a type already
  /// registered, a builtin's name, bounds that contradict each other).
  void add(std::string type, pybind11::function fn, int min_inputs,
           int max_inputs, int min_outputs, int max_outputs,
           std::vector<arg_spec> args, bool fills_outputs, std::string doc,
           std::optional<std::string> version = std::nullopt);

  /// The registry, complete from now on.
  std::shared_ptr<const epochrt::op_registry> freeze();

  /// Every type of the registry, sorted.
  std::vector<std::string> types() const;

  bool frozen() const noexcept {
    return frozen_;
  }

private:
  std::shared_ptr<epochrt::op_registry> registry_;
  bool frozen_ = false;
};

/// A digest of `fn`'s code: its bytecode, names and constants, the code
/// nested in it and its defaults, without line numbers or file names
/// ("code:" and 16 hex digits; "" for a callable without Python code).
/// What a Python op's code version is when `add` is given none. Needs the
/// GIL.
std::string code_digest(const pybind11::function& fn);

/// True while this thread runs a Python op: the calls that would wait for
/// the workspace the op's task holds check it, and raise instead of
/// deadlocking.
bool in_python_op() noexcept;

/// Throws `error` (BadInput) naming `call` when `in_python_op()`.
void check_not_in_python_op(const char* call);

} // namespace epochrt::python
