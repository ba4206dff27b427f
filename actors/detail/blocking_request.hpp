#pragma once

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/expected.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>
#include <caf/unit.hpp>

#include <epochrt/actors/detail/timeouts.hpp>

namespace epochrt::detail {

/// Waits until `ready` holds a value or `timeout` has passed; whether it
/// does. A timeout of `never` or more waits that long: the standard
/// library adds the timeout to the clock's now in nanoseconds, which
/// milliseconds::max() (a host's "never") would overflow into no wait.
template <class T>
bool wait_ready(std::future<T>& ready, std::chrono::milliseconds timeout) {
  return ready.wait_for(std::min(timeout, never)) == std::future_status::ready;
}

/// The value `worker` sets in `ready`, waited for up to `timeout`; past it,
/// `worker` is stopped and the result is `caf::sec::request_timeout`. For
/// a host thread, never an actor.
template <class T>
caf::expected<T> await_or_stop(std::future<caf::expected<T>>& ready,
                               const caf::actor& worker,
                               std::chrono::milliseconds timeout) {
  if (!wait_ready(ready, timeout)) {
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    return caf::make_error(caf::sec::request_timeout);
  }
  return ready.get();
}

/// What a blocking request's asker hands the waiting thread.
template <class Reply>
using reply_promise = std::shared_ptr<std::promise<caf::expected<Reply>>>;

/// Asks `dest` once, without a CAF timeout, and hands the reply or the
/// error to `promise`. The waiting thread keeps the time: in CAF 0.17 a
/// timed request is an entry in the clock thread that holds its requester
/// for the whole timeout, answered or not, which over a long job's epochs
/// added up to about 1 KiB per call.
template <class Reply, class Handle, class Request>
class blocking_asker : public caf::event_based_actor {
public:
  blocking_asker(caf::actor_config& cfg, Handle dest, Request request,
                 reply_promise<Reply> promise)
    : caf::event_based_actor(cfg), dest_(std::move(dest)),
      request_(std::move(request)), promise_(std::move(promise)) {
    // nop
  }

  caf::behavior make_behavior() override {
    // A receiver that is gone never answers: its down message ends the
    // wait at once, not the caller's timeout. That includes a remote one
    // whose connection was lost (CAF kills its proxy), which a copy to a
    // daemon that died would otherwise wait out in full.
    monitor(dest_);
    set_down_handler([this](caf::down_msg& down) {
      if (down.source == dest_.address())
        finish(caf::make_error(caf::sec::request_receiver_down,
                               "the receiver is gone: "
                                 + caf::to_string(down.reason)));
    });
    auto on_error = [this](caf::error& err) {
      finish(std::move(err));
    };
    if constexpr (std::is_same_v<Reply, caf::unit_t>) {
      request(dest_, caf::infinite, std::move(request_))
        .then(
          [this] {
            finish(caf::unit);
          },
          on_error);
    } else {
      request(dest_, caf::infinite, std::move(request_))
        .then(
          [this](Reply& reply) {
            finish(std::move(reply));
          },
          on_error);
    }
    return {};
  }

private:
  // Hands over the outcome once. The monitor goes with it: a long-lived
  // receiver (a daemon's store) would otherwise keep one per request.
  void finish(caf::expected<Reply> outcome) {
    if (done_)
      return;
    done_ = true;
    demonitor(dest_.address());
    promise_->set_value(std::move(outcome));
    quit();
  }

  Handle dest_;
  Request request_;
  reply_promise<Reply> promise_;
  bool done_ = false;
};

/// A request sent by `start_request`, whose reply a thread waits for later.
template <class Reply>
struct pending_reply {
  std::future<caf::expected<Reply>> reply;
  caf::actor asker;

  /// The reply, waited for at most `timeout` (then
  /// `caf::sec::request_timeout`, and the request is abandoned).
  caf::expected<Reply> get(std::chrono::milliseconds timeout) {
    return await_or_stop(reply, asker, timeout);
  }
};

/// Sends `request` to `dest` and returns at once; the reply is collected
/// with `pending_reply::get`. Several requests may be in flight this way
/// (a transfer's window). For threads outside CAF's scheduler, as
/// `blocking_request`, and for a detached actor's own thread.
template <class Reply, class Handle, class Request>
pending_reply<Reply>
start_request(caf::actor_system& sys, const Handle& dest, Request&& request) {
  using request_type = std::decay_t<Request>;
  auto promise = std::make_shared<std::promise<caf::expected<Reply>>>();
  pending_reply<Reply> result;
  result.reply = promise->get_future();
  result.asker = sys.spawn<blocking_asker<Reply, Handle, request_type>>(
    dest, request_type{std::forward<Request>(request)}, std::move(promise));
  return result;
}

/// Sends `request` to `dest` and blocks the calling thread until the reply
/// or an error arrives, at most `timeout` (then `caf::sec::request_timeout`,
/// and the request is abandoned). `dest` is an untyped or a typed handle;
/// with a typed one, a request it does not take does not compile. For
/// threads outside CAF's scheduler: the public blocking facades, and a
/// detached actor's own thread (the persistence actor's copies), never an
/// actor on the scheduler, whose thread it would hold.
template <class Reply, class Handle, class Request>
caf::expected<Reply>
blocking_request(caf::actor_system& sys, const Handle& dest,
                 std::chrono::milliseconds timeout, Request&& request) {
  using request_type = std::decay_t<Request>;
  auto promise = std::make_shared<std::promise<caf::expected<Reply>>>();
  auto reply = promise->get_future();
  auto asker = sys.spawn<blocking_asker<Reply, Handle, request_type>>(
    dest, request_type{std::forward<Request>(request)}, std::move(promise));
  return await_or_stop(reply, asker, timeout);
}

} // namespace epochrt::detail
