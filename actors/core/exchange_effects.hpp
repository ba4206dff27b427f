#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/exchange.hpp>

namespace epochrt {

/// What a section of the exchange that ran under its lock leaves to do once
/// the lock is released: waits to complete, messages to send, work for the
/// pool, endpoints to watch and daemons to connect to. Filled by the hub
/// and its runs (exchange_run.hpp), carried out by exchange_hub::flush, so
/// that no wait completes, no message leaves and no work starts while the
/// lock is held. Not thread-safe: one per locked section.
struct exchange_effects {
  exchange_completions done;
  std::vector<std::pair<caf::actor, caf::message>> outbox;
  std::vector<std::function<void()>> jobs;
  /// The caller does the last job itself rather than queue it: a task
  /// whose contribution completed a call (on a pool thread, and with
  /// nothing else to do until the call ends) works on it at once instead
  /// of waiting for another thread to wake and take it. Its op holds the
  /// node's workspace meanwhile, for one share of the reduction (at most
  /// 1/max_shares of it).
  bool last_job_here = false;
  /// Endpoints of other processes to watch.
  std::vector<caf::actor> watch;
  /// Daemons to open a connection of our own to.
  std::vector<exchange_peer> links;

  /// Queues `msg` for `to`; nothing when `to` is null.
  void send(const caf::actor& to, caf::message msg);

  /// Queues reply_message(run, op, status, error) for `to`.
  void reply(const caf::actor& to, uint64_t run, uint64_t op,
             exchange_status status, std::string error);

  /// Queues the failure of `wait` with `err`.
  void fail(std::shared_ptr<exchange_wait> wait, caf::error err);
};

/// The answer to request `op` of run `run`, carrying no values.
caf::message reply_message(uint64_t run, uint64_t op, exchange_status status,
                           std::string error);

/// Logs, as a warning of the system `sender` lives in, that a message from
/// `sender` was refused and why. Refusals are logged, never answered with
/// more than an exchange_reply: a peer that sends nonsense learns nothing.
void log_refusal(const caf::actor& sender, const std::string& what);

/// The error of an operation on run `run` after it ended here.
caf::error run_over(uint64_t run);

} // namespace epochrt
