#include "job_runner.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <pybind11/pybind11.h>

#include "errors.hpp"
#include "interpreter_entry.hpp"
#include "op_registry.hpp"
#include "task_group_ref.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;

namespace epochrt::python {

namespace {

job_runner_options
options(bool allow_job_change, std::optional<double> stop_grace_seconds,
        std::shared_ptr<job_events> events, epoch_observer on_epoch) {
  job_runner_options result;
  result.events = std::move(events);
  result.on_epoch = std::move(on_epoch);
  result.allow_job_change = allow_job_change;
  if (stop_grace_seconds)
    result.stop_grace = std::chrono::milliseconds(
      static_cast<int64_t>(*stop_grace_seconds * 1000.0));
  return result;
}

// Calls a Python UploadTaskGroupBuilder on the job runner's thread, with
// the GIL, on behalf of the runner that holds the manager's lock.
class python_upload_builder : public upload_task_group_builder {
public:
  python_upload_builder(const py::object& builder,
                        std::shared_ptr<multi_node_checkpoint_manager> manager)
    : builder_(builder), manager_(std::move(manager)) {}

  caf::expected<task_group_def>
  build(int64_t epoch, const basic_checkpoint_manager&) override {
    py::gil_scoped_acquire gil;
    multi_node_checkpoint_manager::runner_scope scope{
      manager_.get(), "UploadTaskGroupBuilder.build"};
    try {
      auto manager = manager_ ? py::cast(manager_) : py::none();
      auto group = builder_.attr("build")(epoch, manager);
      if (group.is_none())
        return task_group_def{};
      if (!py::isinstance<task_group_ref>(group))
        return make_error(actors_errc::invalid_argument,
                          "UploadTaskGroupBuilder.build returned "
                            + std::string{py::str(py::type::of(group))}
                            + ": expected a TaskGroup or None");
      return group.cast<task_group_ref&>().get();
    } catch (py::error_already_set& e) {
      return make_error(actors_errc::task_failed,
                        std::string{"UploadTaskGroupBuilder.build raised "}
                          + e.what());
    }
  }

private:
  // Borrowed: the job_runner owns the object and destroys it with the GIL.
  const py::object& builder_;
  std::shared_ptr<multi_node_checkpoint_manager> manager_;
};

} // namespace

job_runner::job_runner(job the_job,
                       std::shared_ptr<multi_node_checkpoint_manager> manager,
                       std::optional<int64_t> resume_from_epoch,
                       py::object upload, bool allow_job_change,
                       std::optional<double> stop_grace_seconds)
  : manager_(std::move(manager)),
    upload_object_(std::make_unique<py::object>(std::move(upload))),
    upload_(upload_object_->is_none() ? nullptr
                                      : std::make_unique<python_upload_builder>(
                                        *upload_object_, manager_)),
    runner_(std::move(the_job), manager_ ? &manager_->get() : nullptr,
            resume_from_epoch, upload_.get(),
            options(allow_job_change, stop_grace_seconds, events_,
                    [reports = reports_](int64_t epoch,
                                         const std::vector<task_output>& out) {
                      std::shared_ptr<stats_json_writer> writer;
                      {
                        annotated_mutex::guard guard{reports->mtx};
                        if (reports->keep_outputs)
                          reports->outputs[epoch] = out;
                        writer = reports->writer;
                      }
                      // Not under reports->mtx: the writer's sink takes it
                      // under the writer's own mutex.
                      if (writer)
                        writer->on_epoch_outputs(epoch, out);
                    })) {}

job_runner::~job_runner() {
  // The Python object needs the GIL to go; a runner dies with it held
  // (Python's garbage collection) or without (a C++ caller).
  if (PyGILState_Check() != 0) {
    upload_object_.reset();
    return;
  }
  interpreter_entry entry;
  if (!entry.ok()) {
    // The interpreter is ending: the object is left to it.
    upload_object_->release();
    return;
  }
  py::gil_scoped_acquire gil;
  upload_object_.reset();
}

int64_t job_runner::train(session& sess, const epoch_watch* watch) {
  check_not_in_python_op("JobRunner.train");
  if (manager_)
    manager_->check_same_runtime(sess);
  if (training_.exchange(true))
    throw_if(make_error(actors_errc::invalid_argument,
                        "job '" + runner_.get_job().name()
                          + "': train is running already"),
             error_kind::bad_input);
  throw_if(runner_.get_job().validate(sess.ops()), error_kind::bad_input);
  struct reset {
    std::atomic<bool>& flag;
    ~reset() {
      flag = false;
    }
  } done{training_};
  std::unique_lock<std::mutex> guard;
  if (manager_)
    guard = manager_->lock();
  // The stats of this train: to the file, and the epochs' lines to
  // on_epoch through reports_.
  std::shared_ptr<stats_json_writer> writer;
  const py::object* on_epoch = nullptr;
  if (watch != nullptr) {
    std::function<void(const std::string&)> file;
    if (watch->stats_json) {
      file = stats_json_writer::file_sink(*watch->stats_json);
      if (!file)
        throw_if(make_error(actors_errc::invalid_argument,
                            "stats_json " + *watch->stats_json
                              + ": cannot be written"),
                 error_kind::bad_input);
    }
    bool report = false;
    {
      py::gil_scoped_acquire gil;
      report = !watch->on_epoch.is_none();
    }
    if (report)
      on_epoch = &watch->on_epoch;
    {
      annotated_mutex::guard lines_guard{reports_->mtx};
      reports_->lines.clear();
      reports_->outputs.clear();
      reports_->keep_outputs = report;
    }
    writer = stats_json_writer::to_sink(
      [file, report, reports = reports_](const std::string& line) {
        if (file)
          file(line);
        if (report) {
          annotated_mutex::guard lines_guard{reports->mtx};
          reports->lines.push_back(line);
          reports->cv.notify_all();
        }
      },
      manager_ != nullptr);
    writer->set_metrics(watch->metrics);
    {
      annotated_mutex::guard lines_guard{reports_->mtx};
      reports_->writer = writer;
    }
    events_->set(writer);
    if (manager_)
      manager_->events().set(writer);
  }
  struct unwatch {
    job_runner& self;
    std::shared_ptr<stats_json_writer>& writer;
    ~unwatch() {
      if (!writer)
        return;
      self.events_->set(nullptr);
      if (self.manager_)
        self.manager_->events().set(nullptr);
      annotated_mutex::guard guard{self.reports_->mtx};
      self.reports_->keep_outputs = false;
      self.reports_->outputs.clear();
      self.reports_->writer.reset();
    }
  } unwatched{*this, writer};
  auto result = train_watching_signals(sess, on_epoch);
  if (writer)
    writer->close(); // the epochs still waiting for a figure, as they are
  if (on_epoch != nullptr) {
    py::gil_scoped_acquire gil;
    if (!deliver_reports(*on_epoch))
      throw py::error_already_set();
  }
  if (!result)
    throw error(result.error(), error_kind::job_failed);
  if (manager_)
    warn_if_uncommitted(*result);
  return *result;
}

caf::expected<int64_t>
job_runner::train_watching_signals(session& sess, const py::object* on_epoch) {
  // The job runs on a thread of its own; this one polls Python's signals,
  // which run on the main thread only, and only when it runs Python code:
  // blocked in the job, it would see Ctrl-C when the job had ended.
  caf::expected<int64_t> result{caf::error{}};
  auto& reports = *reports_;
  {
    annotated_mutex::guard guard{reports.mtx};
    reports.done = false;
  }
  std::thread worker{[&] {
    auto r = runner_.train(sess.get());
    annotated_mutex::guard guard{reports.mtx};
    result = std::move(r);
    reports.done = true;
    reports.cv.notify_all();
  }};
  int interrupts = 0;
  std::optional<py::error_already_set> raised; // by the host's own handler
  auto interrupted = [&] {
    if (++interrupts == 1) {
      runner_.request_stop();
      PySys_WriteStderr("epochrt: SIGINT: stopping after the running epoch "
                        "and its checkpoint (send it again to stop at "
                        "once)\n");
    } else {
      runner_.request_stop_now();
      PySys_WriteStderr("epochrt: SIGINT again: stopping at once\n");
    }
  };
  for (;;) {
    {
      annotated_mutex::guard guard{reports.mtx};
      auto woken = [&]() EPOCHRT_REQUIRES(reports.mtx) {
        // Once on_epoch raised, its lines wait for nobody: no wake-up for
        // them, or this thread would spin until the job stops.
        return reports.done
          || (on_epoch != nullptr && !raised && !reports.lines.empty());
      };
      reports.cv.wait_for(guard, std::chrono::milliseconds(100), woken);
      if (reports.done)
        break;
    }
    py::gil_scoped_acquire gil;
    // Signals first: a Ctrl-C is the user's, whatever on_epoch does next.
    if (PyErr_CheckSignals() == 0) {
      if (on_epoch == nullptr || raised || deliver_reports(*on_epoch))
        continue;
      if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        // Ctrl-C while on_epoch ran: the user's, not the callback's.
        PyErr_Clear();
        interrupted();
        continue;
      }
      // on_epoch raised: stop as for Ctrl-C, and raise its exception once
      // the job has stopped.
      raised.emplace();
      runner_.request_stop();
      continue;
    }
    if (!PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
      // A handler of the program's raised: stop as for Ctrl-C, and raise
      // its exception once the job has stopped.
      if (!raised)
        raised.emplace();
      else
        PyErr_Clear();
      runner_.request_stop();
      continue;
    }
    PyErr_Clear();
    interrupted();
  }
  worker.join();
  if (raised) {
    py::gil_scoped_acquire gil;
    throw std::move(*raised);
  }
  if (interrupts > 0) {
    // Ctrl-C is a KeyboardInterrupt, whatever the job had come to; its
    // text says what was committed.
    auto text = result ? "the job ended after epoch " + std::to_string(*result)
                       : error_text(result.error());
    py::gil_scoped_acquire gil;
    PyErr_SetString(PyExc_KeyboardInterrupt,
                    (text
                     + "; running the same job again resumes from its "
                       "last committed epoch")
                      .c_str());
    throw py::error_already_set();
  }
  return result;
}

