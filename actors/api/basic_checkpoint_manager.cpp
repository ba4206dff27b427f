#include <epochrt/actors/api/basic_checkpoint_manager.hpp>

#include <algorithm>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/actors/core/checkpoint_manager_actor.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

namespace {

checkpoint_manager_actor typed(const caf::actor& manager) {
  return caf::actor_cast<checkpoint_manager_actor>(manager);
}

// The manager's own request to its actor waits for the slowest node's
// timeout plus a margin, so that the node's failure is what gets reported.
std::chrono::milliseconds margin(std::chrono::milliseconds timeout) {
  return detail::with_margin(timeout);
}

caf::error as_error(caf::expected<caf::unit_t> x) {
  return x ? caf::error{} : std::move(x.error());
}

} // namespace

basic_checkpoint_manager::basic_checkpoint_manager(caf::actor_system& sys,
                                                   std::string db_prefix,
                                                   checkpoint_options options)
  : sys_(sys), db_prefix_(std::move(db_prefix)), options_(std::move(options)),
    lock_(std::move(options_.lock)) {
  if (!options_.metadata)
    options_.metadata
      = std::make_shared<file_metadata_handler>(db_prefix_, options_.faults);
  checkpoint_policy policy;
  policy.timeout = options_.timeout;
  policy.full_every = std::max<int64_t>(options_.full_every, 0);
  policy.keep_last = options_.keep_last;
  policy.events = options_.events;
  policy.replicas = options_.replicas;
  actor_ = caf::actor_cast<caf::actor>(
    spawn_checkpoint_manager(sys_, db_prefix_, options_.metadata, policy));
}

basic_checkpoint_manager::~basic_checkpoint_manager() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

caf::error basic_checkpoint_manager::lock_directory() {
  if (lock_)
    return {};
  auto locked = dir_lock::acquire(db_prefix_);
  if (!locked)
    return std::move(locked.error());
  lock_ = std::make_shared<dir_lock>(std::move(*locked));
  return {};
}

caf::error basic_checkpoint_manager::lock_for_writing() {
  auto err = lock_directory();
  if (!err || is_error(err, persistence_errc::locked))
    return err;
  // A directory that cannot be made or locked cannot be written either:
  // the write reports that itself, as Caffe2's manager does (a failed save
  // does not fail a job). Only another holder refuses.
  if (!lock_warned_)
    detail::log(sys_).warn("checkpoint directory {} not locked: {}", db_prefix_,
                           error_text(err));
  lock_warned_ = true;
  return {};
}

caf::error
basic_checkpoint_manager::init(session& sess,
                               const std::vector<std::string>& nodes,
                               std::optional<int64_t> retrieve_from_epoch,
                               std::string path_prefix) {
  if (auto err = check_nodes(nodes))
    return err;
  if (!nodes_.empty() && nodes != nodes_)
    return make_error(actors_errc::invalid_argument,
                      "a checkpoint manager can only be re-initialized with "
                      "the same nodes");
  ckpt_init msg;
  for (auto& name : nodes) {
    auto handle = sess.node(name);
    if (!handle)
      return std::move(handle.error());
    msg.nodes.push_back(
      node_ref{name, handle->persistence, daemon_address(*handle)});
  }
  msg.retrieve_from_epoch = retrieve_from_epoch.value_or(-1);
  if (!path_prefix.empty())
    path_prefix_ = path_prefix;
  msg.path_prefix = std::move(path_prefix);
  if (retrieve_from_epoch)
    detail::log(sys_).info("initializing checkpoints from epoch {}",
                           *retrieve_from_epoch);
  auto result = detail::blocking_request<ckpt_result>(
    sys_, typed(actor_), margin(options_.timeout), std::move(msg));
  if (!result)
    return std::move(result.error());
  nodes_ = nodes;
  blob_lists_.clear();
  for (size_t i = 0; i < result->node_names.size(); ++i)
    blob_lists_[result->node_names[i]] = std::move(result->blob_lists[i]);
  return {};
}

std::vector<std::string>
basic_checkpoint_manager::blob_list(const std::string& node) const {
  auto i = blob_lists_.find(node);
  return i == blob_lists_.end() ? std::vector<std::string>{} : i->second;
}

caf::error basic_checkpoint_manager::load(int64_t epoch,
                                          std::string path_prefix) {
  detail::log(sys_).info("loading checkpoints of epoch {}", epoch);
  auto result = detail::blocking_request<ckpt_result>(
    sys_, typed(actor_), margin(options_.timeout),
    ckpt_load{epoch, std::move(path_prefix), {}, false});
  if (!result)
    return std::move(result.error());
  last_stats_ = std::move(result->stats);
  return {};
}

