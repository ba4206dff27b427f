#pragma once

// Internal to actors/: host code that may block (a session reconnecting to
// a daemon, an upload builder), called from an actor without blocking one
// of the scheduler's threads.

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/spawn_detached.hpp>

namespace epochrt::detail {

using host_work_atom = caf::atom_constant<caf::atom("ert_host")>;

/// Runs `work()` on a thread of its own (a detached actor), then
/// `next(result)` in `self`, as one of `self`'s message handlers. `work`
/// returns a `caf::error` or a `caf::expected<T>`; an exception it throws
/// becomes an `actors_errc::task_failed` error naming `what`, and so does a
/// thread that cannot be started. `next` runs exactly once, unless `self`
/// ends first.
template <class Self, class Work, class Next>
void on_own_thread(Self* self, std::string what, Work work, Next next) {
  using result_type = decltype(work());
  auto result = std::make_shared<std::optional<result_type>>();
  // The work goes in as spawn arguments, not captures: CAF 0.17 starts an
  // actor spawned from a function of no further arguments by dereferencing
  // a null argument tuple (UBSan rejects it).
  auto worker = spawn_detached(
    self->system(),
    [](caf::event_based_actor* worker, Work work,
       std::shared_ptr<std::optional<result_type>> result,
       std::string what) -> caf::behavior {
      return {
        [work = std::move(work), result, what, worker](host_work_atom) mutable {
          try {
            result->emplace(work());
          } catch (const std::exception& ex) {
            result->emplace(make_error(actors_errc::task_failed,
                                       what + " threw: " + ex.what()));
          } catch (...) {
            result->emplace(
              make_error(actors_errc::task_failed, what + " threw"));
          }
          worker->quit();
        },
      };
    },
    std::move(work), result, what);
  if (!worker) {
    next(result_type{make_error(actors_errc::task_failed,
                                "cannot start a thread for " + what)});
    return;
  }
  // The reply is sent after `result` was set, and read only here.
  self->request(worker, caf::infinite, host_work_atom::value)
    .then(
      [result, next]() mutable {
        next(std::move(**result));
      },
      [next](caf::error& err) mutable {
        next(result_type{std::move(err)});
      });
}

} // namespace epochrt::detail
