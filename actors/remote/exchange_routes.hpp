#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/message.hpp>
#include <caf/node_id.hpp>

#include <epochrt/actors/core/exchange_hub_options.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/send_window.hpp>

namespace epochrt {

/// Calls `fn` with the exchange message `msg` (a caf::message, const or
/// not) holds, writable when `msg` is; false when it holds none. The one
/// list of what an exchange_forward may carry.
template <class Message, class F>
bool visit_exchange_message(Message& msg, F fn) {
  auto as = [&](auto* type) {
    using message_type = std::remove_pointer_t<decltype(type)>;
    if (!msg.template match_elements<message_type>())
      return false;
    if constexpr (std::is_const_v<Message>)
      fn(msg.template get_as<message_type>(0));
    else
      fn(msg.template get_mutable_as<message_type>(0));
    return true;
  };
  return as(static_cast<exchange_put*>(nullptr))
    || as(static_cast<exchange_take*>(nullptr))
    || as(static_cast<exchange_close*>(nullptr))
    || as(static_cast<exchange_reply*>(nullptr))
    || as(static_cast<exchange_part*>(nullptr))
    || as(static_cast<exchange_result*>(nullptr))
    || as(static_cast<exchange_task_end*>(nullptr))
    || as(static_cast<exchange_node_lost*>(nullptr))
    || as(static_cast<exchange_probe*>(nullptr))
    || as(static_cast<exchange_probe_reply*>(nullptr))
    || as(static_cast<exchange_deadlock*>(nullptr));
}

/// Whether `msg` carries a run's data (a channel request or reply, a
/// collective part or result), as opposed to a task's end or a probe.
bool carries_data(const caf::message& msg);

/// How the exchange of a process reaches the exchanges of other processes.
///
/// A session's exchange and the exchange of a daemon reached directly send
/// straight to the receiver. A daemon's exchange reaches another daemon's
/// through the run's relay (the master's exchange) until it has a
/// connection of its own to that daemon: wrapped in an exchange_forward,
/// in the order given, within a window of `relay_window_bytes` that the
/// receivers' acknowledgements free (runtime/send_window.hpp). It opens
/// such connections only to the daemons it exchanged data with in an
/// earlier run, at most `max_links_opening` at once, and only to those
/// whose address sorts after its own (one side opens each); a run never
/// switches from the relay to a connection midway, so its messages keep
/// their order.
///
/// Thread-safe. Two mutexes: the routes, then the relay window, which is
/// held while what it releases is sent (so that messages leave in order)
/// and under which nothing else is locked. The exchange hub calls in with
/// its own lock held or not; nothing here calls back into the hub but the
/// functions given to the constructor, never with a lock of its own held.
class exchange_routes : public std::enable_shared_from_this<exchange_routes> {
public:
  /// Runs a function after a delay unless the exchange stopped (the hub's
  /// `after`).
  using timer_fn
    = std::function<void(std::chrono::milliseconds, std::function<void()>)>;

  /// Where a message through the relay goes: the exchange it is for, the
  /// relay, and the run it is of (whose end frees its bytes).
  struct relayed_to {
    caf::actor to;
    caf::actor relay;
    uint64_t run = 0;
  };

  /// Messages go as `endpoint`, the exchange's endpoint actor of `sys`.
  /// `options` must outlive the routes.
  static std::shared_ptr<exchange_routes>
  make(caf::actor_system& sys, caf::actor endpoint,
       const exchange_hub_options& options, timer_fn after);

  exchange_routes(const exchange_routes&) = delete;
  exchange_routes& operator=(const exchange_routes&) = delete;

  // -- as a relay -------------------------------------------------------------

  /// This exchange passes messages on between `peer` and its other relay
  /// peers. A peer added twice is kept once.
  void add_relay_peer(const caf::actor& peer);

  /// Whether this exchange relays for `peer`.
  bool relays_for(const caf::actor_addr& peer) const;

  // -- a run's routes ---------------------------------------------------------

  /// Chooses the routes of a run's peers as the run begins: to each other
  /// daemon's exchange, direct when connected and not used by another run
  /// (`in_use`: the exchanges the runs under way here use), else the
  /// relay. Appends to `links` the daemons to open a connection to, and to
  /// `direct` the exchanges reached over a connection of its own (never a
  /// proxy CAF killed: messages to one go through the relay).
  void choose(const exchange_plan& plan, const std::set<caf::actor>& in_use,
              std::vector<exchange_peer>& links,
              std::vector<caf::actor>& direct);