std::string to_string(checkpoint_state x) {
  switch (x) {
    case checkpoint_state::usable:
      return "usable";
    case checkpoint_state::missing:
      return "missing";
    case checkpoint_state::incomplete:
      return "incomplete";
    case checkpoint_state::corrupt:
      return "corrupt";
  }
  return "unknown";
}

caf::expected<checkpoint_state>
basic_checkpoint_manager::check(int64_t epoch, bool verify_data) {
  auto status = detail::blocking_request<checkpoint_status>(
    sys_, typed(actor_), margin(options_.timeout),
    ckpt_exists{epoch, verify_data});
  if (!status)
    return std::move(status.error());
  if (!status->problem.empty())
    detail::log(sys_).info("checkpoint of epoch {}: {}", epoch,
                           status->problem);
  if (!status->exists)
    return checkpoint_state::missing;
  if (!status->complete)
    return checkpoint_state::incomplete;
  if (verify_data && !status->intact)
    return checkpoint_state::corrupt;
  return checkpoint_state::usable;
}

caf::expected<checkpoint_state>
basic_checkpoint_manager::check_db_exists(int64_t epoch) {
  return check(epoch, false);
}

caf::expected<checkpoint_state>
basic_checkpoint_manager::check_db_intact(int64_t epoch) {
  return check(epoch, true);
}

caf::expected<std::vector<database_report>>
basic_checkpoint_manager::verify_copies(int64_t epoch) {
  auto found = detail::blocking_request<database_checks>(
    sys_, typed(actor_), margin(options_.timeout), ckpt_verify_copies{epoch});
  if (!found)
    return std::move(found.error());
  std::vector<database_report> result;
  result.reserve(found->checks.size());
  for (auto& check : found->checks)
    result.push_back(database_report{
      std::move(check.node), std::move(check.daemon), check.own,
      check.status.exists, check.status.complete && check.status.intact,
      std::move(check.status.problem)});
  return result;
}

caf::expected<gc_report>
basic_checkpoint_manager::remove_old_checkpoints(size_t keep_last) {
  if (keep_last == 0)
    return make_error(actors_errc::invalid_argument,
                      "retention keeps at least one epoch");
  if (auto err = lock_for_writing())
    return err;
  auto result = detail::blocking_request<retention_result>(
    sys_, typed(actor_), margin(options_.timeout),
    ckpt_retain{static_cast<uint64_t>(keep_last)});
  if (!result)
    return std::move(result.error());
  return gc_report{std::move(result->kept), std::move(result->removed),
                   result->bytes};
}

caf::error basic_checkpoint_manager::load_blobs_locally(
  session& sess, const std::vector<std::string>& nodes,
  const std::vector<std::string>& blob_names, int64_t epoch) {
  // (Re)bind to this session's nodes: the manager may have served another
  // session before, whose actors are gone.
  if (auto err = init(sess, nodes))
    return err;
  if (auto err = check_usable(epoch))
    return err;
  auto result = detail::blocking_request<ckpt_result>(
    sys_, typed(actor_), margin(options_.timeout),
    ckpt_load{epoch, {}, blob_names, true});
  if (!result)
    return std::move(result.error());
  last_stats_ = std::move(result->stats);
  detail::log(sys_).info("loaded {} blobs from the checkpoints of epoch {}",
                         blob_names.size(), epoch);
  return {};
}

caf::error basic_checkpoint_manager::check_usable(int64_t epoch) {
  auto state = check_db_exists(epoch);
  if (!state)
    return std::move(state.error());
  auto context = "the checkpoints of epoch " + std::to_string(epoch) + ": "
    + to_string(*state);
  switch (*state) {
    case checkpoint_state::usable:
      return {};
    case checkpoint_state::missing:
      return make_error(persistence_errc::not_found, std::move(context));
    case checkpoint_state::incomplete:
      return make_error(persistence_errc::incomplete, std::move(context));
    case checkpoint_state::corrupt:
      return make_error(persistence_errc::corrupt, std::move(context));
  }
  return make_error(persistence_errc::corrupt, std::move(context));
}

