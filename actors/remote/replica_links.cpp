#include <epochrt/actors/remote/replica_links.hpp>

#include <caf/actor_system.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/remote/admission_protocol.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/replica_protocol.hpp>

namespace epochrt {

replica_links::replica_links(caf::actor_system& sys,
                             std::optional<std::string> secret,
                             std::chrono::milliseconds timeout)
  : sys_(sys), secret_(std::move(secret)), timeout_(timeout) {
  // nop
}

caf::expected<caf::actor> replica_links::store_at(const std::string& address,
                                                  bool reconnect) {
  {
    annotated_mutex::guard guard{mtx_};
    auto i = stores_.find(address);
    if (i != stores_.end() && !reconnect)
      return i->second;
    if (i != stores_.end())
      stores_.erase(i);
  }
  auto where = node_address::parse(address);
  if (!where)
    return std::move(where.error());
  // Connecting blocks: not under the lock, so that one unreachable daemon
  // does not hold up copies to the others.
  auto unreachable = [&](const caf::error& err) {
    return make_error(actors_errc::unreachable,
                      "no replica store at " + address + ": "
                        + error_text(err));
  };
  auto gatekeeper
    = connect_actor(sys_, where->host, where->port, timeout_, secret_);
  if (!gatekeeper)
    return unreachable(gatekeeper.error());
  auto store = detail::blocking_request<caf::actor>(sys_, *gatekeeper, timeout_,
                                                    replica_store_atom::value);
  if (!store)
    return unreachable(store.error());
  if (!*store)
    return unreachable(make_error(actors_errc::rejected, "it keeps no copies"));
  annotated_mutex::guard guard{mtx_};
  stores_.insert_or_assign(address, *store);
  return *store;
}

caf::expected<int> replica_links::open_stream(const std::string& address) {
  auto where = node_address::parse(address);
  if (!where)
    return std::move(where.error());
  return detail::connect_admitted(where->host, where->port, secret_, timeout_,
                                  detail::admission_purpose::copy_stream);
}

} // namespace epochrt