  /// Drops the routes of an ended run's peers that no run under way uses
  /// (`in_use`), so that a daemon serving job after job keeps none of the
  /// jobs gone.
  void forget(const std::vector<exchange_peer>& peers,
              const std::set<caf::actor>& in_use);

  /// Sends `msg` to the exchange `to`, through the relay that reaches it
  /// when there is one. Data makes `to` a partner: one to connect to.
  void deliver(const caf::actor& to, caf::message msg);

  /// A relayed message with data came from `peer`: a partner from now on.
  void received_data_from(const caf::actor_addr& peer);

  // -- connections of its own -------------------------------------------------

  /// Opens the connections `choose` asked for (options::connect_peer).
  /// Call without any lock held.
  void open(const std::vector<exchange_peer>& links);

  /// Another daemon's exchange announced a connection it opened to this
  /// process.
  void accepted(const caf::actor& peer);

  /// The endpoint `peer` went down: the connection to its process is
  /// gone. Returns whether messages went to it over that connection.
  bool down(const caf::actor_addr& peer);

  // -- the relay window -------------------------------------------------------

  /// `receiver` says through `relay` that message `seq` came.
  void acked(uint64_t seq, const caf::actor& relay, const caf::actor& receiver);

  /// Frees the bytes in flight of the messages for which `sent` holds, and
  /// drops the queued ones for which `queued` holds.
  void forget_relayed(const std::function<bool(const relayed_to&)>& sent,
                      const std::function<bool(const relayed_to&)>& queued);

  /// Bytes sent through the relay and not yet acknowledged, and messages
  /// waiting for them.
  std::pair<uint64_t, size_t> backlog();

private:
  exchange_routes(caf::actor_system& sys, caf::actor endpoint,
                  const exchange_hub_options& options, timer_fn after);

  void link_up(const caf::node_id& node, const caf::actor& peer,
               const std::string& address);
  void link_down(const caf::node_id& node, const std::string& address);
  // Whether `to` is a proxy CAF killed with its process's last connection.
  static bool is_purged(const caf::actor& to);
  // Sends what the window released, in order.
  void send_relayed(
    std::vector<send_window<relayed_to, caf::message>::send> released)
    EPOCHRT_REQUIRES(window_mtx_);
  // Frees, every silence_limit while messages are in flight, the bytes of
  // those whose acknowledgement has not come within it: a receiver lost, a
  // message refused on the way.
  void arm_expiry();

  caf::actor_system& system_;
  caf::actor endpoint_;
  const exchange_hub_options& options_;
  timer_fn after_;

  mutable annotated_mutex mtx_;
  // Daemons' exchanges reached through a relay, and that relay.
  std::map<caf::actor_addr, caf::actor> routes_ EPOCHRT_GUARDED_BY(mtx_);
  // As a relay: the exchanges it passes messages between.
  std::set<caf::actor_addr> relay_peers_ EPOCHRT_GUARDED_BY(mtx_);
  // Other daemons' exchanges this one sent data to or received data from
  // (channel requests and replies, collective parts and results), through
  // the relay or not: the only ones it connects to. Runs' other messages
  // (a task's end, probes) do not count.
  std::set<caf::actor_addr> partners_ EPOCHRT_GUARDED_BY(mtx_);
  // Processes this one has a connection of its own to, the daemons'
  // exchanges reached over one instead of the relay, and the addresses
  // being connected to or connected.
  std::set<caf::node_id> direct_nodes_ EPOCHRT_GUARDED_BY(mtx_);
  std::set<caf::actor_addr> direct_endpoints_ EPOCHRT_GUARDED_BY(mtx_);
  std::set<std::string> linking_ EPOCHRT_GUARDED_BY(mtx_);
  // Of those, the ones being connected to (a set, not a count: the end of
  // an attempt is then forgotten once however it is reported).
  std::set<std::string> opening_ EPOCHRT_GUARDED_BY(mtx_);
  // Addresses a connection to failed, and when one may be tried again.
  std::map<std::string, std::chrono::steady_clock::time_point>
    retry_at_ EPOCHRT_GUARDED_BY(mtx_);

  annotated_mutex window_mtx_ EPOCHRT_ACQUIRED_AFTER(mtx_);
  send_window<relayed_to, caf::message> window_ EPOCHRT_GUARDED_BY(window_mtx_);
  bool expiry_armed_ EPOCHRT_GUARDED_BY(window_mtx_) = false;
};

} // namespace epochrt