caf::expected<size_t>
basic_checkpoint_manager::read_blobs(const std::vector<std::string>& blob_names,
                                     int64_t epoch, workspace& into) {
  auto values = detail::blocking_request<blob_values>(
    sys_, typed(actor_), margin(options_.timeout),
    ckpt_read{epoch, blob_names});
  if (!values)
    return std::move(values.error());
  std::vector<std::pair<std::string, tensor>> blobs;
  for (auto& blob : values->blobs)
    blobs.emplace_back(std::move(blob.name), std::move(blob.value));
  auto count = blobs.size();
  into.set_all(std::move(blobs));
  return count;
}

caf::error basic_checkpoint_manager::save(int64_t epoch) {
  if (auto err = lock_for_writing())
    return err;
  detail::log(sys_).info("saving checkpoints of epoch {}", epoch);
  auto result = detail::blocking_request<ckpt_result>(
    sys_, typed(actor_), margin(options_.timeout), ckpt_save{epoch});
  if (!result)
    return std::move(result.error());
  last_stats_ = std::move(result->stats);
  return {};
}

caf::expected<std::vector<checkpoint_stats>>
basic_checkpoint_manager::report_checkpoint_stats(const std::string& action) {
  // The stats of a save are written to the metadata file; a load's are not
  // (loads are readers, see file_metadata_handler::report).
  if (action.find("load") == std::string::npos)
    if (auto err = lock_for_writing())
      return err;
  auto reported = detail::blocking_request<ckpt_result>(
    sys_, typed(actor_), options_.timeout, ckpt_report{action});
  if (!reported)
    return std::move(reported.error());
  return std::move(reported->stats);
}

caf::error basic_checkpoint_manager::write_checkpoint_metadata(int64_t epoch) {
  if (auto err = lock_for_writing())
    return err;
  return as_error(detail::blocking_request<caf::unit_t>(
    sys_, typed(actor_), options_.timeout, ckpt_write_metadata{epoch}));
}

caf::expected<std::optional<int64_t>>
basic_checkpoint_manager::get_resume_from_epoch_id(
  std::optional<int64_t> user_epoch) {
  auto result = detail::blocking_request<resume_point>(
    sys_, typed(actor_), options_.timeout,
    ckpt_resume_epoch{user_epoch.value_or(-1), -1, {}});
  if (!result)
    return std::move(result.error());
  if (result->epoch < 0)
    return std::optional<int64_t>{};
  return std::optional<int64_t>{result->epoch};
}

caf::error
basic_checkpoint_manager::set_params(const std::vector<std::string>& nodes,
                                     std::string path_prefix,
                                     std::string job_definition,
                                     bool allow_job_change) {
  if (auto err = check_nodes(nodes))
    return err;
  if (auto err = lock_for_writing())
    return err;
  if (!path_prefix.empty())
    path_prefix_ = path_prefix;
  auto done = as_error(detail::blocking_request<caf::unit_t>(
    sys_, typed(actor_), options_.timeout,
    ckpt_set_params{nodes, std::move(path_prefix), std::move(job_definition),
                    allow_job_change}));
  if (!done)
    nodes_ = nodes;
  return done;
}

caf::error
basic_checkpoint_manager::check_nodes(const std::vector<std::string>&) const {
  return {};
}

bool basic_checkpoint_manager::cp_accessible(std::optional<int64_t> epoch) {
  auto err = epoch ? check_committed(*epoch) : check_writable();
  if (err && !is_error(err, persistence_errc::not_writable)
      && !is_error(err, persistence_errc::not_committed))
    detail::log(sys_).warn("cp_accessible: {}", error_text(err));
  return !err;
}

caf::error basic_checkpoint_manager::check_writable() {
  auto answer = detail::blocking_request<bool>(
    sys_, typed(actor_), options_.timeout, ckpt_accessible{-1});
  if (!answer)
    return std::move(answer.error());
  if (!*answer)
    return make_error(persistence_errc::not_writable,
                      "checkpoint directory " + db_prefix_
                        + " cannot be written (the log says why)");
  return {};
}

caf::error basic_checkpoint_manager::check_committed(int64_t epoch) {
  if (epoch < 0)
    return make_error(persistence_errc::not_committed,
                      "epoch " + std::to_string(epoch) + " is negative");
  auto answer = detail::blocking_request<bool>(
    sys_, typed(actor_), options_.timeout, ckpt_accessible{epoch});
  if (!answer)
    return std::move(answer.error());
  if (!*answer)
    return make_error(persistence_errc::not_committed,
                      "epoch " + std::to_string(epoch) + " is not committed");
  return {};
}

std::string basic_checkpoint_manager::get_ckpt_db_name(const std::string& node,
                                                       int64_t epoch) const {
  return db_name(epoch, node, db_prefix_, path_prefix_);
}

} // namespace epochrt
