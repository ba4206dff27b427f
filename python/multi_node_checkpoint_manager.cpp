#include "multi_node_checkpoint_manager.hpp"

#include <utility>

#include "errors.hpp"
#include "gil_release_if_held.hpp"
#include "op_registry.hpp"

namespace epochrt::python {

multi_node_checkpoint_manager::multi_node_checkpoint_manager(
  std::string db_prefix, checkpoint_options options)
  : runtime_(runtime::get()) {
  manager_ = std::make_unique<epochrt::multi_node_checkpoint_manager>(
    runtime_->system(), std::move(db_prefix), std::move(options));
}

multi_node_checkpoint_manager::~multi_node_checkpoint_manager() {
  gil_release_if_held release;
  manager_.reset();
  runtime_.reset();
}

std::unique_lock<std::mutex> multi_node_checkpoint_manager::lock() {
  check_not_in_python_op("a MultiNodeCheckpointManager call");
  return std::unique_lock<std::mutex>{mtx_};
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
  std::optional<int64_t> result;
  throw_if(manager_->get_resume_from_epoch_id(user_epoch, result));
  return result;
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
  return *result;
}

std::string
multi_node_checkpoint_manager::get_ckpt_db_name(const std::string& node,
                                                int64_t epoch) {
  auto guard = lock();
  return manager_->get_ckpt_db_name(node, epoch);
}

std::vector<std::string>
multi_node_checkpoint_manager::blob_list(const std::string& node) {
  auto guard = lock();
  return manager_->blob_list(node);
}

} // namespace epochrt::python
