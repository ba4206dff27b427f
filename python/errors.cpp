#include "errors.hpp"

#include <exception>
#include <initializer_list>
#include <string_view>

#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

namespace py = pybind11;

namespace epochrt::python {

namespace {

// Whether `err` is one of `codes` (of one layer's enum), by is_error: the
// one test of an error's category.
template <class Enum>
bool is_one_of(const caf::error& err, std::initializer_list<Enum> codes) {
  for (auto code : codes)
    if (is_error(err, code))
      return true;
  return false;
}

// The Python classes, indexed by error_kind. Created once by
// register_errors and never released: the translator may run until the
// interpreter ends, and a static py::object would be released after it.
PyObject* classes[5] = {};

PyObject* class_of(error_kind kind) {
  return classes[static_cast<int>(kind)];
}

} // namespace

error_kind classify(const caf::error& err, error_kind fallback) {
  if (is_error(err, actors_errc::stopped))
    return error_kind::stopped;
  if (is_one_of(err, {actors_errc::node_lost, actors_errc::unreachable})
      || is_one_of(err, {runtime_errc::peer_lost}))
    return error_kind::node_lost;
  if (is_one_of(err,
                {runtime_errc::unknown_op, runtime_errc::bad_argument,
                 runtime_errc::invalid_job, runtime_errc::unreadable_file,
                 runtime_errc::missing_blob})
      || is_one_of(err,
                   {actors_errc::unknown_node, actors_errc::invalid_argument,
                    actors_errc::not_initialized,
                    actors_errc::no_checkpoint_manager,
                    actors_errc::job_changed})
      || is_one_of(err,
                   {persistence_errc::invalid_name,
                    persistence_errc::invalid_argument,
                    persistence_errc::not_committed, persistence_errc::locked})
      || is_one_of(err,
                   {fault_errc::invalid_plan, fault_errc::unreadable_plan}))
    return error_kind::bad_input;
  return fallback;
}

error::error(const caf::error& err, error_kind fallback)
  : std::runtime_error(coded_error_text(err)), kind_(classify(err, fallback)),
    code_(error_code_name(err)), node_(lost_node(err)) {}

void throw_if(const caf::error& err, error_kind fallback) {
  if (err)
    throw error(err, fallback);
}

bool loaded_or_missing(const caf::error& err) {
  if (is_error(err, persistence_errc::not_found)
      || is_error(err, persistence_errc::incomplete))
    return false;
  throw_if(err);
  return true;
}

void register_errors(py::module_& m) {
  struct definition {
    error_kind kind;
    const char* name;
    const char* doc;
  };
  const definition definitions[] = {
    {error_kind::error, "Error",
     "An error of epochrt: str() is its text, `code` the name of its code "
     "(\"corrupt\", \"task_failed\"; \"\" when it has none)."},
    {error_kind::bad_input, "BadInput",
     "Refused before anything ran: an unreadable or invalid job, a bad "
     "argument, a name the job or the session lacks (a missing blob), an "
     "epoch never committed, a checkpoint directory another job holds. "
     "Also a ValueError."},
    {error_kind::job_failed, "JobFailed",
     "A job ran and failed: a task failed, or the checkpoint to resume "
     "from cannot be loaded."},
    {error_kind::stopped, "Stopped",
     "The job was asked to stop; its last committed epoch is where a rerun "
     "resumes."},
    {error_kind::node_lost, "NodeLost",
     "A node stopped answering or its process is gone; a rerun resumes "
     "from the last committed epoch. `node` names the node that was lost "
     "(the text names it first), None when no single node is."},
  };
  for (auto& def : definitions) {
    auto qualified = std::string{"epochrt."} + def.name;
    // BadInput is a ValueError too: what Python raises for a bad argument.
    py::object base = def.kind == error_kind::error
      ? py::reinterpret_borrow<py::object>(PyExc_Exception)
      : def.kind == error_kind::bad_input
      ? py::object(py::make_tuple(py::handle(class_of(error_kind::error)),
                                  py::handle(PyExc_ValueError)))
      : py::reinterpret_borrow<py::object>(class_of(error_kind::error));
    auto* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), def.doc,
                                          base.ptr(), nullptr);
    if (cls == nullptr)
      throw py::error_already_set();
    classes[static_cast<int>(def.kind)] = cls;
    // The module takes a reference of its own; `classes` keeps the first.
    m.attr(def.name) = py::reinterpret_borrow<py::object>(cls);
  }
  py::register_exception_translator([](std::exception_ptr ptr) {
    if (!ptr)
      return;
    try {
      std::rethrow_exception(ptr);
    } catch (const error& e) {
      auto* cls = class_of(e.kind());
      // Paths in a message need not be UTF-8: replace what does not decode
      // rather than raise a UnicodeDecodeError instead of the error.
      std::string_view text{e.what()};
      auto message = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
        text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
      if (!message)
        return; // the decode's error is set
      auto exc = py::reinterpret_steal<py::object>(
        PyObject_CallOneArg(cls, message.ptr()));
      if (!exc)
        return; // the call's error is set
      if (PyObject_SetAttrString(exc.ptr(), "code", py::str(e.code()).ptr())
          != 0)
        return;
      if (e.kind() == error_kind::node_lost) {
        py::object node = e.node().empty() ? py::object(py::none())
                                           : py::object(py::str(e.node()));
        if (PyObject_SetAttrString(exc.ptr(), "node", node.ptr()) != 0)
          return;
      }
      PyErr_SetObject(cls, exc.ptr());
    }
  });
}

} // namespace epochrt::python
