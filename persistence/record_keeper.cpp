#include <epochrt/persistence/record_keeper.hpp>

#include <utility>

#include <epochrt/persistence/commit_record.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt {

record_keeper::record_keeper(std::shared_ptr<metadata_handler> handler)
  : handler_(std::move(handler)) {
  // nop
}

void record_keeper::set_params(std::string db_prefix,
                               std::vector<std::string> node_names) {
  db_prefix_ = std::move(db_prefix);
  node_names_ = std::move(node_names);
}

void record_keeper::set_job_definition(std::string definition) {
  job_definition_ = std::move(definition);
}

caf::expected<std::optional<checkpoint_metadata>> record_keeper::read() {
  return handler_->read_record();
}

caf::expected<checkpoint_metadata> record_keeper::current() {
  auto record = handler_->read_record();
  if (!record)
    return std::move(record.error());
  return record->value_or(checkpoint_metadata{});
}

caf::expected<std::optional<int64_t>>
record_keeper::resume_epoch(std::optional<int64_t> user_epoch) {
  auto record = current();
  if (!record)
    return std::move(record.error());
  return epochrt::resume_epoch(*record, user_epoch);
}

caf::expected<std::vector<int64_t>> record_keeper::committed_epochs() {
  auto record = current();
  if (!record)
    return std::move(record.error());
  return std::move(record->committed_epochs);
}

caf::expected<std::optional<int64_t>> record_keeper::final_epoch() {
  auto record = current();
  if (!record)
    return std::move(record.error());
  return epochrt::final_epoch(*record);
}

caf::error record_keeper::write(checkpoint_metadata x,
                                const record_change& what) {
  // Kept as recorded when not set here: a tool that changes a record
  // without knowing the job must not erase what the job wrote.
  if (!db_prefix_.empty())
    x.db_prefix = db_prefix_;
  if (!node_names_.empty())
    x.node_names = node_names_;
  if (!job_definition_.empty())
    x.job_definition = job_definition_;
  return handler_->write_record(x, what);
}

caf::error record_keeper::change(record_change what, const pure_change& apply) {
  auto record = current();
  if (!record)
    return std::move(record.error());
  auto changed = apply(std::move(*record));
  if (!changed)
    return std::move(changed.error());
  return write(std::move(*changed), what);
}

caf::error record_keeper::commit(int64_t epoch, bool final) {
  return change({final ? "write_final" : "write", epoch},
                [&](checkpoint_metadata x) {
                  return with_commit(std::move(x), epoch, final);
                });
}

caf::error record_keeper::commit_save(int64_t epoch, bool final,
                                      std::vector<checkpoint_stats> stats) {
  return change({final ? "write_final" : "write", epoch},
                [&](checkpoint_metadata x) {
                  return with_stats(with_commit(std::move(x), epoch, final),
                                    "checkpoint_save", std::move(stats));
                });
}

caf::error record_keeper::uncommit(int64_t epoch) {
  auto record = current();
  if (!record)
    return std::move(record.error());
  if (!is_committed(*record, epoch))
    return {}; // nothing to forget, nothing to write
  return write(without_commit(std::move(*record), epoch), {"uncommit", epoch});
}

caf::error record_keeper::report(const std::string& action,
                                 std::vector<checkpoint_stats> stats) {
  // Loads are readers: they leave the checkpoint directory as they found
  // it, the commit record included.
  if (action.find("load") != std::string::npos)
    return {};
  return change({"report", -1}, [&](checkpoint_metadata x) {
    return with_stats(std::move(x), action, std::move(stats));
  });
}

caf::error record_keeper::adopt(const checkpoint_metadata& x) {
  if (!job_definition_.empty() && !x.job_definition.empty()
      && x.job_definition != job_definition_)
    return make_error(persistence_errc::invalid_argument,
                      "the commit record kept for "
                        + (db_prefix_.empty() ? x.db_prefix : db_prefix_)
                        + " is of another definition of the job");
  return write(x, {"adopt", -1});
}

caf::error record_keeper::check_writable() {
  return handler_->check_writable();
}

} // namespace epochrt
