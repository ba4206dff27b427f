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

caf::expected<std::optional<checkpoint_metadata>>
guarded_metadata::read_record() {
  return guard("read_record", [&] {
    return handler_->read_record();
  });
}

caf::error guarded_metadata::write_record(const checkpoint_metadata& x,
                                          const record_change& change) {
  return guard("write_record", [&] {
    return handler_->write_record(x, change);
  });
}

caf::error guarded_metadata::check_writable() {
  return guard("check_writable", [&] {
    return handler_->check_writable();
  });
}

} // namespace epochrt
