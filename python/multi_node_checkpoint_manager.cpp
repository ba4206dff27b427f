#include "multi_node_checkpoint_manager.hpp"

#include <utility>

#include "errors.hpp"
#include "gil_release_if_held.hpp"
#include "op_registry.hpp"

namespace epochrt::python {

namespace {

// The manager whose upload builder the calling thread runs, if any.
thread_local const multi_node_checkpoint_manager* building_for = nullptr;
thread_local const char* building_who = nullptr;

} // namespace

multi_node_checkpoint_manager::multi_node_checkpoint_manager(
  std::string db_prefix, checkpoint_options options)
  : multi_node_checkpoint_manager(
    [&](caf::actor_system& sys, std::shared_ptr<job_events> events)
      -> std::unique_ptr<basic_checkpoint_manager> {
      options.events = std::move(events);
      return std::make_unique<epochrt::multi_node_checkpoint_manager>(
        sys, std::move(db_prefix), std::move(options));
    }) {}

multi_node_checkpoint_manager::multi_node_checkpoint_manager(
  std::function<std::unique_ptr<basic_checkpoint_manager>(
    caf::actor_system&, std::shared_ptr<job_events>)>
    make)
  : runtime_(runtime::get()) {
  manager_ = make(runtime_->system(), events_);
}

multi_node_checkpoint_manager::runner_scope::runner_scope(
  const multi_node_checkpoint_manager* manager, const char* who)
  : previous_(building_for), previous_who_(building_who) {
  building_for = manager;
  building_who = who;
}

multi_node_checkpoint_manager::runner_scope::~runner_scope() {
  building_for = previous_;
  building_who = previous_who_;
}

multi_node_checkpoint_manager::~multi_node_checkpoint_manager() {
  gil_release_if_held release;
  manager_.reset();
  runtime_.reset();
}

std::unique_lock<std::mutex> multi_node_checkpoint_manager::lock() {
  if (building_for == this)
    throw_if(make_error(actors_errc::invalid_argument,
                        std::string{building_who}
                          + " may only ask the checkpoint manager for names "
                            "(get_ckpt_db_name, blob_list, db_prefix, "
                            "nodes): the job runner is using it"),
             error_kind::bad_input);
  check_not_in_python_op("a MultiNodeCheckpointManager call");
  return std::unique_lock<std::mutex>{mtx_};
}

std::unique_lock<std::mutex> multi_node_checkpoint_manager::query_lock() {
  if (building_for == this)
    return {};
  return lock();
}

void multi_node_checkpoint_manager::check_same_runtime(
  const session& sess) const {
  if (sess.owner() != runtime_)
    throw_if(make_error(actors_errc::invalid_argument,
                        "the session and the checkpoint manager belong to two "
                        "runtimes: make them while the other is alive"),
             error_kind::bad_input);
}

void multi_node_checkpoint_manager::init(
  session& sess, const std::vector<std::string>& nodes,
  std::optional<int64_t> retrieve_from_epoch, std::string path_prefix) {
  check_same_runtime(sess);
  auto guard = lock();
  throw_if(manager_->init(sess.get(), nodes, retrieve_from_epoch,
                          std::move(path_prefix)));
}

void multi_node_checkpoint_manager::load(int64_t epoch,
                                         std::string path_prefix) {
  auto guard = lock();
  throw_if(manager_->load(epoch, std::move(path_prefix)));
}

void multi_node_checkpoint_manager::save(int64_t epoch) {
  auto guard = lock();
  throw_if(manager_->save(epoch));
}

void multi_node_checkpoint_manager::write_checkpoint_metadata(int64_t epoch) {
  auto guard = lock();
  throw_if(manager_->write_checkpoint_metadata(epoch));
}

std::optional<int64_t> multi_node_checkpoint_manager::get_resume_from_epoch_id(
  std::optional<int64_t> user_epoch) {
  auto guard = lock();
  auto result = manager_->get_resume_from_epoch_id(user_epoch);
  if (!result)
    throw_if(result.error());
  return *result;
}

bool multi_node_checkpoint_manager::cp_accessible(
  std::optional<int64_t> epoch) {
  auto guard = lock();
  return manager_->cp_accessible(epoch);
}

bool multi_node_checkpoint_manager::check_db_exists(int64_t epoch) {
  auto guard = lock();
  auto result = manager_->check_db_exists(epoch);
  if (!result)
    throw error(result.error(), error_kind::error);
  return *result == checkpoint_state::usable;
}

std::string
multi_node_checkpoint_manager::get_ckpt_db_name(const std::string& node,
                                                int64_t epoch) {
  auto guard = query_lock();
  return manager_->get_ckpt_db_name(node, epoch);
}

std::vector<std::string>
multi_node_checkpoint_manager::blob_list(const std::string& node) {
  auto guard = query_lock();
  return manager_->blob_list(node);
}

std::vector<std::string> multi_node_checkpoint_manager::nodes() {
  auto guard = query_lock();
  return manager_->nodes();
}

bool multi_node_checkpoint_manager::load_blobs_locally(
  const std::vector<std::string>& nodes,
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess) {
  check_same_runtime(sess);
  auto guard = lock();
  return loaded_or_missing(
    manager_->load_blobs_locally(sess.get(), nodes, blob_names, epoch));
}

void multi_node_checkpoint_manager::set_params(
  const std::vector<std::string>& nodes, std::string path_prefix) {
  auto guard = lock();
  throw_if(manager_->set_params(nodes, std::move(path_prefix)));
}

std::vector<checkpoint_stats>
multi_node_checkpoint_manager::report_checkpoint_stats(
  const std::string& action) {
  auto guard = lock();
  auto result = manager_->report_checkpoint_stats(action);
  if (!result)
    throw_if(result.error());
  return std::move(*result);
}

checkpoint_manager::checkpoint_manager(std::string db_prefix,
                                       std::string node_name,
                                       checkpoint_options options)
  : multi_node_checkpoint_manager(
    [&](caf::actor_system& sys, std::shared_ptr<job_events> events)
      -> std::unique_ptr<basic_checkpoint_manager> {
      options.events = std::move(events);
      return std::make_unique<epochrt::checkpoint_manager>(
        sys, std::move(db_prefix), node_name, std::move(options));
    }),
    node_name_(node_name) {}

bool checkpoint_manager::load_blobs_from_checkpoint(
  const std::vector<std::string>& blob_names, int64_t epoch, session& sess) {
  check_same_runtime(sess);
  auto guard = lock();
  auto& single = static_cast<epochrt::checkpoint_manager&>(*manager_);
  return loaded_or_missing(
    single.load_blobs_from_checkpoint(sess.get(), blob_names, epoch));
}

} // namespace epochrt::python
