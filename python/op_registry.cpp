#include "op_registry.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include "errors.hpp"
#include "interpreter_entry.hpp"
#include "output_slot.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;

namespace epochrt::python {

namespace {

thread_local bool running_python_op = false;

// A Python object that any thread may drop: the last owner takes the GIL
// to release it, and leaks it when the interpreter is ending.
class held_object {
public:
  explicit held_object(py::object obj) : ptr_(obj.release().ptr()) {}

  ~held_object() {
    interpreter_entry entry;
    if (!entry.ok())
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

std::string type_name(py::handle value) {
  return py::str(value.get_type().attr("__name__"));
}

// What the op returned, one value per output of the call; throws (a
// std::exception saying what is wrong) before any output is written.
std::vector<py::object> returned_values(const op_context& ctx,
                                        const py::object& result) {
  auto count = ctx.output_count();
  std::vector<py::object> values;
  if (count == 0) {
    if (!result.is_none())
      throw std::runtime_error("returned a " + type_name(result)
                               + ", but the call has no output: return None");
    return values;
  }
  if (result.is_none())
    throw std::runtime_error("returned None, but the call has "
                             + count_text(count));
  if (count == 1) {
    // NumPy would stack a tuple into one array: (a, b) is two outputs'
    // worth, never one.
    if (py::isinstance<py::tuple>(result))
      throw std::runtime_error(
        "returned a tuple of " + std::to_string(py::len(result))
        + " items, but the call has 1 output: return the value itself");
    values.push_back(result);
    return values;
  }
  if (!py::isinstance<py::tuple>(result) && !py::isinstance<py::list>(result))
    throw std::runtime_error("returned a " + type_name(result)
                             + ", but the call has " + count_text(count)
                             + ": return a tuple of them");
  auto items = py::reinterpret_borrow<py::sequence>(result);
  if (items.size() != count)
    throw std::runtime_error("returned " + count_text(items.size())
                             + ", but the call has " + count_text(count));
  for (auto item : items)
    values.push_back(py::reinterpret_borrow<py::object>(item));
  return values;
}

// The tensor of output `i`, `value` as the op returned it.
tensor output_tensor(const op_context& ctx, size_t i, py::handle value) {
  try {
    return from_ndarray(value);
  } catch (py::error_already_set& ex) {
    auto text = std::string{py::str(ex.type().attr("__name__"))} + ": "
      + std::string{py::str(ex.value())};
    throw std::runtime_error("output '" + ctx.def().outputs[i]
                             + "': returned a " + type_name(value)
                             + " that is no tensor: " + text);
  } catch (const std::exception& ex) {
    throw std::runtime_error("output '" + ctx.def().outputs[i]
                             + "': returned a " + type_name(value)
                             + " that is no tensor: " + ex.what());
  }
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

// The inputs of one call of a Python op as the op sees them: each distinct
// input blob exposed once (op_context::expose_input), as an array over the
// blob's own bytes, writable when the call also writes the blob (an
// in-place update, as `optimizer.step()` makes), read-only otherwise (a
// hint NumPy keeps and PyTorch ignores: a write is seen all the same).
// Strings are handed as a copy. Needs the GIL.
class exposed_inputs {
public:
  explicit exposed_inputs(op_context& ctx) : ctx_(ctx) {
    auto& def = ctx.def();
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < def.inputs.size(); ++i) {
      auto [at, fresh] = first.emplace(def.inputs[i], i);
      source_.push_back(at->second);
      if (!fresh) {
        // One array per blob: a second would count as a kept reference.
        arrays_.emplace_back();
        tensors_.push_back(tensors_[at->second]);
        continue;
      }
      if (ctx.input(i).type == dtype::string) {
        arrays_.push_back(to_readonly_ndarray(ctx.share_input(i)));
        tensors_.push_back(nullptr);
        continue;
      }
      auto exposed = ctx.expose_input(i);
      auto array = to_writable_ndarray(exposed);
      auto written
        = std::find(def.outputs.begin(), def.outputs.end(), def.inputs[i])
        != def.outputs.end();
      if (!written)
        array.attr("setflags")(py::arg("write") = false);
      arrays_.push_back(std::move(array));
      tensors_.push_back(std::move(exposed));
      distinct_.push_back(i);
    }
  }

  exposed_inputs(const exposed_inputs&) = delete;
  exposed_inputs& operator=(const exposed_inputs&) = delete;

  const py::object& array(size_t i) const {
    return arrays_[source_[i]];
  }

  // The exposed input whose bytes `object` views whole, if any.
  std::shared_ptr<tensor> viewed_by(py::handle object) const {
    for (auto i : distinct_)
      if (views_whole(object, *tensors_[i]))
        return tensors_[i];
    return nullptr;
  }

  // What the op wrote into a PRIVATE task's scratch inputs becomes theirs.
  void settle() {
    for (auto i : distinct_)
      ctx_.settle_input(i, tensors_[i]);
  }

  // Detaches every input the op kept a reference to, once every other
  // reference of the call is gone: a kept array (or a view, or a torch
  // tensor over it) could write the blob after the call, under a snapshot
  // or another node. The blob holds a copy from then on, and the kept
  // array is the op's alone: it keeps the values it had when the call
  // ended, and what is written into it reaches neither the job nor its
  // checkpoints. (An array held by a reference cycle until the collector
  // runs costs a copy too, needlessly but safely.)
  void detach_kept() {
    for (auto i : distinct_)
      if (arrays_[i].ref_count() > 1)
        ctx_.disown_input(i, tensors_[i].get());
  }

private:
  op_context& ctx_;
  std::vector<size_t> source_;     // per input: the first input of its blob
  std::vector<py::object> arrays_; // per first input of a blob; else empty
  std::vector<std::shared_ptr<tensor>> tensors_; // per input; null: strings
  std::vector<size_t> distinct_; // the first input of each exposed blob
};

// The op_function of a Python op: runs on a worker thread, which holds the
// node's workspace and takes the GIL for the call only.
class python_op {
public:
  python_op(py::function fn, std::vector<arg_spec> args, bool fills_outputs)
    : fn_(std::make_shared<held_object>(std::move(fn))), args_(std::move(args)),
      fills_outputs_(fills_outputs) {}

  caf::error operator()(op_context& ctx) const {
    interpreter_entry entry;
    if (!entry.ok())
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
    caf::error result;
    std::optional<exposed_inputs> inputs;
    try {
      inputs.emplace(ctx);
      result = call(ctx, *inputs);
    } catch (const py::error_already_set& ex) {
      result = ctx.fail(runtime_errc::op_failed,
                        "raised an exception:\n" + traceback_text(ex));
    } catch (const std::exception& ex) {
      result = ctx.fail(runtime_errc::op_failed, ex.what());
    }
    // Every reference the call made is gone by now, its exception's too.
    if (inputs)
      inputs->detach_kept();
    return result;
  }

private:
  caf::error call(op_context& ctx, exposed_inputs& inputs) const {
    auto slot_count = fills_outputs_ ? ctx.output_count() : 0;
    py::tuple args(ctx.input_count() + slot_count);
    for (size_t i = 0; i < ctx.input_count(); ++i)
      args[i] = inputs.array(i);
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
    if (fills_outputs_) {
      auto outputs = filled_outputs(result, slots);
      inputs.settle();
      for (size_t i = 0; i < outputs.size(); ++i)
        ctx.set_output(i, std::move(outputs[i]));
      return {};
    }
    auto values = returned_values(ctx, result);
    // An output that is an input's array, updated in place and returned,
    // is that blob's tensor: no copy.
    std::vector<std::shared_ptr<tensor>> same(values.size());
    std::vector<tensor> copies(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      same[i] = inputs.viewed_by(values[i]);
      if (!same[i])
        copies[i] = output_tensor(ctx, i, values[i]);
    }
    inputs.settle();
    for (size_t i = 0; i < values.size(); ++i)
      if (same[i])
        ctx.set_output_shared(i, std::move(same[i]));
      else
        ctx.set_output(i, std::move(copies[i]));
    return {};
  }

private:
  // Shared: std::function copies its target, and a copy must not touch a
  // reference count without the GIL.
  std::shared_ptr<held_object> fn_;
  std::vector<arg_spec> args_;
  bool fills_outputs_;
};

// What a Python op's code is, for a job's definition: a digest of the
// bytecode, names and constants of its code object and of every code
// object nested in it, and of its defaults; what varies from one run to
// the next (line numbers, file names, object addresses) is left out, so
// that only a change of the code changes it. Constants and defaults
// count by value when they are plain data, by type otherwise.
constexpr const char* code_digest_source = R"py(
def digest(fn):
    import functools, hashlib, types
    h = hashlib.sha256()
    plain = (type(None), bool, int, float, complex, str, bytes)
    def value(x):
        if isinstance(x, plain):
            return repr(x)
        if isinstance(x, (tuple, list, frozenset, set)):
            items = [value(i) for i in x]
            if isinstance(x, (frozenset, set)):
                items.sort()
            return type(x).__name__ + '(' + ','.join(items) + ')'
        if isinstance(x, dict):
            return 'dict(' + ','.join(sorted(value(k) + ':' + value(v) for k, v in x.items())) + ')'
        if isinstance(x, types.CodeType):
            return 'code(' + code(x) + ')'
        return '<' + type(x).__qualname__ + '>'
    def code(c):
        return '|'.join([c.co_code.hex(), repr(c.co_names), repr(c.co_varnames),
                         repr(c.co_freevars), str(c.co_argcount), str(c.co_kwonlyargcount),
                         value(c.co_consts)])
    target = fn
    while isinstance(target, functools.partial):
        h.update(('partial' + value(target.args) + value(target.keywords)).encode())
        target = target.func
    f = getattr(target, '__func__', target)
    if not hasattr(f, '__code__'):
        call = getattr(type(target), '__call__', None)
        f = getattr(call, '__func__', call)
    c = getattr(f, '__code__', None)
    if c is None:
        return ''
    h.update(code(c).encode())
    h.update(value(getattr(f, '__defaults__', None)).encode())
    h.update(value(getattr(f, '__kwdefaults__', None)).encode())
    return 'code:' + h.hexdigest()[:16]
)py";

} // namespace

std::string code_digest(const py::function& fn) {
  py::dict scope;
  py::exec(code_digest_source, scope);
  return scope["digest"](fn).cast<std::string>();
}

op_registry::op_registry()
  : registry_(std::make_shared<epochrt::op_registry>()) {
  if (auto err = add_builtin_ops(*registry_))
    throw std::logic_error("epochrt's builtin ops do not register: "
                           + coded_error_text(err));
}

void op_registry::add(std::string type, py::function fn, int min_inputs,
                      int max_inputs, int min_outputs, int max_outputs,
                      std::vector<arg_spec> args, bool fills_outputs,
                      std::string doc, std::optional<std::string> version) {
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
  auto code_version = version ? "v:" + *version : code_digest(fn);
  schema.fn = python_op{std::move(fn), std::move(args), fills_outputs};
  throw_if(registry_->add(std::move(schema), std::move(code_version)),
           error_kind::bad_input);
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
