#include "job_runner.hpp"

#include <utility>

#include "errors.hpp"

namespace epochrt::python {

job_runner::job_runner(job the_job,
                       std::shared_ptr<multi_node_checkpoint_manager> manager,
                       std::optional<int64_t> resume_from_epoch)
  : manager_(std::move(manager)),
    runner_(std::move(the_job), manager_ ? &manager_->get() : nullptr,
            resume_from_epoch) {}

int64_t job_runner::train(local_session& sess) {
  if (manager_)
    manager_->check_same_runtime(sess);
  if (training_.exchange(true))
    throw_if(make_error(actors_errc::invalid_argument,
                        "job '" + runner_.get_job().name()
                          + "': train is running already"),
             error_kind::bad_input);
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

} // namespace epochrt::python
