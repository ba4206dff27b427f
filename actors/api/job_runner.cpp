#include <epochrt/actors/api/job_runner.hpp>

#include <epochrt/actors/core/job_runner_actor.hpp>

#include <map>
#include <string>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/basic_checkpoint_manager.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/actors/api/upload_task_group_builder.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/notify.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/job_definition.hpp>

namespace epochrt {

job_runner::job_runner(job the_job, basic_checkpoint_manager* manager,
                       std::optional<int64_t> resume_from_epoch,
                       upload_task_group_builder* upload,
                       job_runner_options options)
  : job_(std::move(the_job)), manager_(manager),
    resume_from_epoch_(resume_from_epoch), upload_(upload),
    options_(std::move(options)),
    stop_(std::make_shared<std::atomic<bool>>(false)),
    stop_now_(std::make_shared<std::atomic<bool>>(false)) {
  // A signal handler may call request_stop: a lock that could be held by
  // the interrupted thread would deadlock it.
  static_assert(std::atomic<bool>::is_always_lock_free);
}

void job_runner::request_stop() noexcept {
  stop_->store(true, std::memory_order_relaxed);
}

void job_runner::request_stop_now() noexcept {
  stop_->store(true, std::memory_order_relaxed);
  stop_now_->store(true, std::memory_order_relaxed);
}

bool job_runner::stop_requested() const noexcept {
  return stop_->load(std::memory_order_relaxed);
}

namespace {

// Where the job's nodes are, as the session has them now.
caf::expected<job_nodes> attach_nodes(session& sess, const job& the_job,
                                      bool with_checkpoints) {
  job_nodes where;
  for (auto& name : the_job.nodes()) {
    auto handle = sess.node(name);
    if (!handle)
      return std::move(handle.error());
    where.nodes.emplace(name, handle->node);
    where.exchange.directory.emplace(name, detail::directory_entry(*handle));
    if (handle->relay)
      where.exchange.relay = handle->relay;
  }
  where.exchange.end_timeout = sess.options().request_timeout;
  if (with_checkpoints)
    for (auto& name : the_job.nodes_to_checkpoint()) {
      auto handle = sess.node(name);
      if (!handle)
        return std::move(handle.error());
      where.checkpoint_nodes.push_back(
        node_ref{name, handle->persistence, daemon_address(*handle)});
    }
  return where;
}

// Where each node of `the_job` runs, by name (session::address_of).
std::map<std::string, std::string> addresses(const session& sess,
                                             const job& the_job) {
  std::map<std::string, std::string> result;
  for (auto& name : the_job.nodes())
    result[name] = sess.address_of(name);
  return result;
}

// A node_moved event for each node that runs elsewhere than `before`.
void report_moves(session& sess, const job& the_job,
                  const std::map<std::string, std::string>& before,
                  job_events* events) {
  for (auto& [name, now] : addresses(sess, the_job)) {
    auto i = before.find(name);
    if (i == before.end() || i->second == now)
      continue;
    job_event event;
    event.what = job_event::kind::node_moved;
    event.node = name;
    event.detail = now;
    event.start = event.end = job_event::clock::now();
    detail::notify(sess.system(), events, event);
  }
}

} // namespace

caf::expected<int64_t> job_runner::train(session& sess) {
  if (stop_requested())
    return make_error(actors_errc::stopped,
                      "stopped on request before the job started");
  if (manager_ != nullptr)
    if (auto err = manager_->set_params(job_.nodes_to_checkpoint(), {},
                                        job_definition(job_, sess.ops().get()),
                                        options_.allow_job_change))
      return err;
  // The job's nodes are its own while it runs: another job or group on
  // them would interleave with its epochs on the same workspaces.
  auto lease = sess.lease_nodes(job_.nodes(), "job '" + job_.name() + "'");
  if (!lease)
    return std::move(lease.error());
  auto where = attach_nodes(sess, job_, manager_ != nullptr);
  if (!where)
    return std::move(where.error());
  job_runner_config cfg;
  auto& attempt = cfg.attempt;
  attempt.job = job_.def();
  attempt.where = std::move(*where);
  attempt.group_timeout = sess.options().group_timeout;
  attempt.checkpoint_timeout = sess.options().checkpoint_timeout;
  attempt.on_epoch = options_.on_epoch;
  attempt.faults = sess.options().faults;
  attempt.stop = stop_;
  attempt.stop_now = stop_now_;
  attempt.stop_grace = options_.stop_grace;
  attempt.events = options_.events;
  if (manager_ != nullptr) {
    attempt.checkpoint_manager
      = caf::actor_cast<checkpoint_manager_actor>(manager_->actor_);
    // The runner must wait as long as the manager may take: giving up
    // earlier would start the next epoch while a save is still running.
    attempt.checkpoint_timeout = manager_->timeout();
    if (upload_ != nullptr)
      attempt.upload_group
        = [upload = upload_, manager = manager_](int64_t epoch) {
            return upload->build(epoch, *manager);
          };
  }
  cfg.max_node_failures = options_.max_node_failures;
  cfg.request_timeout = sess.options().request_timeout;
  // The session is ours while train runs: the runner calls this from a
  // thread of its own while this thread waits.
  cfg.recover_nodes = [&sess, this]() -> caf::expected<job_nodes> {
    auto before = addresses(sess, job_);
    auto err = sess.recover_lost_nodes();
    // Also when another node could not be brought back: a rerun must
    // place the nodes that moved where they are now.
    report_moves(sess, job_, before, options_.events.get());
    if (err)
      return err;
    return attach_nodes(sess, job_, manager_ != nullptr);
  };
  auto runner = spawn_job_runner(sess.system(), std::move(cfg));
  // The runner bounds every request it makes; this wait is bounded by them.
  auto done = detail::blocking_request<job_result>(
    sess.system(), runner, detail::never,
    run_job{resume_from_epoch_.value_or(-1)});
  if (!done)
    return std::move(done.error());
  if (manager_ != nullptr)
    list_checkpointed_blobs(sess);
  return done->last_epoch;
}

void job_runner::list_checkpointed_blobs(session& sess) {
  caf::error err;
  auto committed = manager_->get_resume_from_epoch_id(std::nullopt);
  if (!committed)
    err = std::move(committed.error());
  else if (*committed)
    err = manager_->init(sess, job_.nodes_to_checkpoint(), *committed);
  if (err)
    detail::log(sess.system())
      .warn("the checkpoint manager's blob lists stay empty after the job: "
            "{}",
            error_text(err));
}

caf::error job_runner::load_blobs_from_checkpoints(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "loading blobs from checkpoints needs a checkpoint "
                      "manager");
  auto err = manager_->load_blobs_locally(sess, job_.nodes_to_checkpoint(),
                                          blob_names, epoch);
  if (!err)
    if (auto reported
        = manager_->report_checkpoint_stats("checkpoint_partial_load");
        !reported)
      detail::log(sess.system())
        .warn("could not report checkpoint stats: {}",
              error_text(reported.error()));
  return err;
}

