#pragma once

// What the tests of one actor's protocol share: the two actor systems they
// run on, stand-ins for the actors the one under test talks to, and the
// questions a test asks of a typed handle at compile time. Actors that
// spawn no threads run on CAF's deterministic test coordinator (virtual
// time); the others on a real scheduler with bounded waits.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/type_list.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_type.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "test/actors/test_support.hpp"
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/worker_pool.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt::test {

template <class T>
using outcome = std::shared_ptr<std::optional<caf::expected<T>>>;

// The stand-ins for nodes and persistence actors below are untyped and take
// only what their test sends them. The actor under test holds one as the
// typed handle it expects; a request the stand-in lacks fails at run time.
template <class Handle>
Handle stand_in(caf::actor actor) {
  return caf::actor_cast<Handle>(std::move(actor));
}

// An actor system on CAF's test coordinator: nothing runs until `run()`,
// and time passes only by `advance()`.
struct deterministic_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::vector<caf::actor> spawned;

  deterministic_fixture() {
    configure(cfg);
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }

  ~deterministic_fixture() {
    for (auto& actor : spawned)
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    sched->run();
    spawned.clear();
  }

  void run() {
    sched->run();
  }

  void advance(std::chrono::milliseconds how_long) {
    sched->clock().advance_time(how_long);
    sched->run();
  }

  template <class F, class... Ts>
  caf::actor spawn(F fun, Ts&&... xs) {
    auto actor = sys->spawn(fun, std::forward<Ts>(xs)...);
    spawned.push_back(actor);
    return actor;
  }

  // Sends `msg` to `dest` from an actor of its own; the outcome is filled in
  // when the reply comes.
  template <class Reply, class Handle, class Msg>
  outcome<Reply> ask(Handle dest, Msg msg) {
    auto out = std::make_shared<std::optional<caf::expected<Reply>>>();
    // The message as an argument: CAF 0.17 spawns a function of no
    // arguments by dereferencing a null argument tuple.
    spawn(
      [out, dest](caf::event_based_actor* self, Msg msg) {
        auto handle = self->request(dest, caf::infinite, std::move(msg));
        auto on_error = [out](caf::error& err) {
          *out = std::move(err);
        };
        if constexpr (std::is_same_v<Reply, caf::unit_t>)
          handle.then(
            [out] {
              *out = caf::unit;
            },
            on_error);
        else
          handle.then(
            [out](Reply& reply) {
              *out = std::move(reply);
            },
            on_error);
      },
      std::move(msg));
    return out;
  }
};

// A fake node or persistence actor that answers only when the test says
// so: it keeps the promise of every request in `held`.
using held_promises = std::shared_ptr<std::vector<caf::response_promise>>;

// A fake node that holds every group it is sent (see `held_promises`).
inline caf::behavior task_holding(caf::event_based_actor* self,
                                  held_promises held) {
  return {
    [self, held](run_tasks&) -> caf::result<tasks_done> {
      held->push_back(self->make_response_promise());
      return held->back();
    },
  };
}

// A fake node that fails every group it is sent with `err`, and has no task
// to cancel.
inline caf::behavior task_failing_with(caf::event_based_actor*,
                                       caf::error err) {
  return {
    [err](run_tasks&) -> caf::result<tasks_done> {
      return err;
    },
    [](cancel_tasks&) {
      // Nothing runs.
    },
  };
}

inline task_def task_on(const std::string& name, const std::string& node) {
  task_def task;
  task.name = name;
  task.node = node;
  return task;
}

// An actor system on a real scheduler (two threads), a worker pool and the
// workspace of one node, for actors that run tasks or write to disk.
struct scheduler_fixture {
  std::unique_ptr<caf::actor_system_config> cfg = make_config();
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<op_registry> ops = std::make_shared<op_registry>();
  std::shared_ptr<worker_pool> pool;
  std::shared_ptr<workspace> ws = std::make_shared<workspace>();

  scheduler_fixture() {
    sys = std::make_unique<caf::actor_system>(*cfg);
    BOOST_REQUIRE(!add_builtin_ops(*ops));
    auto made = worker_pool::make();
    BOOST_REQUIRE(made);
    pool = std::move(*made);
  }

  ~scheduler_fixture() {
    pool.reset();
  }

  // A node named "n" over `ws`, `ops` and `pool`.
  node_actor node(std::chrono::milliseconds task_timeout
                  = std::chrono::milliseconds(10000)) {
    return spawn_node(*sys, "n", ws, ops, task_timeout, pool);
  }

  template <class Reply, class Handle, class Msg>
  caf::expected<Reply>
  ask(Handle dest, Msg msg,
      std::chrono::milliseconds wait = std::chrono::milliseconds(10000)) {
    caf::scoped_actor self{*sys};
    std::optional<caf::expected<Reply>> out;
    auto handle = self->request(dest, wait, std::move(msg));
    if constexpr (std::is_same_v<Reply, caf::unit_t>)
      handle.receive(
        [&] {
          out = caf::unit;
        },
        [&](caf::error& err) {
          out = std::move(err);
        });
    else
      handle.receive(
        [&](Reply& reply) {
          out = std::move(reply);
        },
        [&](caf::error& err) {
          out = std::move(err);
        });
    return std::move(*out);
  }
};

// -- the typed protocols ------------------------------------------------------

// Does `Handle` take a request of `Request`? A request it does not take is
// a compile error at `request`; this asks the same question CAF does.
template <class Handle, class Request>
inline constexpr bool takes
  = caf::response_type_unbox<caf::signatures_of_t<Handle>,
                             caf::detail::type_list<Request>>::valid;

// What `Handle` answers to `Request`: a reply handler for another type is a
// compile error at `then`/`receive`.
template <class Handle, class Request>
using reply_to = caf::response_type_unbox_t<caf::signatures_of_t<Handle>,
                                            caf::detail::type_list<Request>>;

// May a `From` handle be held where a `To` is expected (CAF's conversion
// fails to compile otherwise, so it cannot be asked directly)?
template <class To, class From>
inline constexpr bool converts_to
  = caf::detail::tl_subset_of<caf::signatures_of_t<To>,
                              caf::signatures_of_t<From>>::value;

} // namespace epochrt::test
