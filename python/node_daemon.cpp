#include "node_daemon.hpp"

#include <utility>

#include "errors.hpp"
#include "gil_release_if_held.hpp"

namespace epochrt::python {

node_daemon::node_daemon(std::shared_ptr<const epochrt::op_registry> ops,
                         const network_options& network,
                         node_server_options options)
  : runtime_(runtime::make_private(network)), ops_(std::move(ops)),
    host_(options.host) {
  auto started
    = node_server::start(runtime_->system(), ops_, std::move(options));
  if (!started)
    throw error(started.error(), error_kind::error);
  server_ = std::move(*started);
  port_ = server_->port();
  root_ = server_->checkpoint_root();
  serving_ = true;
}

node_daemon::~node_daemon() {
  gil_release_if_held release;
  server_.reset();
  ops_.reset();
  runtime_.reset();
}

void node_daemon::stop() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!serving_)
    return;
  server_->stop();
  serving_ = false;
}

bool node_daemon::serving() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return serving_;
}

} // namespace epochrt::python