bool job_runner::deliver_reports(const py::object& on_epoch) {
  for (;;) {
    std::string line;
    std::vector<task_output> outputs;
    {
      annotated_mutex::guard guard{reports_->mtx};
      if (reports_->lines.empty())
        return true;
      line = std::move(reports_->lines.front());
      reports_->lines.pop_front();
    }
    try {
      py::dict record = py::module_::import("json").attr("loads")(line);
      if (record["type"].cast<std::string>() != "epoch")
        continue;
      auto epoch = record["epoch"].cast<int64_t>();
      {
        annotated_mutex::guard guard{reports_->mtx};
        if (auto i = reports_->outputs.find(epoch);
            i != reports_->outputs.end()) {
          outputs = std::move(i->second);
          reports_->outputs.erase(i);
        }
      }
      py::dict by_task;
      for (auto& out : outputs) {
        auto task = py::str(out.task);
        if (!by_task.contains(task))
          by_task[task] = py::dict{};
        by_task[task].cast<py::dict>()[py::str(out.blob)]
          = to_ndarray(std::move(out.value));
      }
      record["outputs"] = std::move(by_task);
      // train holds the manager's lock on this thread.
      multi_node_checkpoint_manager::runner_scope scope{manager_.get(),
                                                        "on_epoch"};
      on_epoch(record);
    } catch (py::error_already_set& e) {
      e.restore();
      return false;
    }
  }
}

