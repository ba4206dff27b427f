#include "op_registry.hpp"

#include <stdexcept>
#include <utility>

#include <pybind11/stl.h>

#include "errors.hpp"
#include "output_slot.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;

namespace epochrt::python {

namespace {

thread_local bool running_python_op = false;

// Whether a thread may still take the GIL: once the interpreter finalizes,
// a thread that asks for it blocks forever.
bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() != 0 && Py_IsFinalizing() == 0;
#else
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
#endif
}

// A Python object that any thread may drop: the last owner takes the GIL
// to release it, and leaks it when the interpreter is ending.
class held_object {
public:
  explicit held_object(py::object obj) : ptr_(obj.release().ptr()) {}

  ~held_object() {
    if (!interpreter_alive())
      return;
    py::gil_scoped_acquire gil;
    Py_DECREF(ptr_);
  }

  held_object(const held_object&) = delete;
  held_object& operator=(const held_object&) = delete;

  py::handle get() const noexcept {
    return ptr_;
  }

private:
  PyObject* ptr_;
};

py::object arg_value(const op_context& ctx, const arg_spec& spec) {
  switch (spec.kind) {
    case arg_kind::integer:
      return py::int_(ctx.int_arg(spec.name));
    case arg_kind::number:
      return py::float_(ctx.number_arg(spec.name));
    case arg_kind::boolean:
      return py::bool_(ctx.bool_arg(spec.name));
    case arg_kind::string:
    case arg_kind::path:
      return py::str(ctx.string_arg(spec.name));
    case arg_kind::integer_list:
      return py::cast(ctx.int_list_arg(spec.name));
    case arg_kind::number_list:
      return py::cast(ctx.number_list_arg(spec.name));
    case arg_kind::string_list:
      return py::cast(ctx.string_list_arg(spec.name));
  }
  return py::none();
}

std::string count_text(size_t n) {
  return std::to_string(n) + (n == 1 ? " output" : " outputs");
}

// The tensors of what the op returned, one per output of the call; throws
// (a std::exception with what is wrong) before any output is written.
std::vector<tensor> outputs_of(const op_context& ctx,
                               const py::object& result) {
  auto count = ctx.output_count();
  std::vector<tensor> outputs;
  if (count == 0) {
    if (!result.is_none())
      throw std::runtime_error("returned a value, but the call has no output");
    return outputs;
  }
  if (result.is_none())
    throw std::runtime_error("returned None, but the call has "
                             + count_text(count));
  if (count == 1) {
    outputs.push_back(from_ndarray(result));
    return outputs;
  }
  if (!py::isinstance<py::tuple>(result) && !py::isinstance<py::list>(result))
    throw std::runtime_error(
      "returned a " + std::string{py::str(result.get_type().attr("__name__"))}
      + ", but the call has " + count_text(count) + ": return a tuple of them");
  auto values = py::reinterpret_borrow<py::sequence>(result);
  if (values.size() != count)
    throw std::runtime_error("returned " + count_text(values.size())
                             + ", but the call has " + count_text(count));
  for (auto value : values)
    outputs.push_back(from_ndarray(value));
  return outputs;
}

// The outputs of a call of an op that fills them: one slot per output,
// passed after the inputs; the op returns None.
std::vector<tensor>
filled_outputs(const py::object& result,
               const std::vector<std::shared_ptr<output_slot>>& slots) {
  if (!result.is_none())
    throw std::runtime_error("returned a value, but an op that fills its "
                             "outputs returns None");
  std::vector<tensor> outputs;
  for (auto& slot : slots) {
    auto value = slot->take();
    if (!value)
      throw std::runtime_error("output '" + slot->name()
                               + "' was neither reshaped nor fed");
    outputs.push_back(std::move(*value));
  }
  return outputs;
}

// Ends the slots of a call however the call ends: a slot serves its call
// only, whoever still holds it.
struct slots_closer {
  const std::vector<std::shared_ptr<output_slot>>& slots;
  ~slots_closer() {
    for (auto& slot : slots)
      (void)slot->take();
  }
};

// The exception as Python prints it: the traceback, then the type and the
// message.
std::string traceback_text(const py::error_already_set& ex) {
  try {
    // An exception raised in C (a conversion) may have no traceback: a
    // null handle, which pybind11 cannot pass, where Python wants None.
    py::object trace = ex.trace()
      ? py::reinterpret_borrow<py::object>(ex.trace())
      : py::none();
    auto lines = py::module_::import("traceback")
                   .attr("format_exception")(ex.type(), ex.value(), trace);
    std::string text;
    for (auto line : lines)
      text += py::str(line);
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    return text;
  } catch (const py::error_already_set&) {
    return ex.what();
  }
}

// The op_function of a Python op: runs on a worker thread, which holds the
// node's workspace and takes the GIL for the call only.
class python_op {
public:
  python_op(py::function fn, std::vector<arg_spec> args, bool fills_outputs)
    : fn_(std::make_shared<held_object>(std::move(fn))), args_(std::move(args)),
      fills_outputs_(fills_outputs) {}

