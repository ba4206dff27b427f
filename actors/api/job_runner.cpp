#include <epochrt/actors/api/job_runner.hpp>

#include <epochrt/actors/core/job_runner_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/basic_checkpoint_manager.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/actors/api/upload_task_group_builder.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// A group the job runner runs from the calling thread (upload, download,
// exit), between the fault plan's job.group points.
caf::error run_group(session& sess, const task_group_def& group,
                     const std::vector<channel_def>& channels,
                     const char* label, int64_t epoch) {
  auto* faults = sess.options().faults.get();
  fault_site site{{}, epoch, label};
  fault_action action;
  if (auto err
      = strike_blocking(faults, fault_point::job_group_start, site, action))
    return err;
  if (auto done = sess.run(group, label, epoch, channels); !done)
    return std::move(done.error());
  return strike_blocking(faults, fault_point::job_group_end, site, action);
}

} // namespace

job_runner::job_runner(job the_job, basic_checkpoint_manager* manager,
                       std::optional<int64_t> resume_from_epoch,
                       upload_task_group_builder* upload,
                       job_runner_options options)
  : job_(std::move(the_job)), manager_(manager),
    resume_from_epoch_(resume_from_epoch), upload_(upload),
    options_(std::move(options)),
    stop_(std::make_shared<std::atomic<bool>>(false)) {
  // A signal handler may call request_stop: a lock that could be held by
  // the interrupted thread would deadlock it.
  static_assert(std::atomic<bool>::is_always_lock_free);
}

void job_runner::request_stop() noexcept {
  stop_->store(true, std::memory_order_relaxed);
}

bool job_runner::stop_requested() const noexcept {
  return stop_->load(std::memory_order_relaxed);
}

namespace {

caf::error stopped_error(const std::string& what) {
  return make_error(actors_errc::stopped, "stopped on request " + what);
}

// A lost node or a recovery, for the job's observer.
void notify_recovery(job_events* events, job_event::kind what,
                     job_event::clock::time_point start, std::string detail) {
  if (events == nullptr)
    return;
  job_event event;
  event.what = what;
  event.start = start;
  event.end = job_event::clock::now();
  event.detail = std::move(detail);
  notify(events, event);
}

} // namespace

caf::expected<int64_t>
job_runner::run_epochs(session& sess, std::optional<int64_t> resume_from,
                       bool after_failure) {
  job_runner_config cfg;
  cfg.job = job_.def();
  cfg.group_timeout = sess.options().group_timeout;
  cfg.checkpoint_timeout = sess.options().checkpoint_timeout;
  cfg.on_epoch = options_.on_epoch;
  cfg.faults = sess.options().faults;
  cfg.stop = stop_;
  cfg.events = options_.events;
  for (auto& name : job_.nodes()) {
    auto handle = sess.node(name);
    if (!handle)
      return std::move(handle.error());
    cfg.nodes.emplace(name, handle->node);
    cfg.exchange.directory.emplace(name, detail::directory_entry(*handle));
    if (handle->relay)
      cfg.exchange.relay = handle->relay;
  }
  cfg.exchange.end_timeout = sess.options().request_timeout;
  run_job start;
  if (manager_ != nullptr) {
    auto to_checkpoint = job_.nodes_to_checkpoint();
    if (auto err = manager_->set_params(to_checkpoint))
      return err;
    auto resume = manager_->get_resume_from_epoch_id(resume_from);
    if (!resume)
      return std::move(resume.error());
    start.resume_from_epoch = resume->value_or(-1);
    // Only an epoch picked automatically may be replaced by an earlier one.
    start.fall_back = !resume_from.has_value();
    for (auto& name : to_checkpoint) {
      auto handle = sess.node(name);
      if (!handle)
        return std::move(handle.error());
      cfg.checkpoint_nodes.push_back(node_ref{name, handle->persistence});
    }
    cfg.checkpoint_manager = manager_->actor();
    // The runner must wait as long as the manager may take: giving up
    // earlier would start the next epoch while a save is still running.
    cfg.checkpoint_timeout = manager_->timeout();
  } else if (resume_from) {
    return make_error(actors_errc::no_checkpoint_manager,
                      "resuming from an epoch needs a checkpoint manager");
  }
  // Nodes may hold what a failed attempt left behind.
  start.reset_workspaces = after_failure;
  auto runner = spawn_job_runner(sess.system(), std::move(cfg));
  // The runner bounds every request it makes; this wait is bounded by them.
  auto done = detail::blocking_request<ckpt_epoch>(sess.system(), runner,
                                                   detail::never, start);
  if (!done)
    return std::move(done.error());
  return done->epoch;
}

caf::error job_runner::recover(session& sess) {
  // Tasks of the failed epoch may still run on the nodes that were not
  // lost; a checkpoint loaded under them would be overwritten.
  for (auto& name : job_.nodes()) {
    auto handle = sess.node(name);
    if (!handle)
      continue;
    auto stopped = detail::blocking_request<caf::unit_t>(
      sess.system(), handle->node, sess.options().request_timeout,
      cancel_tasks{});
    if (!stopped)
      detail::log().debug("node {}: tasks not stopped: {}", name,
                          error_text(stopped.error()));
  }
  if (manager_ != nullptr) {
    // A save begun before the loss may still commit: the epoch to resume
    // from is known only once every write has ended.
    auto flushed = detail::blocking_request<caf::unit_t>(
      sess.system(), manager_->actor(), manager_->timeout(), ckpt_flush{});
    if (!flushed)
      return std::move(flushed.error());
  }
  return sess.recover_lost_nodes();
}

