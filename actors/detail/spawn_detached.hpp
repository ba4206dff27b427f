#pragma once

#include <system_error>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_registry.hpp>
#include <caf/actor_system.hpp>
#include <caf/spawn_options.hpp>

namespace epochrt::detail {

/// `sys.spawn<caf::detached>(fun, xs...)`, or an invalid handle when the
/// actor's thread cannot be created (EAGAIN, ENOMEM under an address-space
/// or process limit).
///
/// CAF 0.17.6 counts a detached actor as a running actor and as a detached
/// thread before it starts the actor's thread, lets the std::system_error
/// of a failed start escape `spawn`, and never uncounts either:
/// `~actor_system` would then wait for ever (in await_running_count_equal,
/// then in await_detached_threads). This undoes both counts, so a process
/// that could not start an actor still exits.
/// The handle is the one `spawn` infers from `fun` (typed for a typed
/// behavior).
template <class F, class... Ts>
auto spawn_detached(caf::actor_system& sys, F fun, Ts&&... xs)
  -> decltype(sys.spawn<caf::detached>(std::move(fun),
                                       std::forward<Ts>(xs)...)) {
  try {
    return sys.spawn<caf::detached>(std::move(fun), std::forward<Ts>(xs)...);
  } catch (const std::system_error&) {
    sys.registry().dec_running();
    sys.dec_detached_threads();
    return {};
  }
}

} // namespace epochrt::detail