void job_runner::warn_if_uncommitted(int64_t epoch) {
  caf::error err;
  std::optional<int64_t> committed;
  if (auto found = manager_->get().get_resume_from_epoch_id(std::nullopt))
    committed = *found;
  else
    err = std::move(found.error());
  if (!err && committed && *committed >= epoch)
    return;
  // Saves fail with a warning in the log only (Caffe2's rule); a Python
  // program sees this one.
  auto text = "job '" + runner_.get_job().name() + "' ended after epoch "
    + std::to_string(epoch) + ", but its checkpoint is not committed ("
    + (err ? error_text(err)
         : committed
         ? "the last committed epoch is " + std::to_string(*committed)
         : std::string{"no epoch is committed"})
    + "; the log says why): a rerun will not resume from it";
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0)
    throw py::error_already_set();
}

bool job_runner::load_blobs_from_checkpoints(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess) {
  check_not_in_python_op("JobRunner.load_blobs_from_checkpoints");
  if (!manager_)
    throw_if(make_error(actors_errc::no_checkpoint_manager,
                        "job '" + runner_.get_job().name()
                          + "': load_blobs_from_checkpoints needs a "
                            "checkpoint manager"),
             error_kind::bad_input);
  manager_->check_same_runtime(sess);
  auto guard = manager_->lock();
  return loaded_or_missing(
    runner_.load_blobs_from_checkpoints(blob_names, epoch, sess.get()));
}

void job_runner::save_checkpoints(int64_t epoch, session& sess) {
  check_not_in_python_op("JobRunner.save_checkpoints");
  if (!manager_)
    throw_if(make_error(actors_errc::no_checkpoint_manager,
                        "job '" + runner_.get_job().name()
                          + "': save_checkpoints needs a checkpoint manager"),
             error_kind::bad_input);
  manager_->check_same_runtime(sess);
  auto guard = manager_->lock();
  throw_if(runner_.save_checkpoints(epoch, sess.get()));
}

} // namespace epochrt::python
