#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/exchange.hpp>

namespace epochrt {

/// Waits to complete and how, collected while a lock is held and run once
/// it is released: a completion runs its task's resumption, which must not
/// run under the lock of the exchange.
using exchange_completions
  = std::vector<std::pair<std::shared_ptr<exchange_wait>, exchange_outcome>>;

/// Runs and clears `done`.
void complete_all(exchange_completions& done);

/// One run of a channel, as its node keeps it: a bounded FIFO of items, and
/// the puts and takes waiting on it, each served in the order it came.
///
/// Once every task that puts into it or closes it has ended, a take from
/// the channel while it is empty and open can never be answered; once
/// every task that takes from it has ended, a put while it is full never
/// can. Both then fail (`runtime_errc::exchange_failed`) rather than wait.
///
/// Not thread-safe: its owner (the node's exchange) locks around each call.
/// No call completes a wait itself; each appends the waits it ends to
/// `done`, for the caller to complete after unlocking.
class channel {
public:
  explicit channel(channel_plan plan);

  const channel_plan& plan() const noexcept {
    return plan_;
  }

  const std::string& name() const noexcept {
    return plan_.channel.name;
  }

  /// Puts `item` (the caller checked its size), completing `wait` once it
  /// is stored: at once while there is room, when a take makes room
  /// otherwise. Fails it when the channel is closed.
  void put(const task_ref& from, std::vector<tensor_ptr> item,
           std::shared_ptr<exchange_wait> wait, exchange_completions& done);

  /// Takes the oldest item into `wait`'s values: at once when there is one,
  /// when a put brings one otherwise; `closed` once the channel is closed
  /// and empty.
  void take(const task_ref& from, std::shared_ptr<exchange_wait> wait,
            exchange_completions& done);

  /// Closes the channel and completes `wait`: waiting takes end as closed,
  /// waiting puts fail. Idempotent.
  void close(const task_ref& from, std::shared_ptr<exchange_wait> wait,
             exchange_completions& done);

  /// `task` ended: the channel's waits that only it could have ended fail.
  void task_ended(const task_ref& task, exchange_completions& done);

  /// Fails every waiting put and take with `err`.
  void fail_waiting(const caf::error& err, exchange_completions& done);

  /// Fails the waiting puts and takes of tasks on `node` with `err`: they
  /// are being stopped, and an item must not go to a take nobody waits on.
  void fail_waiting_of(const std::string& node, const caf::error& err,
                       exchange_completions& done);

  size_t items() const noexcept {
    return items_.size();
  }

  bool closed() const noexcept {
    return closed_;
  }

private:
  struct waiting_put {
    task_ref from;
    std::vector<tensor_ptr> item;
    std::shared_ptr<exchange_wait> wait;
  };

  struct waiting_take {
    task_ref from;
    std::shared_ptr<exchange_wait> wait;
  };

  // "channel 'c' on node n".
  std::string label() const;
  bool full() const noexcept;
  bool all_ended(const std::vector<task_ref>& tasks) const;
  // Fails the waits that can never be answered any more.
  void fail_stuck(exchange_completions& done);

  channel_plan plan_;
  std::deque<std::vector<tensor_ptr>> items_;
  std::deque<waiting_put> puts_;
  std::deque<waiting_take> takes_;
  std::set<task_ref> ended_;
  bool closed_ = false;
};

} // namespace epochrt
