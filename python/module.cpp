// The Python module `epochrt`: Caffe2's Python names over epochrt's public
// API. Each class's contract (the GIL, lifetimes, threads) is in its
// header; here the Python signatures, and the GIL released around every
// call that blocks in epochrt.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "arg_tensor.hpp"
#include "ckpt_functions.hpp"
#include "distributed_session.hpp"
#include "errors.hpp"
#include "interpreter_entry.hpp"
#include "job_runner.hpp"
#include "local_session.hpp"
#include "multi_node_checkpoint_manager.hpp"
#include "node_daemon.hpp"
#include "op_registry.hpp"
#include "output_slot.hpp"
#include "runtime.hpp"
#include "task_group_ref.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

[[noreturn]] void bad_argument(const std::string& text) {
  throw error(make_error(actors_errc::invalid_argument, text),
              error_kind::bad_input);
}

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

std::chrono::milliseconds to_milliseconds(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 1e9)
    bad_argument(std::string{what}
                 + ": expected a number of seconds above 0, got "
                 + std::to_string(seconds));
  return std::chrono::milliseconds{
    static_cast<int64_t>(std::ceil(seconds * 1000))};
}

// The registry a job or a session uses: `ops`, complete from now on, or
// epochrt's builtins.
std::shared_ptr<const epochrt::op_registry>
registry_of(const std::shared_ptr<op_registry>& ops) {
  return ops ? ops->freeze() : runtime::ops();
}

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

std::string workspace_name(workspace_type type) {
  return type == workspace_type::private_scratch ? "private" : "global";
}

workspace_type parse_workspace(const std::string& name) {
  if (name == "global")
    return workspace_type::global;
  if (name == "private")
    return workspace_type::private_scratch;
  bad_argument("workspace_type '" + name
               + "': expected \"global\" or \"private\"");
}

