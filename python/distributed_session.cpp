#include "distributed_session.hpp"

#include <utility>

#include "errors.hpp"

namespace epochrt::python {

distributed_session::distributed_session(
  std::map<std::string, node_address> remote,
  std::shared_ptr<const epochrt::op_registry> ops,
  const network_options& network, distributed_session_options options)
  : session("DistributedSession", runtime::get(network), std::move(ops)) {
  auto made = std::make_unique<epochrt::distributed_session>(
    runtime_->system(), ops_, std::move(remote), std::move(options));
  // Held by the base before connecting: a failed connect destroys it
  // through the base's destructor, which releases the GIL if held.
  auto* raw = made.get();
  session_ = std::move(made);
  throw_if(raw->connect_all());
}

std::string distributed_session::address_of(const std::string& node) const {
  return typed().address_of(node);
}

epochrt::distributed_session& distributed_session::typed() const noexcept {
  return static_cast<epochrt::distributed_session&>(*session_);
}

} // namespace epochrt::python