caf::expected<int64_t> job_runner::train(session& sess) {
  if (stop_requested())
    return stopped_error("before the job started");
  auto resume_from = resume_from_epoch_;
  auto epochs = run_once(sess, resume_from, false);
  for (int failures = 1; !epochs; ++failures) {
    auto& err = epochs.error();
    auto lost = is_node_lost(err);
    auto lost_at = job_event::clock::now();
    if (lost)
      notify_recovery(options_.events.get(), job_event::kind::node_lost,
                      lost_at, error_text(err));
    // A recovery may take as long as a reconnect: a job asked to stop
    // stops instead, from what is committed.
    if (lost && stop_requested())
      return stopped_error("after " + error_text(err));
    if (!lost || failures > options_.max_node_failures) {
      if (lost && options_.max_node_failures > 0)
        return make_error(actors_errc::node_lost,
                          error_text(err) + " (failure "
                            + std::to_string(failures) + ", more than "
                            + std::to_string(options_.max_node_failures)
                            + " allowed)");
      return std::move(epochs.error());
    }
    detail::log().warn("{}; recovering (failure {} of at most {})",
                       error_text(err), failures, options_.max_node_failures);
    if (auto failed = recover(sess))
      return make_error(actors_errc::node_lost,
                        error_text(err)
                          + "; recovery failed: " + error_text(failed));
    notify_recovery(options_.events.get(), job_event::kind::recovered, lost_at,
                    "failure " + std::to_string(failures));
    // From the last committed epoch, whatever was asked at the start.
    resume_from.reset();
    epochs = run_once(sess, resume_from, true);
  }
  return epochs;
}

// A loss in the upload, download or exit group is recovered like one in an
// epoch: those groups run again from the last committed epoch, reloaded on
// every node -- the final one when its commit happened, as Caffe2 ran them
// on the state the final checkpoint holds -- so they see what an
// uninterrupted run would have seen, whatever they did before the loss.
caf::expected<int64_t> job_runner::run_once(session& sess,
                                            std::optional<int64_t> resume_from,
                                            bool after_failure) {
  auto epochs = run_epochs(sess, resume_from, after_failure);
  if (!epochs)
    return epochs;
  auto epoch = *epochs;
  // With checkpoints, the last epoch's is committed by now (the runner
  // flushed): a rerun resumes from it and runs the remaining groups on
  // that state.
  if (stop_requested())
    return stopped_error("after epoch " + std::to_string(epoch)
                         + ", before the groups after the epoch loop");
  auto committed = false;
  if (upload_ != nullptr && manager_ != nullptr) {
    if (auto err = manager_->check_accessible(epoch, committed))
      return err;
  }
  if (upload_ != nullptr && manager_ != nullptr && !committed) {
    // The last save failed (a warning was logged then): what lies at the
    // epoch's path, if anything, is not a checkpoint to hand on.
    detail::log().warn("not uploading the checkpoints of epoch {}: that "
                       "epoch is not committed",
                       epoch);
  } else if (upload_ != nullptr && manager_ != nullptr) {
    auto group = upload_->build(epoch, *manager_);
    if (!group)
      return std::move(group.error());
    if (auto err = run_group(sess, *group, {}, "upload", epoch))
      return err;
    detail::log().info("finished uploading the checkpoints");
  }
  detail::log().info("starting the download group");
  if (auto err = run_group(sess, job_.def().download_group, job_.def().channels,
                           "download", epoch))
    return err;
  detail::log().info("finished the download group");
  detail::log().info("starting the exit group");
  if (auto err = run_group(sess, job_.def().exit_group, job_.def().channels,
                           "exit", epoch))
    return err;
  detail::log().info("finished the exit group");
  return epoch;
}

caf::expected<bool> job_runner::load_blobs_from_checkpoints(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "loading blobs from checkpoints needs a checkpoint "
                      "manager");
  auto result = manager_->load_blobs_locally(sess, job_.nodes_to_checkpoint(),
                                             blob_names, epoch);
  if (result && *result)
    if (auto reported
        = manager_->report_checkpoint_stats("checkpoint_partial_load");
        !reported)
      detail::log().warn("could not report checkpoint stats: {}",
                         error_text(reported.error()));
  return result;
}

caf::expected<bool> job_runner::load_blobs_from_checkpoints(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess,
  workspace& into) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "loading blobs from checkpoints needs a checkpoint "
                      "manager");
  if (auto err = manager_->init(sess, job_.nodes_to_checkpoint()))
    return err;
  auto exists = manager_->check_db_exists(epoch);
  if (!exists)
    return std::move(exists.error());
  if (!*exists)
    return false;
  auto read = manager_->read_blobs(blob_names, epoch, into);
  if (!read)
    return std::move(read.error());
  detail::log().info("brought {} blobs of the checkpoints of epoch {} here",
                     *read, epoch);
  return true;
}

caf::error job_runner::save_checkpoints(int64_t epoch, session& sess) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "saving checkpoints needs a checkpoint manager");
  if (auto err = manager_->init(sess, job_.nodes_to_checkpoint()))
    return err;
  auto accessible = false;
  // Metadata that cannot be trusted: never write over it.
  if (auto err = manager_->check_accessible(std::nullopt, accessible))
    return err;
  if (!accessible) {
    detail::log().warn("checkpoint files cannot be accessed");
    return {};
  }
  if (auto err = manager_->save(epoch)) {
    detail::log().warn("unable to write checkpoint for epoch {}: {}", epoch,
                       error_text(err));
    return {};
  }
  if (auto err = manager_->write_checkpoint_metadata(epoch))
    return err;
  auto reported = manager_->report_checkpoint_stats("checkpoint_save");
  return reported ? caf::error{} : std::move(reported.error());
}

} // namespace epochrt
