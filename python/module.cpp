// The Python module `epochrt`: Caffe2's Python names over epochrt's public
// API. Each class's contract (the GIL, lifetimes, threads) is in its
// header; the Python signatures, and the GIL released around every call
// that blocks in epochrt, are in the bind_*.cpp files (bindings.hpp); here
// the module's initialization, which binds them in order.

#include <string>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

#include "bindings.hpp"
#include "call_arguments.hpp"
#include "ckpt_functions.hpp"
#include "errors.hpp"
#include "interpreter_entry.hpp"
#include "runtime.hpp"

using namespace pybind11::literals;

namespace epochrt::python {

namespace {

log_level parse_log_level(const std::string& name) {
  const std::pair<const char*, log_level> levels[] = {
    {"trace", log_level::trace}, {"debug", log_level::debug},
    {"info", log_level::info},   {"warn", log_level::warn},
    {"error", log_level::error}, {"off", log_level::off},
  };
  for (auto& [text, level] : levels)
    if (name == text)
      return level;
  bad_argument("log level '" + name
               + "': expected trace, debug, info, warn, error or off");
}

} // namespace

} // namespace epochrt::python

PYBIND11_MODULE(_epochrt, m) {
  using namespace epochrt::python;
  m.doc() = "epochrt: jobs run in epochs with checkpoints, as Caffe2's "
            "Job, JobRunner and MultiNodeCheckpointManager.";
  m.attr("__version__") = EPOCHRT_VERSION;
  // pybind11 loads NumPy's C API on first use into a function-local
  // static, whose initialization imports NumPy, which lets go of the GIL:
  // two worker threads converting their first arrays at once (Python ops
  // on two nodes) would deadlock, one in the static's guard holding the
  // GIL, the other in the import waiting for it. Loaded here, once, with
  // the GIL held and no worker running.
  pybind11::dtype::of<double>();
  // Before the interpreter finalizes, no thread of epochrt's may be left
  // about to take the GIL (interpreter_entry.hpp).
  pybind11::module_::import("atexit").attr("register")(
    pybind11::cpp_function([] {
      interpreter_ending();
    }));
  register_errors(m);
  bind_op_registry(m);
  bind_job_parts(m);
  bind_job(m);
  bind_epoch_limiter(m);
  bind_db_name(m);
  bind_sessions(m);
  bind_node_daemon(m);
  bind_checkpoint_manager(m);
  bind_job_runner(m);
  bind_ckpt_functions(m);
  m.def(
    "set_log_level",
    [](const std::string& level) {
      runtime::set_log_level(parse_log_level(level));
    },
    "level"_a,
    "The level of epochrt's log lines on stderr: trace, debug, info, "
    "warn (the default), error or off.");
}
