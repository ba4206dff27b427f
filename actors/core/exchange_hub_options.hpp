#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <caf/actor.hpp>
#include <caf/node_id.hpp>

namespace epochrt {

/// Options of an exchange_hub.
struct exchange_hub_options {
  /// How long a node may stay silent before what waits for it fails as a
  /// lost node: a node frozen by a fault plan, a message a plan dropped.
  /// The middleman's connection timeout where there is one. Default: 5 s.
  std::chrono::milliseconds silence_limit{5000};
  /// Largest tensor a peer may send (a daemon's --max-tensor-bytes).
  /// Default: 1 GiB.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  /// Bytes of messages for runs that have not begun here yet (a peer that
  /// started first) kept at most; beyond, such messages are refused.
  /// Default: 1 GiB.
  uint64_t max_early_bytes = uint64_t{1} << 30;
  /// Bytes of all-reduce result buffers kept for the next calls once their
  /// blobs are dropped (a training loop reduces the same sizes every step;
  /// a kept buffer spares faulting in fresh pages). Default: 256 MiB.
  size_t max_recycled_bytes = size_t{256} << 20;
  /// How a daemon's exchange opens a connection of its own to another
  /// daemon of a run (at exchange_peer::host, port), one it sent data to
  /// or received data from in an earlier run (through the relay), and
  /// whose address sorts after its own: called without the
  /// hub's locks, must not block, and calls `linked` with the other
  /// process's node once connected and `unlinked` when that connection is
  /// gone (with a null node when it never came up). What watches the
  /// connection must end with `owner`, the exchange's endpoint. Null (the
  /// default, and a session's exchange): daemons reach each other through
  /// the relay only.
  std::function<void(const std::string& host, uint16_t port,
                     const caf::actor& owner,
                     std::function<void(const caf::node_id&)> linked,
                     std::function<void(const caf::node_id&)> unlinked)>
    connect_peer;
  /// After a connection to a daemon failed to come up, how long runs
  /// beginning here go through the relay before one tries again (each run
  /// that begins would otherwise try, and a job of short epochs would open
  /// hundreds of connections a second to an unreachable address).
  /// Default: 10 s.
  std::chrono::milliseconds link_retry_delay{10000};
  /// Connections to other daemons being opened at once, at most: the
  /// others wait for a later run (which goes through the relay meanwhile).
  /// Every daemon of a job of n opening its n/2 connections at the first
  /// epoch starves the processes of a machine or a network of CPU: a
  /// master then hears nothing for its whole connection timeout, and
  /// loses a daemon that is alive. Default: 4.
  size_t max_links_opening = 4;
  /// Bytes of data a daemon's exchange may have sent through the relay
  /// and not yet seen acknowledged by their receivers
  /// (runtime/send_window.hpp); what comes beyond waits here, in order.
  /// Bounds what the master holds for each daemon: with no bound, the
  /// first 64 MiB all-reduce over 32 fresh daemons put 4 GiB through the
  /// master at once, whose middleman then read its connections more than
  /// the connection timeout late and lost live daemons. Default: 4 MiB.
  uint64_t relay_window_bytes = uint64_t{4} << 20;
  /// How often a run is checked for a deadlock: every task that uses its
  /// channels or collectives waiting for another, nothing under way
  /// (runtime/deadlock_detector.hpp). A run of this process alone is
  /// checked here; one over several processes by the exchange of its
  /// first peer, which asks every other for a report and counts the run's
  /// messages between processes (runtime/deadlock_probe.hpp). A deadlocked
  /// run fails after two quiet checks in a row, its waits in every process
  /// with `exchange_failed` naming every task and what it waits in. 0:
  /// never, and no report for the runs of other processes (which are then
  /// never found deadlocked either). Default: 500 ms.
  std::chrono::milliseconds deadlock_check{500};
};

} // namespace epochrt
