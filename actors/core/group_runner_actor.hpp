#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/detail/exchange_setup.hpp>
#include <epochrt/messages/actor_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt {

/// Spawns a one-shot actor that runs one task group across nodes.
///
/// Sent a `run_tasks` holding every task of the group, it sends each node of
/// `nodes` its own tasks at once (nodes run in parallel), waits at most
/// `timeout` for all of them (one timer, detail::gather), replies one
/// `tasks_done` (empty node name) with all outputs in node order, and quits.
/// A task naming a node missing from `nodes` fails the group with
/// `actors_errc::unknown_node` before anything runs; the first node's error
/// fails it at once, and a node that does not answer in time or is lost
/// fails it with `actors_errc::node_lost` naming the node, the group and the
/// epoch.
/// The runner monitors the nodes it waits for, so a node actor that ends
/// without replying fails the group at once; and it quits as soon as its
/// reply is out, so it never outlives a failed group.
///
/// For an actor that has a group run by request. epochrt's own callers do
/// not: the job runner runs its groups inside itself (detail::run_group,
/// the same code), and session::run uses `start_group_run`, which needs no
/// actor to wait for the reply.
group_runner_actor spawn_group_runner(caf::actor_system& sys,
                                      std::map<std::string, node_actor> nodes,
                                      std::chrono::milliseconds timeout);

/// What a group run for a blocking caller ends with.
using group_outcome_fn = std::function<void(caf::expected<tasks_done>)>;

/// Runs `group` on `nodes` like a group runner sent it, for a blocking
/// caller: the runner hands the outcome to `done` (once, from the runner's
/// thread) instead of replying, and quits. One actor and no request
/// between the caller and the runner. When the runner ends before the
/// group does (it was sent an exit), `done` gets `actors_errc::node_lost`
/// saying so. Returns the runner, for an exit when the caller gives up.
/// A group with channels or collectives (`group.plan`) runs with
/// `exchange` (detail::run_group).
caf::actor
start_group_run(caf::actor_system& sys, std::map<std::string, node_actor> nodes,
                std::chrono::milliseconds timeout, run_tasks group,
                group_outcome_fn done, detail::exchange_setup exchange = {});

} // namespace epochrt