  caf::error operator()(op_context& ctx) const {
    if (!interpreter_alive())
      return ctx.fail(runtime_errc::op_failed,
                      "the Python interpreter has ended");
    py::gil_scoped_acquire gil;
    struct flag {
      bool previous = running_python_op;
      flag() {
        running_python_op = true;
      }
      ~flag() {
        running_python_op = previous;
      }
    } in_op;
    try {
      auto slot_count = fills_outputs_ ? ctx.output_count() : 0;
      py::tuple args(ctx.input_count() + slot_count);
      for (size_t i = 0; i < ctx.input_count(); ++i)
        args[i] = to_readonly_ndarray(ctx.share_input(i));
      std::vector<std::shared_ptr<output_slot>> slots;
      for (size_t i = 0; i < slot_count; ++i) {
        slots.push_back(std::make_shared<output_slot>(ctx.def().outputs[i]));
        args[ctx.input_count() + i] = py::cast(slots.back());
      }
      py::dict kwargs;
      for (auto& spec : args_)
        if (ctx.has_arg(spec.name))
          kwargs[py::str(spec.name)] = arg_value(ctx, spec);
      slots_closer closer{slots};
      auto result = fn_->get()(*args, **kwargs);
      auto outputs = fills_outputs_ ? filled_outputs(result, slots)
                                    : outputs_of(ctx, result);
      for (size_t i = 0; i < outputs.size(); ++i)
        ctx.set_output(i, std::move(outputs[i]));
      return {};
    } catch (const py::error_already_set& ex) {
      return ctx.fail(runtime_errc::op_failed,
                      "raised an exception:\n" + traceback_text(ex));
    } catch (const std::exception& ex) {
      return ctx.fail(runtime_errc::op_failed, ex.what());
    }
  }

private:
  // Shared: std::function copies its target, and a copy must not touch a
  // reference count without the GIL.
  std::shared_ptr<held_object> fn_;
  std::vector<arg_spec> args_;
  bool fills_outputs_;
};

} // namespace

op_registry::op_registry()
  : registry_(std::make_shared<epochrt::op_registry>()) {
  if (auto err = add_builtin_ops(*registry_))
    throw std::logic_error("epochrt's builtin ops do not register: "
                           + coded_error_text(err));
}

void op_registry::add(std::string type, py::function fn, int min_inputs,
                      int max_inputs, int min_outputs, int max_outputs,
                      std::vector<arg_spec> args, bool fills_outputs,
                      std::string doc) {
  if (frozen_)
    throw_if(make_error(runtime_errc::bad_argument,
                        "op '" + type
                          + "': the registry is in use by a session or a job "
                            "already; register every op before"),
             error_kind::bad_input);
  op_schema schema;
  schema.type = std::move(type);
  schema.doc = std::move(doc);
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.min_outputs = min_outputs;
  schema.max_outputs = max_outputs;
  schema.args = args;
  schema.fn = python_op{std::move(fn), std::move(args), fills_outputs};
  throw_if(registry_->add(std::move(schema)), error_kind::bad_input);
}

std::shared_ptr<const epochrt::op_registry> op_registry::freeze() {
  frozen_ = true;
  return registry_;
}

std::vector<std::string> op_registry::types() const {
  return registry_->types();
}

bool in_python_op() noexcept {
  return running_python_op;
}

void check_not_in_python_op(const char* call) {
  if (running_python_op)
    throw_if(make_error(actors_errc::invalid_argument,
                        std::string{call}
                          + " from a Python op: its task holds the node's "
                            "workspace, so the call would wait forever"),
             error_kind::bad_input);
}

} // namespace epochrt::python
