#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/detail/exchange_setup.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt {

/// What a group run for a blocking caller ends with.
using group_outcome_fn = std::function<void(caf::expected<tasks_done>)>;

/// Runs one task group across its nodes for a blocking caller
/// (session::run), in a one-shot actor: it sends each node of `nodes` its
/// own tasks of `group` at once (nodes run in parallel), waits at most
/// `timeout` for all of them (one timer, detail::gather), hands the outcome
/// to `done` -- every output in node order, or the first failure -- once,
/// from the actor's thread, and quits. A task naming a node missing from
/// `nodes` fails the group with `actors_errc::unknown_node` before anything
/// runs; the first node's error fails it at once, and a node that does not
/// answer in time or is lost (the actor monitors the nodes it waits for)
/// fails it with `actors_errc::node_lost` naming the node, the group and
/// the epoch. When the actor ends before the group does (it was sent an
/// exit), `done` gets `actors_errc::node_lost` saying so. Returns the
/// actor, for an exit when the caller gives up. A group with channels or
/// collectives (`group.plan`) runs with `exchange` (detail::run_group, the
/// same code the job attempt runs its groups with).
caf::actor
start_group_run(caf::actor_system& sys, std::map<std::string, node_actor> nodes,
                std::chrono::milliseconds timeout, run_tasks group,
                group_outcome_fn done, detail::exchange_setup exchange = {});

} // namespace epochrt
