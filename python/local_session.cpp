#include "local_session.hpp"

#include <utility>

#include "errors.hpp"

namespace epochrt::python {

local_session::local_session(size_t worker_threads,
                             std::shared_ptr<const epochrt::op_registry> ops)
  : session("LocalSession", runtime::get(), std::move(ops)) {
  session_options options;
  options.worker_threads = worker_threads;
  auto made = std::make_unique<epochrt::local_session>(runtime_->system(), ops_,
                                                       options);
  throw_if(made->start_error());
  session_ = std::move(made);
}

} // namespace epochrt::python
