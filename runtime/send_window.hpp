#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

namespace epochrt {

/// Messages sent in order within a budget of bytes that their receivers'
/// acknowledgements free: what a daemon's exchange sends through the
/// relay (its master's exchange), so that the relay never holds more than
/// each daemon's budget at once. Without it, the first large all-reduce
/// over 32 fresh daemons put 4 GiB through the master at once, whose
/// middleman then read its connections too late and lost live daemons.
///
/// A pure state machine: `push`, `ack`, `expire` and `forget` take an
/// event and return the messages that may be sent now, in the order they
/// must be sent; the caller sends them (in that order, before the next
/// event's) and owns the clock, the threads and the connections. `Dest`
/// says where a message goes (looked at only by the predicates of `ack`
/// and `forget`); `Item` is the message. `now` is the time of the event;
/// a caller that never calls `expire` may leave it 0.
///
/// - Order: messages leave in the order they were pushed, whatever their
///   size; a message of no bytes (a control message) costs nothing but
///   still waits behind data pushed before it.
/// - Budget: the bytes sent and not acknowledged stay within `budget`,
///   except that a message larger than the budget is sent alone (when
///   nothing is in flight), so that nothing waits forever.
/// - Each data message sent gets a sequence number (from 1) that its
///   receiver acknowledges; a control message gets 0 and is not
///   acknowledged. An unknown or repeated acknowledgement, or one that
///   the caller's check refuses (from another than the receiver), is
///   ignored.
/// - An acknowledgement that has not come `expire`'s age after its
///   message was sent never will, or comes late (a receiver lost, a
///   message refused on the way): its bytes are freed then, so that no
///   loss leaves the window full for good. Times are the caller's
///   (milliseconds of a steady clock).
///
/// Not thread-safe: one owner.
template <class Dest, class Item>
class send_window {
public:
  struct send {
    uint64_t seq = 0; // 0: not acknowledged
    Dest dest;
    Item item;
  };

  explicit send_window(uint64_t budget) : budget_(budget) {
    // nop
  }

  /// Queues `item` of `bytes` (0: a control message) for `dest`; what may
  /// be sent now.
  std::vector<send> push(Dest dest, Item item, uint64_t bytes,
                         uint64_t now = 0) {
    queue_.push_back(waiting{std::move(dest), std::move(item), bytes});
    return release(now);
  }

  /// The receiver of message `seq` has it, unless `from_receiver` (given
  /// the message's destination) says the acknowledgement is not its
  /// receiver's; what may be sent now.
  std::vector<send> ack(uint64_t seq, uint64_t now = 0,
                        const std::function<bool(const Dest&)>& from_receiver
                        = {}) {
    auto i = in_flight_.find(seq);
    if (i == in_flight_.end()
        || (from_receiver && !from_receiver(i->second.dest)))
      return {};
    in_flight_bytes_ -= i->second.bytes;
    in_flight_.erase(i);
    return release(now);
  }

  /// Frees the bytes of the messages sent at `now - max_age` or before,
  /// whose acknowledgements have not come; what may be sent now.
  std::vector<send> expire(uint64_t now, uint64_t max_age) {
    for (auto i = in_flight_.begin(); i != in_flight_.end();) {
      if (i->second.sent_at + max_age <= now) {
        in_flight_bytes_ -= i->second.bytes;
        i = in_flight_.erase(i);
      } else {
        ++i;
      }
    }
    return release(now);
  }

  /// Messages sent and not acknowledged.
  size_t in_flight() const noexcept {
    return in_flight_.size();
  }

  /// Forgets the messages in flight to each destination for which
  /// `sent_to` is true (their acknowledgements will never come, or no
  /// longer matter), and drops the queued ones for which `queued_to` is
  /// true (their receiver is gone); what may be sent now.
  std::vector<send> forget(const std::function<bool(const Dest&)>& sent_to,
                           const std::function<bool(const Dest&)>& queued_to,
                           uint64_t now = 0) {
    for (auto i = in_flight_.begin(); i != in_flight_.end();) {
      if (sent_to(i->second.dest)) {
        in_flight_bytes_ -= i->second.bytes;
        i = in_flight_.erase(i);
      } else {
        ++i;
      }
    }
    for (auto i = queue_.begin(); i != queue_.end();)
      i = queued_to(i->dest) ? queue_.erase(i) : std::next(i);
    return release(now);
  }

  /// Bytes sent and not acknowledged.
  uint64_t in_flight_bytes() const noexcept {
    return in_flight_bytes_;
  }

  /// Messages waiting for the budget.
  size_t queued() const noexcept {
    return queue_.size();
  }

private:
  struct waiting {
    Dest dest;
    Item item;
    uint64_t bytes;
  };

  struct flying {
    Dest dest;
    uint64_t bytes;
    uint64_t sent_at;
  };

  std::vector<send> release(uint64_t now) {
    std::vector<send> result;
    while (!queue_.empty()) {
      auto& next = queue_.front();
      if (next.bytes > 0 && in_flight_bytes_ > 0
          && in_flight_bytes_ + next.bytes > budget_)
        break;
      send out{0, std::move(next.dest), std::move(next.item)};
      if (next.bytes > 0) {
        out.seq = ++last_seq_;
        in_flight_.emplace(out.seq, flying{out.dest, next.bytes, now});
        in_flight_bytes_ += next.bytes;
      }
      queue_.pop_front();
      result.push_back(std::move(out));
    }
    return result;
  }

  uint64_t budget_;
  uint64_t last_seq_ = 0;
  uint64_t in_flight_bytes_ = 0;
  std::map<uint64_t, flying> in_flight_;
  std::deque<waiting> queue_;
};

} // namespace epochrt
