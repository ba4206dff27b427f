#include "bindings.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "call_arguments.hpp"
#include "job_runner.hpp"
#include "multi_node_checkpoint_manager.hpp"
#include "session.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

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

} // namespace

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

} // namespace epochrt::python
