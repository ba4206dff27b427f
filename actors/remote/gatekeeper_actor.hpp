#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/core/fwd.hpp>
#include <epochrt/actors/core/replica_client.hpp>

namespace epochrt {

/// What a daemon's gatekeeper admits masters to.
struct gatekeeper_config {
  /// The secret a master must prove it knows; none: no proof asked.
  std::optional<std::string> secret;
  /// Where the nodes' checkpoints and path arguments go: absolute.
  std::string root;
  std::shared_ptr<const op_registry> ops;
  /// Largest tensor a master may send (see node_server_options).
  uint64_t max_tensor_bytes = 0;
  /// Longest a task of one group may run.
  std::chrono::milliseconds task_timeout{0};
  /// The daemon's fault plan; null: none.
  std::shared_ptr<fault_injector> faults;
  /// Runs the tasks of every node the daemon hosts.
  std::shared_ptr<worker_pool> pool;
  /// The daemon's end of channels and collectives.
  std::shared_ptr<exchange_hub> hub;
  /// The daemon's replica store (replica_store_actor.hpp), handed to any
  /// admitted peer that asks (`replica_store_atom`): other daemons of the
  /// job. Null: none.
  caf::actor store;
  /// How the nodes' persistence actors reach other daemons' stores.
  store_finder find_store;
  /// How they move copies' bytes on streams; empty: in CAF messages.
  copy_stream_ends streams;
};

/// Spawns the actor a daemon publishes: the one a master meets first. It
/// speaks the handshake of messages/remote_protocol.hpp — a hello gets a
/// challenge (with the daemon's proof when it has a secret), an attach
/// that answers an open challenge with the master's proof gets a node: a
/// node actor, a persistence actor under `root` and a node gate
/// (spawn_node_gate) that obeys that master only. It serves one master at
/// a time: another is refused until every node of the first is dropped,
/// which happens when the first master goes away (its actor is monitored)
/// or attaches a node again (the old one is replaced). A challenge lives
/// 30 s and answers one attach; at most 64 are open, the oldest dropped
/// first. Refusals are actors_errc::rejected or auth_failed replies. It
/// also answers `replica_store_atom` with `cfg.store`, to any peer: one
/// that got through admission (or TLS) is a process of the job. When
/// the gatekeeper stops, it drops every node.
caf::actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_config cfg);

} // namespace epochrt
