#pragma once

#include <chrono>
#include <type_traits>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/unit.hpp>

namespace epochrt::detail {

/// Sends `request` to `dest` and blocks the calling thread until the reply
/// or an error arrives, at most `timeout`. `dest` is an untyped or a typed
/// handle; with a typed one, a request it does not take does not compile. For
/// the public blocking facades only: never call it from inside an actor.
template <class Reply, class Handle, class Request>
caf::expected<Reply>
blocking_request(caf::actor_system& sys, const Handle& dest,
                 std::chrono::milliseconds timeout, Request&& request) {
  caf::scoped_actor self{sys};
  caf::expected<Reply> result{caf::error{}};
  if constexpr (std::is_same_v<Reply, caf::unit_t>) {
    self->request(dest, timeout, std::forward<Request>(request))
      .receive(
        [&] {
          result = caf::unit;
        },
        [&](caf::error& err) {
          result = std::move(err);
        });
  } else {
    self->request(dest, timeout, std::forward<Request>(request))
      .receive(
        [&](Reply& reply) {
          result = std::move(reply);
        },
        [&](caf::error& err) {
          result = std::move(err);
        });
  }
  return result;
}

} // namespace epochrt::detail
