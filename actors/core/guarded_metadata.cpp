#include <epochrt/actors/core/guarded_metadata.hpp>

#include <exception>
#include <utility>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

namespace {

caf::error failure(const char* what, const std::string& why) {
  return make_error(actors_errc::checkpoint_failed,
                    std::string{"the metadata handler's "} + what + " threw "
                      + why);
}

// Calls `f`, the handler's `what`, with its exceptions as errors.
template <class F>
auto guard(const char* what, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& ex) {
    return failure(what, ex.what());
  } catch (...) {
    return failure(what, "an unknown exception");
  }
}

} // namespace

guarded_metadata::guarded_metadata(std::shared_ptr<metadata_handler> handler)
  : handler_(std::move(handler)) {
  // nop
}

caf::error
guarded_metadata::set_params(const std::string& db_prefix,
                             const std::vector<std::string>& node_names,
                             const std::string& path_prefix) {
  return guard("set_params", [&] {
    return handler_->set_params(db_prefix, node_names, path_prefix);
  });
}

caf::error guarded_metadata::set_job_definition(const std::string& definition) {
  return guard("set_job_definition", [&] {
    return handler_->set_job_definition(definition);
  });
}

caf::expected<std::optional<int64_t>>
guarded_metadata::last_epoch(std::optional<int64_t> user_epoch) {
  return guard("last_epoch", [&] {
    return handler_->last_epoch(user_epoch);
  });
}

caf::error guarded_metadata::write(int64_t epoch) {
  return guard("write", [&] {
    return handler_->write(epoch);
  });
}

caf::error
guarded_metadata::commit(int64_t epoch, bool final,
                         const std::vector<checkpoint_stats>& stats) {
  return guard("commit", [&] {
    return handler_->commit(epoch, final, stats);
  });
}

caf::error guarded_metadata::uncommit(int64_t epoch) {
  return guard("uncommit", [&] {
    return handler_->uncommit(epoch);
  });
}

caf::expected<std::vector<int64_t>> guarded_metadata::committed_epochs() {
  return guard("committed_epochs", [&] {
    return handler_->committed_epochs();
  });
}

caf::expected<std::optional<int64_t>> guarded_metadata::final_epoch() {
  return guard("final_epoch", [&] {
    return handler_->final_epoch();
  });
}

caf::error
guarded_metadata::report(const std::string& action,
                         const std::vector<checkpoint_stats>& stats) {
  return guard("report", [&] {
    return handler_->report(action, stats);
  });
}

caf::expected<std::optional<checkpoint_metadata>> guarded_metadata::record() {
  return guard("record", [&] {
    return handler_->record();
  });
}

caf::error guarded_metadata::adopt_record(const checkpoint_metadata& x) {
  return guard("adopt_record", [&] {
    return handler_->adopt_record(x);
  });
}

caf::error guarded_metadata::check_writable() {
  return guard("check_writable", [&] {
    return handler_->check_writable();
  });
}

} // namespace epochrt
