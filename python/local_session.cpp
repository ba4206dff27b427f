#include "local_session.hpp"

#include <utility>

#include "errors.hpp"
#include "gil_release_if_held.hpp"

namespace epochrt::python {

local_session::local_session(size_t worker_threads) : runtime_(runtime::get()) {
  session_options options;
  options.worker_threads = worker_threads;
  session_ = std::make_unique<epochrt::local_session>(runtime_->system(),
                                                      runtime::ops(), options);
  throw_if(session_->start_error());
}

local_session::~local_session() {
  gil_release_if_held release;
  session_.reset();
  runtime_.reset();
}

tensor local_session::fetch(const std::string& node, const std::string& blob) {
  auto result = session_->fetch(node, blob);
  if (!result)
    throw error(result.error(), error_kind::error);
  return std::move(*result);
}

void local_session::put(const std::string& node, const std::string& blob,
                        tensor value) {
  throw_if(session_->put(node, blob, std::move(value)));
}

} // namespace epochrt::python