// The parts of a job built in Python: values, copied into what they are
// added to, as a job file's parts are.
void bind_job_parts(py::module_& m) {
  py::class_<op_def>(m, "Op", R"doc(
One call of an op: Op("Add", ["total", "x"], ["total"]), its arguments as
keyword arguments, made into tensors as a job file makes its JSON values
(int: i64, float: f64, bool, str; lists of ints, numbers or strings: 1-D;
a NumPy array keeps its dtype and shape).)doc")
    .def(py::init([](std::string type, std::vector<std::string> inputs,
                     std::vector<std::string> outputs, const py::kwargs& args) {
           op_def op;
           op.type = std::move(type);
           op.inputs = std::move(inputs);
           op.outputs = std::move(outputs);
           for (auto item : args) {
             auto name = item.first.cast<std::string>();
             op.args.emplace(name, arg_tensor(name, item.second));
           }
           return op;
         }),
         "type"_a, "inputs"_a = std::vector<std::string>{},
         "outputs"_a = std::vector<std::string>{})
    .def_readonly("type", &op_def::type)
    .def_readonly("inputs", &op_def::inputs)
    .def_readonly("outputs", &op_def::outputs)
    .def_property_readonly(
      "args",
      [](const op_def& self) {
        py::dict result;
        for (auto& [name, value] : self.args)
          result[py::str(name)] = to_ndarray(tensor{value});
        return result;
      },
      "The arguments, each as a new NumPy array.")
    .def(py::self == py::self)
    .def("__repr__", [](const op_def& self) {
      return "<epochrt.Op '" + self.type + "'>";
    });

  py::class_<step_def>(m, "Step", R"doc(
Ops run in order `num_iter` times (Caffe2's ExecutionStep); with
`stop_blob`, the step also ends after an iteration that leaves that blob
true, and num_iter 0 runs until it does.)doc")
    .def(py::init([](std::vector<op_def> ops, std::string name,
                     int64_t num_iter, std::string stop_blob) {
           return step_def{std::move(name), std::move(ops), num_iter,
                           std::move(stop_blob)};
         }),
         "ops"_a = std::vector<op_def>{}, py::kw_only(), "name"_a = "",
         "num_iter"_a = 1, "stop_blob"_a = "")
    .def(
      "add_op",
      [](step_def& self, op_def op) {
        self.ops.push_back(op);
      },
      "op"_a, "Appends a copy of `op`.")
    .def_readwrite("name", &step_def::name)
    .def_readwrite("num_iter", &step_def::num_iter)
    .def_readwrite("stop_blob", &step_def::stop_blob)
    .def_property_readonly(
      "ops",
      [](const step_def& self) {
        return self.ops;
      },
      "Copies of the ops.")
    .def(py::self == py::self);

  py::class_<task_def>(m, "Task", R"doc(
Steps run in order on `node` (Caffe2's Task): `ops` make one step, or
`steps` are given (not both). `workspace_type` "global" reads and writes
the node's workspace, which checkpoints save; "private" keeps the blobs
the task creates that the workspace lacks as scratch that dies with the
task. `outputs` are blobs the runner fetches when the task ends (a stop
condition names one). An empty name becomes "<group>/<node>/<index>"
when a TaskGroup takes the task.)doc")
    .def(py::init([](std::string node, std::optional<std::vector<op_def>> ops,
                     std::optional<std::vector<step_def>> steps,
                     std::string name, std::vector<std::string> outputs,
                     const std::string& workspace) {
           if (ops && steps)
             bad_argument("task on '" + node
                          + "': give either ops or steps, not both");
           task_def task;
           task.name = std::move(name);
           task.node = std::move(node);
           task.workspace = parse_workspace(workspace);
           task.outputs = std::move(outputs);
           if (ops) {
             step_def step;
             step.ops = std::move(*ops);
             task.steps.push_back(std::move(step));
           } else if (steps) {
             task.steps = std::move(*steps);
           }
           return task;
         }),
         "node"_a, "ops"_a = py::none(), py::kw_only(), "steps"_a = py::none(),
         "name"_a = "", "outputs"_a = std::vector<std::string>{},
         "workspace_type"_a = "global")
    .def(
      "add_op",
      [](task_def& self, op_def op) {
        if (self.steps.empty())
          self.steps.emplace_back();
        self.steps.back().ops.push_back(std::move(op));
      },
      "op"_a, "Appends a copy of `op` to the last step (a new one if none).")
    .def(
      "add_step",
      [](task_def& self, step_def step) {
        self.steps.push_back(std::move(step));
      },
      "step"_a, "Appends a copy of `step`.")
    .def(
      "add_output",
      [](task_def& self, std::string blob) {
        self.outputs.push_back(std::move(blob));
      },
      "blob"_a)
    .def_readwrite("name", &task_def::name)
    .def_readwrite("node", &task_def::node)
    .def_readwrite("outputs", &task_def::outputs)
    .def_property(
      "workspace_type",
      [](const task_def& self) {
        return workspace_name(self.workspace);
      },
      [](task_def& self, const std::string& name) {
        self.workspace = parse_workspace(name);
      })
    .def_property_readonly(
      "steps",
      [](const task_def& self) {
        return self.steps;
      },
      "Copies of the steps.")
    .def(py::self == py::self)
    .def("__repr__", [](const task_def& self) {
      return "<epochrt.Task '" + self.name + "' on '" + self.node + "'>";
    });

  py::class_<channel_def>(m, "Channel", R"doc(
A channel (Caffe2's BlobsQueue): a bounded FIFO queue hosted by `node`
whose items are one blob per name in `blobs`. Tasks of a group on any
node use it by name with the ops EnqueueBlobs, DequeueBlobs,
SafeDequeueBlobs and CloseBlobsQueue; each run of a group that uses it
gets it empty and open, and must leave it closed and empty. A put waits
while it holds `capacity` items. Add one to a job with Job.add_channel.)doc")
    .def(py::init([](std::string name, std::string node,
                     std::vector<std::string> blobs, int64_t capacity) {
           return channel_def{std::move(name), std::move(node), capacity,
                              std::move(blobs)};
         }),
         "name"_a, "node"_a, "blobs"_a, py::kw_only(), "capacity"_a = 1)
    .def_readonly("name", &channel_def::name)
    .def_readonly("node", &channel_def::node)
    .def_readonly("capacity", &channel_def::capacity)
    .def_readonly("blobs", &channel_def::blobs)
    .def(py::self == py::self)
    .def("__repr__", [](const channel_def& self) {
      return "<epochrt.Channel '" + self.name + "' on '" + self.node + "'>";
    });

  py::class_<task_group_ref>(m, "TaskGroup", R"doc(
One of a job's groups (Caffe2's TaskGroup): its tasks run on their nodes,
those of one node concurrently, nodes in parallel. Refers to its job,
which it keeps alive. TaskGroup() makes a group of its own, for
Session.run and an UploadTaskGroupBuilder.)doc")
    .def(py::init<>())
    .def("add_task", &task_group_ref::add_task, "task"_a,
         "Appends a copy of `task`, naming it \"<group>/<node>/<index>\" "
         "when it has no name; returns its name.")
    .def_property_readonly(
      "tasks",
      [](const task_group_ref& self) {
        return self.get().tasks;
      },
      "Copies of the tasks.")
    .def("__len__",
         [](const task_group_ref& self) {
           return self.get().tasks.size();
         })
    .def("__repr__", [](const task_group_ref& self) {
      if (self.standalone())
        return std::string{"<epochrt.TaskGroup of "}
        + std::to_string(self.get().tasks.size()) + " tasks>";
      return std::string{"<epochrt.TaskGroup "} + self.name() + ">";
    });
}

void bind_job(py::module_& m) {
  py::class_<job>(m, "Job", R"doc(
A job (Caffe2's Job): the init, epoch, download and exit task groups and
the stop conditions. Made from a job file (docs/job-file.md) with
`Job.load` or `Job.from_json`, or built in Python: Job(name), then tasks
added to its groups and stop conditions; both make the same definition,
and two jobs compare equal when their definitions are. `with Job() as
job:` gives the job (Caffe2's form; Task still names its node and is
added to a group by add_task).)doc")
    .def(py::init<std::string>(), "name"_a = "job")
    .def("__enter__",
         [](py::object self) {
           return self;
         })
    .def("__exit__",
         [](job&, py::args) {
           return false;
         })
    .def(
      "compile",
      [](job&, py::args, py::kwargs) {
        // Nothing to do: train checks the job against the session's ops.
      },
      "Accepted for Caffe2's scripts and does nothing: JobRunner.train "
      "checks the job against the session's ops before it runs.")
    .def_static(
      "load",
      [](const std::string& path, const std::shared_ptr<op_registry>& ops) {
        auto registry = registry_of(ops);
        auto result = [&] {
          py::gil_scoped_release release;
          return load_job_file(path, *registry);
        }();
        if (!result)
          throw error(result.error(), error_kind::bad_input);
        return std::move(*result);
      },
      "path"_a, "ops"_a = py::none(),
      "Reads and validates the job file at `path` against `ops` (an "
      "OpRegistry; None: the builtin ops); raises BadInput with the file, "
      "the field and what was expected.")
    .def_static(
      "from_json",
      [](const std::string& text, const std::string& source_name,
         const std::shared_ptr<op_registry>& ops) {
        auto result = parse_job_json(text, source_name, *registry_of(ops));
        if (!result)
          throw error(result.error(), error_kind::bad_input);
        return std::move(*result);
      },
      "text"_a, "source_name"_a = "<string>", "ops"_a = py::none(),
      "Parses and validates a job file's text; `source_name` starts every "
      "error message. Raises BadInput.")
    .def_property_readonly("name", &job::name)
    // keep_alive given to def_property_readonly itself is ignored
    // (pybind11 wraps the getter before it sees the extras): a group of a
    // temporary job referred to freed memory. The getter carries it.
    .def_property_readonly(
      "init_group",
      py::cpp_function(
        [](job& self) {
          return task_group_ref{self, task_group_ref::which::init};
        },
        py::keep_alive<0, 1>()),
      "Run once, from scratch only.")
    .def_property_readonly(
      "epoch_group",
      py::cpp_function(
        [](job& self) {
          return task_group_ref{self, task_group_ref::which::epoch};
        },
        py::keep_alive<0, 1>()),
      "Run every epoch until a stop condition holds.")
    .def_property_readonly(
      "download_group",
      py::cpp_function(
        [](job& self) {
          return task_group_ref{self, task_group_ref::which::download};
        },
        py::keep_alive<0, 1>()),
      "Run once after the last epoch.")
    .def_property_readonly(
      "exit_group",
      py::cpp_function(
        [](job& self) {
          return task_group_ref{self, task_group_ref::which::exit};
        },
        py::keep_alive<0, 1>()),
      "Run once, last.")
    .def("add_stop_condition", &job::add_stop_condition, "node"_a, "blob"_a,
         "The job stops after an epoch in which `blob` on `node` is true. "
         "As in Caffe2, when no epoch task on `node` outputs `blob` yet, "
         "adds one that does.")
    .def_property_readonly(
      "stop_conditions",
      [](const job& self) {
        std::vector<std::pair<std::string, std::string>> result;
        for (auto& cond : self.stop_conditions())
          result.emplace_back(cond.node, cond.blob);
        return result;
      },
      "(node, blob) pairs.")
    .def("add_channel", &job::add_channel, "channel"_a,
         "Declares a copy of `channel` for the tasks of any group. Checked "
         "with the job (validate, train) as a job file's channels are: "
         "unique names, a capacity from 1, at least one blob, and ops that "
         "use it as it is declared.")
    .def_property_readonly(
      "channels",
      [](const job& self) {
        return self.channels();
      },
      "Copies of the channels, in the order they were added.")
    .def("set_nodes_to_checkpoint", &job::set_nodes_to_checkpoint, "nodes"_a,
         "Checkpoint exactly these nodes; [] restores the default, the "
         "nodes of the init group.")
    .def(
      "validate",
      [](const job& self, const std::shared_ptr<op_registry>& ops) {
        throw_if(self.validate(*registry_of(ops)), error_kind::bad_input);
      },
      "ops"_a = py::none(),
      "Raises BadInput with the field at fault unless the job is valid "
      "for `ops` (None: the builtin ops). JobRunner.train checks it "
      "against the session's ops too.")
    .def(
      "__eq__",
      [](const job& self, const job& other) {
        return self.def() == other.def();
      },
      py::is_operator())
    .def("nodes", &job::nodes,
         "Every node that runs a task of any group, in first-use order.")
    .def("nodes_to_checkpoint", &job::nodes_to_checkpoint,
         "The nodes whose workspaces checkpoints save.")
    .def("__repr__", [](const job& self) {
      return "<epochrt.Job '" + self.name() + "'>";
    });
}

void bind_db_name(py::module_& m) {
  m.def(
    "db_name",
    [](int64_t epoch, const std::string& node_name,
       const std::string& db_prefix, std::optional<std::string> path_prefix) {
      return db_name(epoch, node_name, db_prefix, path_prefix.value_or(""));
    },
    "epoch"_a, "node_name"_a, "db_prefix"_a, "path_prefix"_a = py::none(),
    "The path of `node_name`'s checkpoint database of `epoch` (Caffe2's "
    "db_name): `path_prefix + node + \".\" + epoch` with a path_prefix, "
    "else `<db_prefix>/<node>.<epoch>`.");
}

void bind_epoch_limiter(py::module_& m) {
  m.def(
    "epoch_limiter",
    [](job& target, int64_t num_epochs) {
      throw_if(epoch_limiter(target, num_epochs), error_kind::bad_input);
    },
    "job"_a, "num_epochs"_a,
    "Makes `job` stop after `num_epochs` epochs (Caffe2's epoch_limiter): a "
    "counter of the epochs run, made by an init task and counted up by an "
    "epoch task whose output is a stop condition. The counter is "
    "checkpointed, so a resumed job counts on; the limit is not: a job "
    "given a higher limit after a finished or stopped run trains on up to "
    "it, one whose limit is at or below its last committed epoch ends at "
    "once. Raises BadInput for num_epochs < 1 or a job without a task.");
  m.def(
    "epoch_limit",
    [](const job& target) {
      return epoch_limit(target);
    },
    "job"_a,
    "The number of epochs after which the job's epoch limiters stop it "
    "(the smallest); None without one.");
}

// The network options of the CLI's flags (--tls-*, --connection-timeout-ms)
// from keyword arguments: TLS needs all three files or none.
network_options network_of(double connection_timeout,
                           const std::optional<std::string>& tls_certificate,
                           const std::optional<std::string>& tls_key,
                           const std::optional<std::string>& tls_ca) {
  auto timeout = to_milliseconds(connection_timeout, "connection_timeout");
  if (timeout < std::chrono::milliseconds{250}
      || timeout > std::chrono::hours{1})
    bad_argument("connection_timeout: from 0.25 to 3600 seconds, as "
                 "epochrt's --connection-timeout-ms");
  auto network = runtime::network_with(timeout);
  auto given = int{tls_certificate.has_value()} + int{tls_key.has_value()}
    + int{tls_ca.has_value()};
  if (given == 3)
    network.tls = tls_options{*tls_certificate, *tls_key, *tls_ca};
  else if (given != 0)
    bad_argument("TLS needs tls_certificate, tls_key and tls_ca, or none");
  return network;
}

std::optional<std::string>
secret_of(const std::optional<std::string>& secret_file) {
  if (!secret_file)
    return std::nullopt;
  auto secret = read_secret_file(*secret_file);
  if (!secret)
    throw error(secret.error(), error_kind::bad_input);
  return std::move(*secret);
}

node_address address_of(const std::string& text, bool any_port,
                        const std::string& what) {
  auto address = node_address::parse(text, any_port);
  if (!address)
    bad_argument(what + ": " + error_text(address.error()));
  return std::move(*address);
}

void bind_sessions(py::module_& m) {
  py::class_<session>(m, "Session", R"doc(
What LocalSession and DistributedSession share: the nodes a job runs on,
their blobs read and written with fetch and put.)doc")
    .def(
      "fetch",
      [](session& self, const std::string& node, const std::string& blob,
         bool copy, std::optional<py::array> out) -> py::array {
        // A node in this process: one copy at most, from the blob itself,
        // into memory NumPy allocates with huge pages where it can (the
        // node actor's reply copies into memory faulted in 4 KiB at a time:
        // 256 MiB took 170 ms there, 50 ms here).
        auto shared = [&] {
          py::gil_scoped_release release;
          return self.local_blob(node, blob);
        }();
        if (shared) {
          if (out) {
            copy_into(*shared, *out);
            return *out;
          }
          return copy ? copy_to_ndarray(*shared)
                      : to_readonly_ndarray(std::move(shared));
        }
        // A node on a daemon: the reply is a copy of its own, which the
        // array takes over.
        auto value = [&] {
          py::gil_scoped_release release;
          return self.fetch(node, blob);
        }();
        if (out) {
          copy_into(value, *out);
          return *out;
        }
        if (copy)
          return to_ndarray(std::move(value));
        return to_readonly_ndarray(
          std::make_shared<const tensor>(std::move(value)));
      },
      "node"_a, "blob"_a, py::kw_only(), "copy"_a = true, "out"_a = py::none(),
      R"doc(
A copy of blob `blob` of node `node` as a new NumPy array of the blob's
dtype (float32, float64, int32, int64, uint8, bool) and shape, with no
conversion of its elements; strings as an array of dtype object holding
bytes. Raises BadInput when the node has no such blob.

With `out`, an array of the blob's dtype and shape (writable,
C-contiguous), the elements are copied into it instead, and it is
returned: a loop that fetches every epoch reuses its memory. With
copy=False, a read-only array that shares the blob itself, no copy, for
a node in this process (the node writes a copy of a blob while anyone
holds it, so the array never changes); a node on a daemon sends a copy.
Raises TypeError or ValueError for an `out` that does not fit.)doc")
    .def(
      "put",
      [](session& self, const std::string& node, const std::string& blob,
         py::handle value) {
        // Refused before a conversion that may be long: every save of the
        // node would fail on the name.
        if (auto problem = blob_name_problem(blob); !problem.empty())
          bad_argument("put: " + problem);
        auto converted = from_ndarray(value);
        py::gil_scoped_release release;
        self.put(node, blob, std::move(converted));
      },
      "node"_a, "blob"_a, "value"_a, R"doc(
Stores `value` (anything numpy.asarray takes, of a dtype fetch returns;
str and bytes as strings) as blob `blob` of node `node`.)doc")
    .def(
      "run",
      [](py::object self, py::object what) -> py::object {
        if (py::hasattr(what, "_run_on"))
          return what.attr("_run_on")(self);
        if (!py::isinstance<task_group_ref>(what))
          throw py::type_error(
            "Session.run: expected a TaskGroup (or what a checkpoint "
            "manager's init returns), got "
            + std::string{py::str(py::type::of(what))});
        auto& sess = self.cast<session&>();
        check_not_in_python_op("Session.run");
        auto group = what.cast<task_group_ref&>().get();
        auto outputs = [&] {
          py::gil_scoped_release release;
          return sess.get().run(group, "group run by Session.run");
        }();
        if (!outputs)
          throw error(outputs.error(), error_kind::job_failed);
        py::dict result;
        for (auto& out : *outputs) {
          auto task = py::str(out.task);
          if (!result.contains(task))
            result[task] = py::dict{};
          result[task].cast<py::dict>()[py::str(out.blob)]
            = to_ndarray(std::move(out.value));
        }
        return std::move(result);
      },
      "group"_a, R"doc(
Runs every task of `group` on its node, as a job's groups run (Caffe2's
session.run), and returns the tasks' outputs: {task: {blob: array}}. Given
what a checkpoint manager's init(nodes) returns in Caffe2's form, does
that instead. Raises JobFailed (a task failed), NodeLost.)doc");

  py::class_<local_session, session>(m, "LocalSession", R"doc(
Runs the tasks of jobs on nodes in this process (Caffe2's LocalSession),
each node with a workspace of its own, on a pool of `worker_threads`
threads (None: the hardware threads, at least 4), running the ops of `ops`
(an OpRegistry; None: the builtin ops).)doc")
    .def(py::init([](std::optional<size_t> worker_threads,
                     const std::shared_ptr<op_registry>& ops) {
           auto registry = registry_of(ops);
           py::gil_scoped_release release;
           return std::make_unique<local_session>(worker_threads.value_or(0),
                                                  std::move(registry));
         }),
         "worker_threads"_a = py::none(), "ops"_a = py::none());

  py::class_<distributed_session, session>(m, "DistributedSession", R"doc(
Runs the nodes named in `nodes` ({node: "host:port"}) on node daemons
(`epochrt node`, epochrt.serve_node) and every other node in this
process, as LocalSession does, with `ops`. Every daemon is connected
before the constructor returns: a wrong address, secret or certificate
raises here. A daemon runs the ops it was started with; one that lacks an
op of a task refuses that task's group with an error naming the op.
Options, keyword only, as `epochrt run`'s: `secret_file` (the daemons'
shared secret, chmod 600), `tls_certificate`, `tls_key`, `tls_ca` (mutual
TLS: all three or none), `connection_timeout` (seconds without a word from
a daemon before its nodes are lost), `handshake_timeout`,
`reconnect_timeout` (seconds), `spares` (["host:port"], daemons standing
by for lost hosts), `worker_threads` (for the nodes in this process).
The TLS files and the connection timeout are the runtime's: make the
session before any other object of the module (or once none is alive)
when they are not the defaults.)doc")
    .def(
      py::init([](const std::map<std::string, std::string>& nodes,
                  const std::shared_ptr<op_registry>& ops,
                  const std::optional<std::string>& secret_file,
                  const std::optional<std::string>& tls_certificate,
                  const std::optional<std::string>& tls_key,
                  const std::optional<std::string>& tls_ca,
                  double connection_timeout, double handshake_timeout,
                  double reconnect_timeout,
                  const std::vector<std::string>& spares,
                  std::optional<size_t> worker_threads) {
        std::map<std::string, node_address> remote;
        for (auto& [node, where] : nodes)
          remote.emplace(node, address_of(where, false, "node '" + node + "'"));
        auto network
          = network_of(connection_timeout, tls_certificate, tls_key, tls_ca);
        distributed_session_options options;
        options.secret = secret_of(secret_file);
        options.timeouts.connection_timeout = network.connection_timeout;
        options.timeouts.worker_threads = worker_threads.value_or(0);
        options.handshake_timeout
          = to_milliseconds(handshake_timeout, "handshake_timeout");
        options.reconnect_timeout
          = to_milliseconds(reconnect_timeout, "reconnect_timeout");
        for (auto& spare : spares)
          options.spares.push_back(address_of(spare, false, "spare"));
        auto registry = registry_of(ops);
        py::gil_scoped_release release;
        return std::make_unique<distributed_session>(
          std::move(remote), std::move(registry), network, std::move(options));
      }),
      "nodes"_a, py::kw_only(), "ops"_a = py::none(),
      "secret_file"_a = py::none(), "tls_certificate"_a = py::none(),
      "tls_key"_a = py::none(), "tls_ca"_a = py::none(),
      "connection_timeout"_a = 5.0, "handshake_timeout"_a = 10.0,
      "reconnect_timeout"_a = 30.0, "spares"_a = std::vector<std::string>{},
      "worker_threads"_a = py::none())
    .def("address_of", &distributed_session::address_of, "node"_a,
         "Where `node` runs now (\"host:port\"; a move to a spare changes "
         "it); \"\" for a node in this process.");
}

void bind_node_daemon(py::module_& m) {
  py::class_<node_daemon, std::shared_ptr<node_daemon>>(m, "NodeServer",
                                                        R"doc(
A node daemon serving in this process, made by serve_node: stop() (or
leaving a `with` block) closes its port and drops the nodes a master
attached. Serving needs no GIL: the process's Python threads run on
while it serves, and the GIL is taken only to call a Python op.)doc")
    .def_property_readonly("port", &node_daemon::port)
    .def_property_readonly(
      "address",
      [](const node_daemon& self) {
        return node_address{self.host(), self.port()}.str();
      },
      "\"host:port\", for DistributedSession's nodes.")
    .def_property_readonly("checkpoint_root", &node_daemon::checkpoint_root)
    .def_property_readonly("serving", &node_daemon::serving)
    .def("stop", &node_daemon::stop, py::call_guard<py::gil_scoped_release>(),
         "Closes the port and drops every attached node. Idempotent.")
    .def("__enter__",
         [](const std::shared_ptr<node_daemon>& self) {
           return self;
         })
    .def("__exit__", [](node_daemon& self, py::args) {
      py::gil_scoped_release release;
      self.stop();
    });

  m.def(
    "serve_node",
    [](const std::string& listen, const std::string& checkpoint_root,
       const std::shared_ptr<op_registry>& ops,
       const std::optional<std::string>& secret_file,
       const std::optional<std::string>& tls_certificate,
       const std::optional<std::string>& tls_key,
       const std::optional<std::string>& tls_ca, double connection_timeout,
       double admission_timeout, uint64_t max_tensor_bytes,
       std::optional<size_t> worker_threads, bool shared_root) {
      auto address = address_of(listen, true, "listen");
      auto network
        = network_of(connection_timeout, tls_certificate, tls_key, tls_ca);
      if (max_tensor_bytes == 0)
        bad_argument("max_tensor_bytes must be positive");
      node_server_options options;
      options.host = address.host;
      options.port = address.port;
      options.checkpoint_root = checkpoint_root;
      options.lock_root = !shared_root;
      options.secret = secret_of(secret_file);
      options.max_tensor_bytes = max_tensor_bytes;
      options.admission_timeout
        = to_milliseconds(admission_timeout, "admission_timeout");
      options.worker_threads = worker_threads.value_or(0);
      auto registry = registry_of(ops);
      py::gil_scoped_release release;
      return std::make_shared<node_daemon>(std::move(registry), network,
                                           std::move(options));
    },
    "listen"_a = "127.0.0.1:0", py::kw_only(), "checkpoint_root"_a = ".",
    "ops"_a = py::none(), "secret_file"_a = py::none(),
    "tls_certificate"_a = py::none(), "tls_key"_a = py::none(),
    "tls_ca"_a = py::none(), "connection_timeout"_a = 5.0,
    "admission_timeout"_a = 5.0, "max_tensor_bytes"_a = uint64_t{1} << 30,
    "worker_threads"_a = py::none(), "shared_root"_a = false, R"doc(
Starts a node daemon in this process, as `epochrt node` does, and returns
its NodeServer: it listens on `listen` ("host:port"; port 0 picks a free
one, NodeServer.port says which), serves one master at a time the ops of
`ops` (an OpRegistry, Python ops included; None: the builtin ops), and
writes its nodes' checkpoints and files under `checkpoint_root`, which it
locks unless `shared_root`. Options as the command's flags: `secret_file`,
`tls_certificate`/`tls_key`/`tls_ca`, `connection_timeout`,
`admission_timeout` (seconds), `max_tensor_bytes`, `worker_threads`. A
non-loopback address needs a secret or TLS. Raises BadInput for a bad
option or a root another daemon holds, NodeLost when the address cannot
be listened on.)doc");
}

checkpoint_options manager_options(double timeout, int64_t full_every,
                                   size_t keep_last) {
  checkpoint_options options;
  options.timeout = to_milliseconds(timeout, "timeout");
  if (full_every < 0)
    bad_argument("full_every: expected 0 or more, got "
                 + std::to_string(full_every));
  options.full_every = full_every;
  options.keep_last = keep_last;
  return options;
}

void bind_checkpoint_manager(py::module_& m) {
  using manager = multi_node_checkpoint_manager;
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<manager, std::shared_ptr<manager>>(m, "MultiNodeCheckpointManager",
                                                R"doc(
The checkpoints of a job's nodes under `db_prefix`, one database per node
and epoch (`<db_prefix>/<node>.<epoch>`), saved and loaded in parallel
(Caffe2's MultiNodeCheckpointManager). Options, keyword only: `timeout`
(seconds one node may take for one checkpoint operation), `full_every`
(0: a save writes only the blobs that changed since the node's last one;
N: every payload at epochs divisible by N), `keep_last` (0: keep every
checkpoint; N: only the last N committed epochs).

Unlike Caffe2's, whose init, load and save build task groups for a
session to run, these calls do the work themselves: `init` takes the
session.)doc")
    .def(py::init([](const std::string& db_prefix, double timeout,
                     int64_t full_every, size_t keep_last) {
           auto options = manager_options(timeout, full_every, keep_last);
           py::gil_scoped_release release;
           return std::make_shared<manager>(db_prefix, std::move(options));
         }),
         "db_prefix"_a, py::kw_only(), "timeout"_a = 3600.0, "full_every"_a = 0,
         "keep_last"_a = 0)
    .def_property_readonly("db_prefix", &manager::db_prefix)
    .def("init", &manager::init, release(), "session"_a, "nodes"_a,
         "retrieve_from_epoch"_a = py::none(), "path_prefix"_a = "",
         "Binds the manager to `nodes` of `session` and lists the blobs "
         "their checkpoints hold: those of the nodes' workspaces now, or of "
         "the checkpoints of `retrieve_from_epoch`.")
    .def("load", &manager::load, release(), "epoch"_a, "path_prefix"_a = "",
         "Loads every node's checkpoint of `epoch`, every digest checked.")
    .def("save", &manager::save, release(), "epoch"_a,
         "Saves every node's checkpoint of `epoch`; "
         "write_checkpoint_metadata commits it.")
    .def("write_checkpoint_metadata", &manager::write_checkpoint_metadata,
         release(), "epoch"_a, "Records `epoch` as committed.")
    .def("get_resume_from_epoch_id", &manager::get_resume_from_epoch_id,
         release(), "user_epoch"_a = py::none(),
         "`user_epoch` when it is committed (BadInput otherwise), else the "
         "last committed epoch, else None.")
    .def("cp_accessible", &manager::cp_accessible, release(),
         "epoch"_a = py::none(),
         "Without an epoch: can the checkpoint directory be written? With "
         "one: is that epoch committed? False when there is no answer.")
    .def("check_db_exists", &manager::check_db_exists, release(), "epoch"_a,
         "True when every node's checkpoint of `epoch` exists and is "
         "complete.")
    .def("get_ckpt_db_name", &manager::get_ckpt_db_name, release(),
         "node_name"_a, "epoch"_a,
         "The database path of `node_name`'s checkpoint of `epoch`.")
    .def("blob_list", &manager::blob_list, release(), "node"_a,
         "The blobs the last `init` (or `train`) listed for `node`.")
    .def("load_blobs_locally", &manager::load_blobs_locally, release(),
         "nodes"_a, "blob_names"_a, "epoch"_a, "session"_a,
         "Loads only `blob_names` from every node's checkpoint of `epoch` "
         "into that node, binding the manager to `nodes` first when no "
         "init did (Caffe2's load_blobs_locally): True, or False with "
         "nothing loaded when a checkpoint of that epoch does not exist.")
    .def(
      "set_params",
      [](manager& self, const std::vector<std::string>& nodes,
         std::optional<std::string> path_prefix) {
        self.set_params(nodes, path_prefix.value_or(""));
      },
      release(), "nodes"_a, "path_prefix"_a = py::none(),
      "Sets the nodes and path prefix, as JobRunner.train does first; "
      "refuses a directory another job holds.")
    .def(
      "report_checkpoint_stats",
      [](manager& self, const std::string& action) {
        auto stats = [&] {
          py::gil_scoped_release release;
          return self.report_checkpoint_stats(action);
        }();
        py::list result;
        for (auto& x : stats) {
          py::dict d;
          d["node"] = x.node;
          d["db"] = x.db;
          d["seconds"] = static_cast<double>(x.duration_us) / 1e6;
          d["bytes"] = x.bytes;
          d["blobs"] = x.blobs;
          d["written_bytes"] = x.written_bytes;
          d["reused_blobs"] = x.reused_blobs;
          d["snapshot_seconds"] = static_cast<double>(x.snapshot_us) / 1e6;
          d["sync_seconds"] = static_cast<double>(x.sync_us) / 1e6;
          result.append(std::move(d));
        }
        return result;
      },
      "action_name"_a,
      "Records the stats of the last save or load under `action_name` in "
      "the checkpoint metadata and returns them, one dict per node: node, "
      "db, seconds, bytes, blobs, written_bytes, reused_blobs, "
      "snapshot_seconds, sync_seconds.")
    .def_property_readonly("nodes", &manager::nodes, release(),
                           "The nodes of the last set_params or init.");

  py::class_<checkpoint_manager, manager, std::shared_ptr<checkpoint_manager>>(
    m, "_CheckpointManager",
    "The native part of CheckpointManager (the package's).")
    .def(py::init([](const std::string& db_prefix, const std::string& node,
                     double timeout, int64_t full_every, size_t keep_last) {
           auto options = manager_options(timeout, full_every, keep_last);
           py::gil_scoped_release release;
           return std::make_shared<checkpoint_manager>(db_prefix, node,
                                                       std::move(options));
         }),
         "db_prefix"_a, "node_name"_a, py::kw_only(), "timeout"_a = 3600.0,
         "full_every"_a = 0, "keep_last"_a = 0)
    .def_property_readonly("node_name", &checkpoint_manager::node_name)
    .def("_load_blobs_from_checkpoint",
         &checkpoint_manager::load_blobs_from_checkpoint, release(),
         "blob_names"_a, "epoch"_a, "session"_a);
}

// JobRunner.train: the watch made and destroyed with the GIL, the job run
// without it.
int64_t train_watched(job_runner& self, session& sess, py::object on_epoch,
                      py::object stats_json, py::object metrics) {
  if (!on_epoch.is_none() && !PyCallable_Check(on_epoch.ptr()))
    bad_argument("on_epoch: expected a function of one argument, the "
                 "epoch's record");
  auto watch = std::make_unique<job_runner::epoch_watch>();
  if (!metrics.is_none()) {
    if (py::isinstance<py::str>(metrics) || py::isinstance<py::bytes>(metrics))
      bad_argument("metrics: expected a list of blob names, got a string");
    watch->metrics = metrics.cast<std::vector<std::string>>();
    auto problem = metrics_problem(self.get_job(), watch->metrics);
    if (!problem.empty())
      bad_argument("metrics: " + problem);
  }
  watch->on_epoch = std::move(on_epoch);
  if (!stats_json.is_none())
    watch->stats_json = py::module_::import("os")
                          .attr("fspath")(stats_json)
                          .cast<std::string>();
  auto watched = !watch->on_epoch.is_none() || watch->stats_json
    || !watch->metrics.empty();
  py::gil_scoped_release release;
  auto result = self.train(sess, watched ? watch.get() : nullptr);
  py::gil_scoped_acquire gil;
  watch.reset();
  return result;
}

void bind_job_runner(py::module_& m) {
  py::class_<job_runner>(m, "JobRunner", R"doc(
Runs a job with checkpoints at epoch boundaries (Caffe2's JobRunner): with
a checkpoint manager, epoch 0 is saved after init and every epoch after it
runs, and the job resumes from `resume_from_epoch` or, when None, from the
last committed epoch. `runner(session)` is `runner.train(session)`.

`upload_task_group_builder` (Caffe2's): an UploadTaskGroupBuilder whose
`build(epoch, checkpoint_manager)` returns the TaskGroup that uploads the
checkpoints of the last epoch, or None; the runner runs it after the
epochs, before the download group (again after a recovery: it must be
safe to run twice). It runs on the runner's thread, with the GIL; there
it may ask the manager for names only (get_ckpt_db_name, db_prefix,
nodes; blob_list is filled once train returns). An exception it raises
fails the job.

A job resumes only checkpoints that its own definition committed: its
groups, ops and arguments, and the code of its Python ops (their
`version`, or a digest of their code, constants and defaults); not its
name or its epoch limit. Another definition raises BadInput naming the
first difference, unless `allow_job_change`.

`stop_grace` (seconds; default 60): how long the group running when a stop
is requested (request_stop, Ctrl-C) may still run before it is cancelled,
as a second Ctrl-C or request_stop_now cancels it at once.)doc")
    .def(
      py::init([](const job& the_job,
                  std::shared_ptr<multi_node_checkpoint_manager> manager,
                  std::optional<int64_t> resume_from_epoch, py::object upload,
                  bool allow_job_change, std::optional<double> stop_grace) {
        if (stop_grace && !(*stop_grace >= 0 && *stop_grace <= 86400.0 * 365))
          bad_argument("stop_grace: seconds from 0 to a year");
        if (!upload.is_none() && !py::hasattr(upload, "build"))
          bad_argument("upload_task_group_builder: expected an object "
                       "with build(epoch, checkpoint_manager), as "
                       "UploadTaskGroupBuilder's subclasses have");
        return std::make_unique<job_runner>(
          the_job, std::move(manager), resume_from_epoch, std::move(upload),
          allow_job_change, stop_grace);
      }),
      "job"_a, "checkpoint_manager"_a = py::none(),
      "resume_from_epoch"_a = py::none(),
      "upload_task_group_builder"_a = py::none(), py::kw_only(),
      "allow_job_change"_a = false, "stop_grace"_a = py::none())
    .def("__call__", train_watched, "session"_a, py::kw_only(),
         "on_epoch"_a = py::none(), "stats_json"_a = py::none(),
         "metrics"_a = py::none(),
         "train(session): Caffe2's form, runner(session).")
    .def("save_checkpoints", &job_runner::save_checkpoints,
         py::call_guard<py::gil_scoped_release>(), "epoch"_a, "session"_a,
         R"doc(
Saves and commits the checkpoints of `epoch` of the job's nodes to
checkpoint (Caffe2's save_checkpoints), binding the manager to them
first. A checkpoint directory that cannot be written, or a save that
fails, is a warning in the log and no error, as in Caffe2. Raises
BadInput without a checkpoint manager, or when another job holds the
directory.)doc")
    .def("train", train_watched, "session"_a, py::kw_only(),
         "on_epoch"_a = py::none(), "stats_json"_a = py::none(),
         "metrics"_a = py::none(), R"doc(
Runs the job to its end on `session` and returns the last epoch.

`stats_json`: a file that gets what every epoch cost, one JSON object per
line, as `epochrt run --stats-json` writes it (docs/operations.md):
epoch and checkpoint times, bytes per node, failures and recoveries.
`on_epoch`: called on this thread with each epoch's record once its
figures are in (after its commit, with a checkpoint manager): a dict of
that line's fields ("epoch", "epoch_us", "snapshot_us", "commit_us",
"committed", "nodes", ...) plus "outputs", {task: {blob: array}}, the
epoch group's outputs (a loss, say). The job does not wait for it: a
stop it causes (an exception it raises, which train then raises) comes
at the first epoch boundary after it. It may ask the checkpoint manager
for names only (docs/python.md). `metrics`: epoch task outputs (blob
names) of one number each, a loss say, that go into the lines (and
records) as "metrics": {blob: {task: number}}, which
examples/plot_stats.py draws; a name no epoch task outputs raises BadInput.

Raises
JobFailed (a task failed; the checkpoint to resume from cannot be loaded),
NodeLost, Stopped (after request_stop), BadInput (an epoch never
committed, a job that cannot end, a checkpoint directory another job
holds, checkpoints another definition of the job committed).)doc")
    .def("load_blobs_from_checkpoints",
         &job_runner::load_blobs_from_checkpoints,
         py::call_guard<py::gil_scoped_release>(), "blob_names"_a, "epoch"_a,
         "session"_a, R"doc(
Loads only `blob_names` from the checkpoints of `epoch` of the job's nodes
to checkpoint into `session` (Caffe2's load_blobs_from_checkpoints): True,
or False when a checkpoint of that epoch does not exist. Raises BadInput
without a checkpoint manager.)doc")
    .def("request_stop", &job_runner::request_stop,
         "Asks train to stop after the running epoch and its checkpoint; "
         "train then raises Stopped. Safe from any thread. Ctrl-C during "
         "train on the main thread does the same (and train raises "
         "KeyboardInterrupt).")
    .def("request_stop_now", &job_runner::request_stop_now,
         "Asks train to stop at once: the running group is cancelled on "
         "every node, even one whose tasks wait forever in a channel or a "
         "collective, and train raises Stopped; the running epoch is not "
         "committed. A second Ctrl-C during train does the same.")
    .def_property_readonly("job", &job_runner::get_job)
    .def_property_readonly("upload_task_group_builder",
                           &job_runner::upload_builder)
    .def_property_readonly("checkpoint_manager",
                           &job_runner::checkpoint_manager);
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
