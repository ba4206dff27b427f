#pragma once

#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>

namespace epochrt {

class exchange_hub;

/// Tells an exchange endpoint to monitor another process's endpoint:
/// `(exchange_watch_atom, caf::actor)`. Local only.
using exchange_watch_atom = caf::atom_constant<caf::atom("ert_xwatch")>;

/// A timer of its hub fired: `(exchange_timer_atom, uint64_t id)`. Local
/// only.
using exchange_timer_atom = caf::atom_constant<caf::atom("ert_xtimer")>;

/// Spawns the endpoint of `hub`: the actor that other processes' exchanges
/// send their messages to (messages/exchange_protocol.hpp), and that sends
/// this process's (the hub sends as it). It hands each message to the hub,
/// which checks it; monitors the endpoints the hub asks it to watch and
/// tells the hub when one goes down; and carries the hub's timers.
///
/// Untyped, as every actor at the network boundary: anything may arrive.
/// It holds the hub weakly, and ends when told to exit.
caf::actor spawn_exchange_endpoint(caf::actor_system& sys,
                                   std::weak_ptr<exchange_hub> hub);

} // namespace epochrt
