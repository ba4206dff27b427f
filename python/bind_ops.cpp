#include "bindings.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "call_arguments.hpp"
#include "op_registry.hpp"
#include "output_slot.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

// An op's arity from Python: None (any number), n (exactly n) or
// (min, max) with max None for no bound.
std::pair<int, int> arity(py::handle spec, const char* what) {
  auto check = [&](int64_t n) {
    if (n < 0 || n > 1000000)
      bad_argument(std::string{what} + ": expected a count from 0, got "
                   + std::to_string(n));
    return static_cast<int>(n);
  };
  if (spec.is_none())
    return {0, -1};
  if (py::isinstance<py::int_>(spec)) {
    auto n = check(spec.cast<int64_t>());
    return {n, n};
  }
  if (py::isinstance<py::tuple>(spec) && py::len(spec) == 2) {
    auto bounds = spec.cast<py::tuple>();
    auto low = check(bounds[0].cast<int64_t>());
    if (bounds[1].is_none())
      return {low, -1};
    return {low, check(bounds[1].cast<int64_t>())};
  }
  bad_argument(std::string{what}
               + ": expected None, a count or a (min, max) tuple");
}

arg_kind parse_arg_kind(const std::string& arg, const std::string& name) {
  const std::pair<const char*, arg_kind> kinds[] = {
    {"integer", arg_kind::integer},
    {"number", arg_kind::number},
    {"boolean", arg_kind::boolean},
    {"string", arg_kind::string},
    {"integer_list", arg_kind::integer_list},
    {"number_list", arg_kind::number_list},
    {"string_list", arg_kind::string_list},
    {"path", arg_kind::path},
  };
  for (auto& [text, kind] : kinds)
    if (name == text)
      return kind;
  bad_argument("arg '" + arg + "': kind '" + name
               + "': expected integer, number, boolean, string, "
                 "integer_list, number_list, string_list or path");
}

} // namespace

void bind_op_registry(py::module_& m) {
  py::class_<output_slot, std::shared_ptr<output_slot>>(m, "OpOutput", R"doc(
One output of a call of an op registered with fills_outputs: fill it
with `reshape` (then write the array it returns in place) or `feed`. It
serves its call only: after the call, every use raises BadInput.)doc")
    .def("reshape", &output_slot::reshape, "shape"_a, "dtype"_a = "f32",
         R"doc(
A zero-filled writable array of `shape` and `dtype` ("f32", "f64", "i32",
"i64", "u8", "bool"), which is the output as the op leaves it: no copy,
unless the op keeps the array or a view of it past its call (then the
output is a copy as the call ends). Replaces an earlier reshape or
feed. Raises BadInput for another dtype or a negative dimension.)doc")
    .def("feed", &output_slot::feed, "value"_a,
         "Makes a copy of `value` (anything Session.put takes) the output.")
    .def_property_readonly("data", &output_slot::data,
                           "The array of the last reshape; None before one "
                           "or after a feed.")
    .def_property_readonly("name", &output_slot::name,
                           "The blob the output is written to.")
    .def("__repr__", [](const output_slot& self) {
      return "<epochrt.OpOutput '" + self.name() + "'>";
    });

  py::class_<op_registry, std::shared_ptr<op_registry>>(m, "OpRegistry",
                                                        R"doc(
The op types a session runs and a job is checked against: epochrt's
builtin ops plus the ops registered here, written in Python. Hand it to
LocalSession(ops=...) and Job.load/from_json(ops=...); from then on it is
complete and `register` raises BadInput.

A Python op is called on one of the session's worker threads, with the GIL
taken for the call only, as fn(*inputs, **args): each input a NumPy array
over the blob's own bytes (no copy; strings as an object array of bytes),
each argument the call gives as a Python value. It returns its output (one
output), a tuple of them (several) or None (none), anything numpy.asarray
takes of a dtype epochrt has. An exception fails the task: the job raises
JobFailed whose text holds the exception's traceback. It must not call the
session, a checkpoint manager or a job runner (they raise BadInput there:
its task holds the node's workspace).

In-place updates are safe and cost no copy. An input that the call also
writes (the same blob among its outputs) comes writable: update it in
place (`torch.from_numpy(w).sub_(lr * g)`, as optimizer.step() does) and
return it, and the blob is that array's memory. Any other input comes
read-only, which NumPy enforces and PyTorch ignores: a write into it is
seen, by the job and by the next checkpoint, never by a checkpoint already
taken (epochrt hands an op a blob that a snapshot still holds as a copy).
An array the op keeps past its call (or a view of it, a torch tensor over
it) is detached from the blob when the call ends: it keeps the values it
had then, and later writes into it reach neither the job nor its
checkpoints. See docs/python.md.)doc")
    .def(py::init<>())
    .def(
      "register",
      [](op_registry& self, std::string type, py::function fn,
         py::handle inputs, py::handle outputs, py::object args,
         bool fills_outputs, std::string doc, py::object version) {
        auto [min_inputs, max_inputs] = arity(inputs, "inputs");
        auto [min_outputs, max_outputs] = arity(outputs, "outputs");
        std::vector<arg_spec> specs;
        if (!args.is_none())
          for (auto item : args.cast<py::dict>()) {
            arg_spec spec;
            spec.name = item.first.cast<std::string>();
            spec.kind
              = parse_arg_kind(spec.name, item.second.cast<std::string>());
            specs.push_back(std::move(spec));
          }
        std::optional<std::string> given;
        if (!version.is_none())
          given = std::string{py::str(version)};
        self.add(std::move(type), std::move(fn), min_inputs, max_inputs,
                 min_outputs, max_outputs, std::move(specs), fills_outputs,
                 std::move(doc), std::move(given));
      },
      "type"_a, "fn"_a, py::kw_only(), "inputs"_a = py::none(), "outputs"_a = 1,
      "args"_a = py::none(), "fills_outputs"_a = false, "doc"_a = "",
      "version"_a = py::none(), R"doc(
Registers `fn` as op `type`. `inputs` and `outputs`: None (any number), a
count, or (min, max) with max None for no bound. `args`: the arguments a
call may give, {name: kind}, kind one of integer, number, boolean,
string, integer_list, number_list, string_list, path; all optional, passed
to fn as keyword arguments only when the call gives them. fn returns
the call's output, a tuple of its outputs, or None; with `fills_outputs`,
fn gets one OpOutput per output after its inputs, fills each (reshape,
feed) and returns None, as Caffe2's Python op did. Raises BadInput for a
type already registered or a registry already in use.

The op's code is part of the definition of every job that calls it, so a
changed op never resumes state the old one checkpointed (JobRunner refuses,
naming the op): `version` (any str or int) when given, else a digest of
fn's code, its constants, the code nested in it and its defaults (of
`__call__` for a callable object, of the function of a functools.partial
with its arguments). Give a `version` when the digest would change for no
reason of yours, or would not see a change you made (code fn calls, a
closure's values).)doc")
    .def("types", &op_registry::types, "Every op type, sorted.")
    .def("__contains__",
         [](const op_registry& self, const std::string& type) {
           auto all = self.types();
           return std::find(all.begin(), all.end(), type) != all.end();
         })
    .def_property_readonly("frozen", &op_registry::frozen,
                           "True once a session or a job uses it.");
  m.def("code_digest", &code_digest, "fn"_a, R"doc(
The digest register() takes as an op's code version when given none: of
fn's bytecode, names and constants, the code nested in it and its
defaults, without line numbers or file names ("code:" and 16 hex digits;
"" for a callable without Python code). For helpers that register ops
calling user code, so that a change of that code is a change of the job.)doc");
}

} // namespace epochrt::python
