// The Python module `epochrt`: Caffe2's Python names over epochrt's public
// API. Each class's contract (the GIL, lifetimes, threads) is in its
// header; here the Python signatures, and the GIL released around every
// call that blocks in epochrt.

#include <chrono>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "errors.hpp"
#include "job_runner.hpp"
#include "local_session.hpp"
#include "multi_node_checkpoint_manager.hpp"
#include "runtime.hpp"
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

void bind_job(py::module_& m) {
  py::class_<job>(m, "Job", R"doc(
A job (Caffe2's Job): the init, epoch, download and exit task groups and
the stop conditions. Made from a job file (docs/job-file.md) with
`Job.load` or `Job.from_json`; its ops are epochrt's builtin ops.)doc")
    .def_static(
      "load",
      [](const std::string& path) {
        auto result = [&] {
          py::gil_scoped_release release;
          return load_job_file(path, *runtime::ops());
        }();
        if (!result)
          throw error(result.error(), error_kind::bad_input);
        return std::move(*result);
      },
      "path"_a,
      "Reads and validates the job file at `path`; raises BadInput with "
      "the file, the field and what was expected.")
    .def_static(
      "from_json",
      [](const std::string& text, const std::string& source_name) {
        auto result = parse_job_json(text, source_name, *runtime::ops());
        if (!result)
          throw error(result.error(), error_kind::bad_input);
        return std::move(*result);
      },
      "text"_a, "source_name"_a = "<string>",
      "Parses and validates a job file's text; `source_name` starts every "
      "error message. Raises BadInput.")
    .def_property_readonly("name", &job::name)
    .def("nodes", &job::nodes,
         "Every node that runs a task of any group, in first-use order.")
    .def("nodes_to_checkpoint", &job::nodes_to_checkpoint,
         "The nodes whose workspaces checkpoints save.")
    .def("__repr__", [](const job& self) {
      return "<epochrt.Job '" + self.name() + "'>";
    });
}

void bind_local_session(py::module_& m) {
  py::class_<local_session>(m, "LocalSession", R"doc(
Runs the tasks of jobs on nodes in this process (Caffe2's LocalSession),
each node with a workspace of its own, on a pool of `worker_threads`
threads (None: the hardware threads, at least 4).)doc")
    .def(py::init([](std::optional<size_t> worker_threads) {
           py::gil_scoped_release release;
           return std::make_unique<local_session>(worker_threads.value_or(0));
         }),
         "worker_threads"_a = py::none())
    .def(
      "fetch",
      [](local_session& self, const std::string& node,
         const std::string& blob) {
        auto value = [&] {
          py::gil_scoped_release release;
          return self.fetch(node, blob);
        }();
        return to_ndarray(std::move(value));
      },
      "node"_a, "blob"_a, R"doc(
A copy of blob `blob` of node `node` as a new NumPy array of the blob's
dtype (float32, float64, int32, int64, uint8, bool) and shape, with no
conversion of its elements; strings as an array of dtype object holding
bytes. Raises BadInput when the node has no such blob.)doc")
    .def(
      "put",
      [](local_session& self, const std::string& node, const std::string& blob,
         py::handle value) {
        auto converted = from_ndarray(value);
        py::gil_scoped_release release;
        self.put(node, blob, std::move(converted));
      },
      "node"_a, "blob"_a, "value"_a, R"doc(
Stores `value` (anything numpy.asarray takes, of a dtype fetch returns;
str and bytes as strings) as blob `blob` of node `node`.)doc");
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
           checkpoint_options options;
           options.timeout = to_milliseconds(timeout, "timeout");
           if (full_every < 0)
             bad_argument("full_every: expected 0 or more, got "
                          + std::to_string(full_every));
           options.full_every = full_every;
           options.keep_last = keep_last;
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
         "The blobs the last `init` listed for `node`.");
}

void bind_job_runner(py::module_& m) {
  py::class_<job_runner>(m, "JobRunner", R"doc(
Runs a job with checkpoints at epoch boundaries (Caffe2's JobRunner): with
a checkpoint manager, epoch 0 is saved after init and every epoch after it
runs, and the job resumes from `resume_from_epoch` or, when None, from the
last committed epoch.)doc")
    .def(py::init([](const job& the_job,
                     std::shared_ptr<multi_node_checkpoint_manager> manager,
                     std::optional<int64_t> resume_from_epoch) {
           return std::make_unique<job_runner>(the_job, std::move(manager),
                                               resume_from_epoch);
         }),
         "job"_a, "checkpoint_manager"_a = py::none(),
         "resume_from_epoch"_a = py::none())
    .def("train", &job_runner::train, py::call_guard<py::gil_scoped_release>(),
         "session"_a, R"doc(
Runs the job to its end on `session` and returns the last epoch. Raises
JobFailed (a task failed; the checkpoint to resume from cannot be loaded),
NodeLost, Stopped (after request_stop), BadInput (an epoch never
committed, a job that cannot end, a checkpoint directory another job
holds).)doc")
    .def("request_stop", &job_runner::request_stop,
         "Asks train to stop after the running epoch and its checkpoint; "
         "train then raises Stopped. Safe from any thread.")
    .def_property_readonly("job", &job_runner::get_job)
    .def_property_readonly("checkpoint_manager",
                           &job_runner::checkpoint_manager);
}

} // namespace

} // namespace epochrt::python

PYBIND11_MODULE(epochrt, m) {
  using namespace epochrt::python;
  m.doc() = "epochrt: jobs run in epochs with checkpoints, as Caffe2's "
            "Job, JobRunner and MultiNodeCheckpointManager.";
  m.attr("__version__") = EPOCHRT_VERSION;
  register_errors(m);
  bind_job(m);
  bind_local_session(m);
  bind_checkpoint_manager(m);
  bind_job_runner(m);
  m.def(
    "set_log_level",
    [](const std::string& level) {
      runtime::set_log_level(parse_log_level(level));
    },
    "level"_a,
    "The level of epochrt's log lines on stderr: trace, debug, info, "
    "warn (the default), error or off.");
}
