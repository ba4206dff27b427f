#include "bindings.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "arg_tensor.hpp"
#include "call_arguments.hpp"
#include "errors.hpp"
#include "op_registry.hpp"
#include "task_group_ref.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

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

} // namespace

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

} // namespace epochrt::python