caf::error job_runner::load_blobs_from_checkpoints(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess,
  workspace& into) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "loading blobs from checkpoints needs a checkpoint "
                      "manager");
  if (auto err = manager_->init(sess, job_.nodes_to_checkpoint()))
    return err;
  if (auto err = manager_->check_usable(epoch))
    return err;
  auto read = manager_->read_blobs(blob_names, epoch, into);
  if (!read)
    return std::move(read.error());
  detail::log(sess.system())
    .info("brought {} blobs of the checkpoints of epoch {} here", *read, epoch);
  return {};
}

caf::error job_runner::save_checkpoints(int64_t epoch, session& sess) {
  if (manager_ == nullptr)
    return make_error(actors_errc::no_checkpoint_manager,
                      "saving checkpoints needs a checkpoint manager");
  if (auto err = manager_->init(sess, job_.nodes_to_checkpoint()))
    return err;
  if (auto err = manager_->check_writable()) {
    // Metadata that cannot be trusted: never write over it. A directory
    // that cannot be written: skip the save, as Caffe2 did.
    if (!is_error(err, persistence_errc::not_writable))
      return err;
    detail::log(sess.system())
      .warn("the checkpoint of epoch {} is skipped: {}", epoch,
            error_text(err));
    return {};
  }
  if (auto err = manager_->save(epoch)) {
    // Another job's directory is no failed save to shrug off.
    if (is_error(err, persistence_errc::locked))
      return err;
    detail::log(sess.system())
      .warn("unable to write checkpoint for epoch {}: {}", epoch,
            error_text(err));
    return {};
  }
  if (auto err = manager_->write_checkpoint_metadata(epoch))
    return err;
  auto reported = manager_->report_checkpoint_stats("checkpoint_save");
  return reported ? caf::error{} : std::move(reported.error());
}

} // namespace epochrt
