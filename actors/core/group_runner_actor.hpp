#pragma once

#include <chrono>
#include <map>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/actor_protocols.hpp>

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
group_runner_actor spawn_group_runner(caf::actor_system& sys,
                                      std::map<std::string, caf::actor> nodes,
                                      std::chrono::milliseconds timeout);

} // namespace epochrt
