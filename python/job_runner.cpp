#include "job_runner.hpp"

#include <utility>

#include "errors.hpp"
#include "op_registry.hpp"

namespace epochrt::python {

job_runner::job_runner(job the_job,
                       std::shared_ptr<multi_node_checkpoint_manager> manager,
                       std::optional<int64_t> resume_from_epoch)
  : manager_(std::move(manager)),
    runner_(std::move(the_job), manager_ ? &manager_->get() : nullptr,
            resume_from_epoch) {}

int64_t job_runner::train(session& sess) {
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
  auto result = runner_.train(sess.get());
  if (!result)
    throw error(result.error(), error_kind::job_failed);
  return *result;
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
  auto result
    = runner_.load_blobs_from_checkpoints(blob_names, epoch, sess.get());
  if (!result)
    throw error(result.error(), error_kind::error);
  return *result;
}

} // namespace epochrt::python
