#pragma once

#include <functional>

#include <caf/error.hpp>
#include <caf/fwd.hpp>

namespace epochrt::detail {

/// Runs `work` once on a new thread that `sys` counts as one of its running
/// actors, so that `~actor_system` waits for it exactly as for a detached
/// actor, and the thread may use `sys` (send messages) until it ends.
///
/// Unlike `sys.spawn<caf::detached>(...)`, a thread that cannot be created
/// (EAGAIN, ENOMEM under an address-space or process limit) is an error
/// value (`actors_errc::task_failed`, naming `what`) and leaves nothing
/// behind: CAF 0.17.6 registers a detached actor as running before it
/// starts the actor's thread and never unregisters it when the thread
/// cannot start, so that actor system would never shut down.
///
/// `work` must not throw (an exception escaping it is caught and dropped);
/// it and everything it captures are destroyed on the new thread before the
/// system stops counting it.
caf::error start_counted_thread(caf::actor_system& sys, const std::string& what,
                                std::function<void()> work);

} // namespace epochrt::detail
