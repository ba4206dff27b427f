// The protocols of the actors of a job, each tested directly: the gather of
// a fan-out, the group runner, the node, the persistence actor, the
// checkpoint manager and the job runner. Actors that spawn no threads run on
// CAF's deterministic test coordinator (virtual time); the others on a real
// scheduler with bounded waits.

#define BOOST_TEST_MODULE actors_protocol
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/detail/type_list.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_type.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/checkpoint_manager_actor.hpp>
#include <epochrt/actors/core/group_runner_actor.hpp>
#include <epochrt/actors/core/job_runner_actor.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/actors/core/pooled_task.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/actors/detail/place_within.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/faults/fault_point.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/worker_pool.hpp>
#include <epochrt/runtime/workspace.hpp>

using namespace epochrt;
using std::chrono::milliseconds;

namespace {

using epochrt::test::contains;

// Why `x` holds no value; empty when it holds one. (Boost.Test evaluates a
// message even when the assertion holds: never call `error()` there.)
template <class T>
std::string why(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

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

  void advance(milliseconds how_long) {
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

// A fake node for the gather: answers an int `x` with `x * factor`.
caf::behavior multiplier(caf::event_based_actor*, int factor) {
  return {
    [factor](int x) {
      return x * factor;
    },
  };
}

// A fake node that fails every request with `err`.
caf::behavior failing(caf::event_based_actor*, caf::error err) {
  return {
    [err](int) -> caf::result<int> {
      return err;
    },
  };
}

// A fake node that answers only when the test says so: it keeps the
// promise of every request in `held`.
using held_promises = std::shared_ptr<std::vector<caf::response_promise>>;

// Tells a holding node to answer what it holds with the int sent along.
using release_atom = caf::atom_constant<caf::atom("release")>;

caf::behavior holding(caf::event_based_actor* self, held_promises held) {
  return {
    [self, held](int) -> caf::result<int> {
      held->push_back(self->make_response_promise());
      return held->back();
    },
    // A promise is delivered from inside its actor only.
    [held](release_atom, int value) {
      for (auto& rp : *held)
        rp.deliver(value);
      held->clear();
    },
  };
}

caf::error pass_through(const std::string&, caf::error err) {
  return err;
}

// An actor that runs one gather of `1` to every target when it starts.
struct gather_run {
  std::optional<caf::expected<std::vector<int>>> result;
  size_t done_calls = 0;
};

caf::behavior gatherer(caf::event_based_actor* self,
                       std::vector<detail::gather_target<caf::actor>> targets,
                       detail::gather_options opts,
                       std::shared_ptr<gather_run> run) {
  auto st = detail::gather<int>(
    self, targets, std::move(opts),
    [](const auto&) {
      return 1;
    },
    pass_through,
    [run](caf::expected<std::vector<int>> result) {
      ++run->done_calls;
      run->result = std::move(result);
    });
  self->set_down_handler([st](caf::down_msg& down) {
    st->node_down(down.source);
  });
  return {
    [](int) {
      // Only here to keep the actor alive.
    },
  };
}

detail::gather_options options(detail::gather_policy policy,
                               milliseconds timeout = milliseconds(1000)) {
  detail::gather_options opts;
  opts.site = {"epoch group", 7};
  opts.policy = policy;
  opts.timeout = timeout;
  return opts;
}

} // namespace

// -- the error predicate -----------------------------------------------------

BOOST_AUTO_TEST_SUITE(error_predicate)

BOOST_AUTO_TEST_CASE(is_node_lost_holds_for_node_lost_only) {
  BOOST_TEST(is_node_lost(make_error(actors_errc::node_lost, "x")));
  BOOST_TEST(!is_node_lost(make_error(actors_errc::task_failed, "x")));
  BOOST_TEST(!is_node_lost(caf::error{}));
}

BOOST_AUTO_TEST_CASE(is_error_tells_categories_apart_by_more_than_the_code) {
  // runtime_errc::bad_argument has node_lost's number in another category.
  caf::error other{static_cast<uint8_t>(actors_errc::node_lost),
                   caf::atom("ert_rt")};
  BOOST_TEST(!is_node_lost(other));
  BOOST_TEST(
    is_error(make_error(actors_errc::rejected), actors_errc::rejected));
  BOOST_TEST(
    !is_error(make_error(actors_errc::rejected), actors_errc::auth_failed));
}

BOOST_AUTO_TEST_CASE(errors_of_the_actors_layer_render_with_their_code) {
  auto err = make_error(actors_errc::node_lost, "node a is down");
  BOOST_TEST(error_text(err) == "node a is down");
  BOOST_TEST(error_text(err, error_form::code_and_context)
             == "node_lost: node a is down");
}

BOOST_AUTO_TEST_SUITE_END()

// -- the typed protocols ------------------------------------------------------

namespace {

// Does `Handle` take a request of `Request`? A request it does not take is
// a compile error at `request`; this asks the same question CAF does.
template <class Handle, class Request>
constexpr bool takes
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
constexpr bool converts_to
  = caf::detail::tl_subset_of<caf::signatures_of_t<To>,
                              caf::signatures_of_t<From>>::value;

static_assert(takes<group_runner_actor, run_tasks>);
static_assert(std::is_same_v<reply_to<group_runner_actor, run_tasks>,
                             caf::detail::type_list<tasks_done>>);
static_assert(!takes<group_runner_actor, fetch_blobs>);
static_assert(!takes<group_runner_actor, run_job>);

static_assert(takes<job_runner_actor, run_job>);
static_assert(std::is_same_v<reply_to<job_runner_actor, run_job>,
                             caf::detail::type_list<ckpt_epoch>>);
static_assert(!takes<job_runner_actor, run_tasks>);

static_assert(takes<checkpoint_manager_actor, ckpt_load>);
static_assert(std::is_same_v<reply_to<checkpoint_manager_actor, ckpt_load>,
                             caf::detail::type_list<ckpt_result>>);
static_assert(std::is_same_v<reply_to<checkpoint_manager_actor, ckpt_read>,
                             caf::detail::type_list<blob_values>>);
// Answered with nothing: a reply handler takes no argument.
static_assert(std::is_same_v<reply_to<checkpoint_manager_actor, ckpt_flush>,
                             caf::detail::type_list<void>>);
// The persistence protocol goes to the persistence actors, not to it.
static_assert(!takes<checkpoint_manager_actor, load_checkpoint>);
static_assert(!takes<checkpoint_manager_actor, run_job>);

static_assert(takes<node_actor, run_tasks>);
static_assert(std::is_same_v<reply_to<node_actor, run_tasks>,
                             caf::detail::type_list<tasks_done>>);
static_assert(std::is_same_v<reply_to<node_actor, fetch_blobs>,
                             caf::detail::type_list<blob_values>>);
static_assert(std::is_same_v<reply_to<node_actor, cancel_tasks>,
                             caf::detail::type_list<void>>);
// Checkpoints are the persistence actor's; faults reach a node from its
// own tasks, never from whoever holds its handle.
static_assert(!takes<node_actor, save_checkpoint>);
static_assert(!takes<node_actor, run_job>);
static_assert(!converts_to<node_task_events, node_actor>);

static_assert(takes<persistence_actor, begin_save>);
static_assert(std::is_same_v<reply_to<persistence_actor, begin_save>,
                             caf::detail::type_list<ckpt_epoch>>);
static_assert(std::is_same_v<reply_to<persistence_actor, read_checkpoint>,
                             caf::detail::type_list<blob_values>>);
static_assert(!takes<persistence_actor, run_tasks>);
static_assert(!takes<persistence_actor, ckpt_save>);

// A node on a daemon is one proxy that stands for both.
static_assert(converts_to<node_actor, node_and_persistence_actor>);
static_assert(converts_to<persistence_actor, node_and_persistence_actor>);

// The handles others hold are narrow: what the job runner sends itself
// (its fault-plan delays) is not part of what they can send it.
static_assert(
  std::is_same_v<decltype(spawn_job_runner(std::declval<caf::actor_system&>(),
                                           std::declval<job_runner_config>())),
                 job_runner_actor>);
static_assert(
  std::is_same_v<decltype(spawn_group_runner(
                   std::declval<caf::actor_system&>(),
                   std::declval<std::map<std::string, node_actor>>(),
                   milliseconds{})),
                 group_runner_actor>);
static_assert(std::is_same_v<
              decltype(spawn_node(std::declval<caf::actor_system&>(), "",
                                  nullptr, nullptr, milliseconds{}, nullptr)),
              node_actor>);
static_assert(
  std::is_same_v<decltype(spawn_persistence(std::declval<caf::actor_system&>(),
                                            "", nullptr)),
                 persistence_actor>);
static_assert(std::is_same_v<decltype(spawn_checkpoint_manager(
                               std::declval<caf::actor_system&>(), "", nullptr,
                               checkpoint_policy{})),
                             checkpoint_manager_actor>);

} // namespace

// -- the gather --------------------------------------------------------------

BOOST_FIXTURE_TEST_SUITE(gather, deterministic_fixture)

BOOST_AUTO_TEST_CASE(a_gather_reports_every_reply_in_target_order) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto slow = spawn(holding, held);
  auto fast = spawn(multiplier, 3);
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"slow", slow},
                                                       {"fast", fast}},
        options(detail::gather_policy::settle_all), run);
  this->run();
  BOOST_TEST(!run->result.has_value());
  BOOST_REQUIRE_EQUAL(held->size(), 1u);
  caf::anon_send(slow, release_atom::value, 5);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(run->result->engaged());
  BOOST_TEST((**run->result == std::vector<int>{5, 3}));
}

BOOST_AUTO_TEST_CASE(a_gather_of_no_targets_is_done_at_once) {
  auto run = std::make_shared<gather_run>();
  spawn(gatherer, std::vector<detail::gather_target<caf::actor>>{},
        options(detail::gather_policy::settle_all), run);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_TEST(run->result->engaged());
  BOOST_TEST((*run->result)->empty());
}

BOOST_AUTO_TEST_CASE(settle_all_waits_for_every_node_before_a_failure) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto loading = spawn(holding, held);
  auto broken = spawn(
    failing, make_error(actors_errc::checkpoint_failed, "bad checkpoint"));
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"loading", loading},
                                                       {"broken", broken}},
        options(detail::gather_policy::settle_all), run);
  this->run();
  // The broken node has answered; the other is still loading.
  BOOST_TEST(!run->result.has_value());
  caf::anon_send(loading, release_atom::value, 1);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  BOOST_TEST(is_error(run->result->error(), actors_errc::checkpoint_failed));
}

BOOST_AUTO_TEST_CASE(settle_all_reports_a_lost_node_over_another_failure) {
  auto broken = spawn(
    failing, make_error(actors_errc::checkpoint_failed, "bad checkpoint"));
  auto lost = spawn(failing, make_error(actors_errc::node_lost, "gone"));
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"broken", broken},
                                                       {"lost", lost}},
        options(detail::gather_policy::settle_all), run);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  BOOST_TEST(is_node_lost(run->result->error()));
  BOOST_TEST(run->done_calls == 1u);
}

BOOST_AUTO_TEST_CASE(fail_fast_reports_the_first_failure_at_once) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto busy = spawn(holding, held);
  auto broken = spawn(failing, make_error(actors_errc::task_failed, "boom"));
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"busy", busy},
                                                       {"broken", broken}},
        options(detail::gather_policy::fail_fast), run);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  BOOST_TEST(error_text(run->result->error()) == "boom");
  // A late answer changes nothing.
  caf::anon_send(busy, release_atom::value, 1);
  this->run();
  BOOST_TEST(held->empty());
  BOOST_TEST(run->done_calls == 1u);
}

BOOST_AUTO_TEST_CASE(a_timeout_is_node_lost_naming_node_group_and_epoch) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto silent = spawn(holding, held);
  auto fast = spawn(multiplier, 2);
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"fast", fast},
                                                       {"trainer_1", silent}},
        options(detail::gather_policy::settle_all, milliseconds(500)), run);
  this->run();
  advance(milliseconds(499));
  BOOST_TEST(!run->result.has_value());
  advance(milliseconds(2));
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  auto& err = run->result->error();
  BOOST_TEST(is_node_lost(err));
  BOOST_TEST(error_text(err)
               == "node trainer_1 (epoch group, epoch 7) did not answer "
                  "within 500 ms",
             error_text(err));
}

BOOST_AUTO_TEST_CASE(the_whole_fan_out_has_one_timer) {
  std::vector<detail::gather_target<caf::actor>> targets;
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  for (int i = 0; i < 8; ++i)
    targets.push_back({"n" + std::to_string(i), spawn(holding, held)});
  auto run = std::make_shared<gather_run>();
  spawn(gatherer, targets, options(detail::gather_policy::settle_all), run);
  this->run();
  BOOST_TEST(sched->clock().schedule().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_settled_gather_leaves_no_timer_behind) {
  auto a = spawn(multiplier, 2);
  auto b = spawn(multiplier, 3);
  auto run = std::make_shared<gather_run>();
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"a", a}, {"b", b}},
        options(detail::gather_policy::settle_all, milliseconds(60000)), run);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_TEST(run->result->engaged());
  // The clock's entry (and its strong reference to the gatherer) is gone
  // long before the timeout would have fired.
  BOOST_TEST(!sched->clock().has_pending_timeout());
  advance(milliseconds(120000));
  BOOST_TEST(run->done_calls == 1u);
}

BOOST_AUTO_TEST_CASE(a_node_that_goes_down_is_node_lost_at_once) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto doomed = spawn(holding, held);
  auto fast = spawn(multiplier, 2);
  auto run = std::make_shared<gather_run>();
  auto opts = options(detail::gather_policy::settle_all, milliseconds(60000));
  opts.monitor = true;
  spawn(gatherer,
        std::vector<detail::gather_target<caf::actor>>{{"fast", fast},
                                                       {"trainer_0", doomed}},
        opts, run);
  this->run();
  BOOST_TEST(!run->result.has_value());
  // It dies holding the request: it never answers it.
  caf::anon_send_exit(doomed, caf::exit_reason::kill);
  this->run();
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  BOOST_TEST(is_node_lost(run->result->error()));
  BOOST_TEST(error_text(run->result->error())
               == "node trainer_0 (epoch group, epoch 7) is down",
             error_text(run->result->error()));
}

BOOST_AUTO_TEST_CASE(other_errors_go_through_the_sites_translation) {
  auto broken = spawn(failing, make_error(actors_errc::task_failed, "boom"));
  auto run = std::make_shared<gather_run>();
  auto translated = std::make_shared<std::string>();
  spawn(
    [translated, run](caf::event_based_actor* self, caf::actor target) {
      detail::gather<int>(
        self, std::vector<detail::gather_target<caf::actor>>{{"b", target}},
        options(detail::gather_policy::settle_all),
        [](const auto&) {
          return 1;
        },
        [translated](const std::string& node, caf::error err) {
          *translated = node + ": " + error_text(err);
          return make_error(actors_errc::checkpoint_failed, *translated);
        },
        [run](caf::expected<std::vector<int>> result) {
          run->result = std::move(result);
        });
    },
    broken);
  this->run();
  BOOST_TEST(*translated == "b: boom");
  BOOST_REQUIRE(run->result.has_value());
  BOOST_REQUIRE(!run->result->engaged());
  BOOST_TEST(is_error(run->result->error(), actors_errc::checkpoint_failed));
}

BOOST_AUTO_TEST_SUITE_END()

// -- the group runner --------------------------------------------------------

namespace {

// A fake node: every task of a run_tasks gets one output, `<task>.out`
// holding `value`.
caf::behavior task_echo(caf::event_based_actor*, std::string name,
                        int64_t value) {
  return {
    [name, value](run_tasks& msg) {
      tasks_done done{name, {}, {}};
      for (auto& task : msg.tasks)
        done.outputs.push_back(
          task_output{task.name, task.name + ".out", make_scalar(value)});
      return done;
    },
  };
}

// With an argument: CAF 0.17 spawns a function of no arguments by
// dereferencing a null argument tuple (UBSan rejects it).
caf::behavior task_failing(caf::event_based_actor*, std::string why) {
  return {
    [why](run_tasks&) -> caf::result<tasks_done> {
      return make_error(actors_errc::task_failed, why);
    },
  };
}

caf::behavior task_holding(caf::event_based_actor* self, held_promises held) {
  return {
    [self, held](run_tasks&) -> caf::result<tasks_done> {
      held->push_back(self->make_response_promise());
      return held->back();
    },
  };
}

// Takes a group and ends at once, leaving it unanswered (as a node actor
// that fails for a reason of its own would). `what` only names it.
caf::behavior task_dropping(caf::event_based_actor* self, std::string what) {
  return {
    [self, what](run_tasks&) -> caf::result<tasks_done> {
      self->quit(caf::exit_reason::user_shutdown);
      return caf::delegated<tasks_done>{};
    },
  };
}

caf::behavior task_failing_with(caf::event_based_actor*, caf::error err) {
  return {
    [err](run_tasks&) -> caf::result<tasks_done> {
      return err;
    },
  };
}

task_def task_on(const std::string& name, const std::string& node) {
  task_def task;
  task.name = name;
  task.node = node;
  return task;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(group_runner, deterministic_fixture)

BOOST_AUTO_TEST_CASE(a_group_runner_merges_outputs_in_node_order) {
  std::map<std::string, node_actor> nodes{
    {"a", stand_in<node_actor>(spawn(task_echo, "a", 1))},
    {"b", stand_in<node_actor>(spawn(task_echo, "b", 2))}};
  auto runner = spawn_group_runner(*sys, nodes, milliseconds(1000));
  auto done = ask<tasks_done>(
    runner,
    run_tasks{"epoch",
              3,
              {task_on("tb", "b"), task_on("ta", "a"), task_on("tb2", "b")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE((*done)->engaged());
  std::vector<std::string> tasks;
  for (auto& out : (**done)->outputs)
    tasks.push_back(out.task);
  // Nodes in order of first use, tasks of a node in order.
  BOOST_TEST((tasks == std::vector<std::string>{"tb", "tb2", "ta"}));
}

BOOST_AUTO_TEST_CASE(a_task_on_an_unknown_node_fails_before_anything_runs) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"a", stand_in<node_actor>(spawn(task_holding, held))}};
  auto runner = spawn_group_runner(*sys, nodes, milliseconds(1000));
  auto done = ask<tasks_done>(
    runner, run_tasks{"init", 0, {task_on("t0", "a"), task_on("t1", "x")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_error((*done)->error(), actors_errc::unknown_node));
  BOOST_TEST(held->empty());
}

BOOST_AUTO_TEST_CASE(a_group_runner_fails_fast_on_a_nodes_error) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"busy", stand_in<node_actor>(spawn(task_holding, held))},
    {"bad",
     stand_in<node_actor>(spawn(task_failing, std::string{"task t1 failed"}))}};
  auto runner = spawn_group_runner(*sys, nodes, milliseconds(60000));
  auto done = ask<tasks_done>(
    runner,
    run_tasks{"epoch", 2, {task_on("t0", "busy"), task_on("t1", "bad")}});
  this->run();
  // No time has passed: the busy node is not waited for.
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_error((*done)->error(), actors_errc::task_failed));
  BOOST_TEST(error_text((*done)->error()) == "task t1 failed");
}

BOOST_AUTO_TEST_CASE(a_silent_node_fails_the_group_as_lost_at_the_timeout) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"ok", stand_in<node_actor>(spawn(task_echo, "ok", 1))},
    {"frozen", stand_in<node_actor>(spawn(task_holding, held))}};
  auto runner = spawn_group_runner(*sys, nodes, milliseconds(300));
  auto done = ask<tasks_done>(
    runner,
    run_tasks{"download", 4, {task_on("t0", "ok"), task_on("t1", "frozen")}});
  this->run();
  BOOST_TEST(!done->has_value());
  advance(milliseconds(301));
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_node_lost((*done)->error()));
  BOOST_TEST(contains(error_text((*done)->error()),
                      "node frozen (download group, epoch 4)"),
             error_text((*done)->error()));
}

BOOST_AUTO_TEST_CASE(a_lost_remote_node_is_named_with_group_and_epoch) {
  std::map<std::string, node_actor> nodes;
  nodes["far"] = stand_in<node_actor>(spawn(
    task_failing_with,
    make_error(actors_errc::node_lost, "node far at 127.0.0.1:1 is gone")));
  auto runner = spawn_group_runner(*sys, nodes, milliseconds(1000));
  auto done
    = ask<tasks_done>(runner, run_tasks{"epoch", 9, {task_on("t", "far")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(error_text((*done)->error())
               == "node far (epoch group, epoch 9): node far at 127.0.0.1:1 "
                  "is gone",
             error_text((*done)->error()));
}

BOOST_AUTO_TEST_SUITE_END()

// -- the node (runs tasks on a worker pool: a real scheduler) ----------------

namespace {

struct node_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<op_registry> ops = std::make_shared<op_registry>();
  std::shared_ptr<worker_pool> pool;
  std::shared_ptr<workspace> ws = std::make_shared<workspace>();

  node_fixture() {
    configure(cfg);
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
    BOOST_REQUIRE(!add_builtin_ops(*ops));
    auto made = worker_pool::make();
    BOOST_REQUIRE(made);
    pool = std::move(*made);
  }

  ~node_fixture() {
    pool.reset();
  }

  node_actor node(milliseconds task_timeout = milliseconds(10000)) {
    return spawn_node(*sys, "n", ws, ops, task_timeout, pool);
  }

  template <class Reply, class Handle, class Msg>
  caf::expected<Reply>
  ask(Handle dest, Msg msg, milliseconds wait = milliseconds(10000)) {
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

op_def op(std::string type, std::vector<std::string> outputs,
          std::map<std::string, tensor> args) {
  return op_def{std::move(type), {}, std::move(outputs), std::move(args)};
}

// A task that sleeps `ms`, then fills `blob` with `value`, and outputs it.
task_def sleep_then_fill(const std::string& name, int64_t ms,
                         const std::string& blob, double value) {
  task_def task = task_on(name, "n");
  task.steps.push_back(step_def{
    "sleep", {op("Sleep", {}, {{"ms", make_scalar<int64_t>(ms)}})}, 1, {}});
  task.steps.push_back(step_def{
    "fill",
    {op("ConstantFill", {blob}, {{"value", make_scalar<double>(value)}})},
    1,
    {}});
  task.outputs.push_back(blob);
  return task;
}

// The next group reply `self` gets within `wait`, sent to it as the answer
// to a plain send: an empty error for a tasks_done, the error, or nothing.
std::optional<caf::error> next_group_reply(caf::scoped_actor& self,
                                           milliseconds wait) {
  std::optional<caf::error> reply;
  self->receive(
    [&](tasks_done&) {
      reply = caf::error{};
    },
    [&](caf::error& err) {
      reply = std::move(err);
    },
    caf::after(wait) >> [] {});
  return reply;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(node, node_fixture)

BOOST_AUTO_TEST_CASE(a_node_answers_run_tasks_with_outputs_in_task_order) {
  auto n = node();
  // The first task ends last: the order is the tasks', not their ends'.
  auto done = ask<tasks_done>(n,
                              run_tasks{"epoch",
                                        1,
                                        {sleep_then_fill("first", 100, "x", 1),
                                         sleep_then_fill("second", 0, "y", 2),
                                         sleep_then_fill("third", 0, "z", 3)}});
  BOOST_REQUIRE_MESSAGE(done, why(done));
  BOOST_TEST(done->node == "n");
  std::vector<std::string> blobs;
  for (auto& out : done->outputs)
    blobs.push_back(out.blob);
  BOOST_TEST((blobs == std::vector<std::string>{"x", "y", "z"}));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_nodes_group_fails_at_its_deadline) {
  auto n = node(milliseconds(150));
  auto started = std::chrono::steady_clock::now();
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 5000, "x", 1)}});
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_error(done.error(), actors_errc::task_failed));
  BOOST_TEST(contains(error_text(done.error()), "did not end within 150 ms"),
             error_text(done.error()));
  BOOST_TEST((took < std::chrono::seconds(3)));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(
  cancel_tasks_stops_running_tasks_and_answers_when_they_ended) {
  auto n = node();
  caf::scoped_actor self{*sys};
  // The task sleeps, then would write `after`; cancelled, it stops at
  // its next op.
  auto group = self->request(
    n, std::chrono::seconds(10),
    run_tasks{"epoch", 1, {sleep_then_fill("t", 400, "after", 1)}});
  auto cancelled = ask<caf::unit_t>(n, cancel_tasks{});
  BOOST_REQUIRE_MESSAGE(cancelled, why(cancelled));
  // The task has ended: the group's answer is already on its way.
  std::optional<caf::error> group_error;
  group.receive(
    [&](tasks_done&) {
      group_error = caf::error{};
    },
    [&](caf::error& err) {
      group_error = std::move(err);
    });
  BOOST_REQUIRE(group_error.has_value());
  BOOST_TEST(static_cast<bool>(*group_error));
  auto after = ask<blob_values>(n, fetch_blobs{{"after"}});
  BOOST_TEST(!after);
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(
  a_failing_task_answers_its_group_without_waiting_for_the_rest) {
  auto n = node();
  task_def failing = task_on("failing", "n");
  failing.steps.push_back(step_def{"bad", {op("NoSuchOp", {}, {})}, 1, {}});
  auto started = std::chrono::steady_clock::now();
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 5000, "x", 1), failing}});
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_error(done.error(), actors_errc::task_failed),
             error_text(done.error()));
  BOOST_TEST((took < std::chrono::seconds(3)));
  // The slow task was asked to stop with the group: it ends well before
  // its 5 s sleep.
  auto idle = ask<caf::unit_t>(n, cancel_tasks{}, milliseconds(3000));
  BOOST_TEST(static_cast<bool>(idle), why(idle));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_group_past_its_deadline_gets_one_reply_only) {
  auto n = node(milliseconds(100));
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 300, "x", 1)}});
  auto first = next_group_reply(self, milliseconds(5000));
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(static_cast<bool>(*first));
  // The task ends after the deadline's reply: it must not answer again.
  auto idle = ask<caf::unit_t>(n, cancel_tasks{});
  BOOST_REQUIRE_MESSAGE(idle, why(idle));
  auto second = next_group_reply(self, milliseconds(300));
  BOOST_TEST(!second.has_value());
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_frozen_node_answers_no_group_even_when_its_tasks_end) {
  auto n = node();
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("t", 200, "x", 1)}});
  // Queued behind the group: the group is the node's when it freezes. (What
  // a task that meets the fault tells its node.)
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::freeze_node));
  auto answered = next_group_reply(self, milliseconds(1000));
  BOOST_TEST(!answered.has_value());
  caf::anon_send_exit(n, caf::exit_reason::kill);
}

namespace {

// The answers an actor got to its requests, in arrival order.
struct answers {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<caf::error> errors; // none: the request succeeded

  void add(caf::error err) {
    std::lock_guard<std::mutex> guard{mutex};
    errors.push_back(std::move(err));
    changed.notify_all();
  }

  // Waits up to `wait` for `count` answers; returns those it has.
  std::vector<caf::error> wait_for(size_t count, milliseconds wait) {
    std::unique_lock<std::mutex> guard{mutex};
    changed.wait_for(guard, wait, [&] {
      return errors.size() >= count;
    });
    return errors;
  }
};

// Sends `n` one request of each kind a node serves (fetch, put, cancel,
// reset) and records their answers in `out`.
void ask_each_request(caf::event_based_actor* self, node_actor n,
                      std::shared_ptr<answers> out) {
  auto on_error = [out](caf::error& err) {
    out->add(std::move(err));
  };
  auto on_unit = [out] {
    out->add(caf::error{});
  };
  self->request(n, caf::infinite, fetch_blobs{{"w"}})
    .then(
      [out](blob_values&) {
        out->add(caf::error{});
      },
      on_error);
  self
    ->request(n, caf::infinite,
              put_blobs{{blob_value{"v", make_scalar<double>(2)}}})
    .then(on_unit, on_error);
  self->request(n, caf::infinite, cancel_tasks{}).then(on_unit, on_error);
  self->request(n, caf::infinite, reset_workspace{"test"})
    .then(on_unit, on_error);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_frozen_node_holds_every_request_until_it_exits) {
  auto n = node();
  BOOST_REQUIRE(
    ask<caf::unit_t>(n, put_blobs{{blob_value{"w", make_scalar<double>(1)}}}));
  caf::scoped_actor self{*sys};
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::freeze_node));
  auto out = std::make_shared<answers>();
  sys->spawn(ask_each_request, n, out);
  // Each takes microseconds, a cancel with no task running none at all;
  // frozen, the node answers none of them.
  BOOST_TEST(out->wait_for(1, milliseconds(300)).empty());
  // Its end answers what it holds: no requester is left waiting for a
  // timeout of its own (here, for ever).
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
  auto got = out->wait_for(4, milliseconds(10000));
  BOOST_REQUIRE_EQUAL(got.size(), 4u);
  for (auto& err : got)
    BOOST_TEST((err == caf::sec::request_receiver_down || is_node_lost(err)),
               (err ? error_text(err) : "a frozen node answered"));
}

BOOST_AUTO_TEST_CASE(a_node_killed_while_its_tasks_run_answers_them_as_lost) {
  auto n = node();
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("t", 2000, "x", 1)}});
  // What a task that meets the fault tells its node.
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::kill_node));
  auto reply = next_group_reply(self, milliseconds(5000));
  BOOST_REQUIRE(reply.has_value());
  BOOST_TEST(is_node_lost(*reply), error_text(*reply));
}

BOOST_AUTO_TEST_CASE(
  a_task_ending_after_its_node_was_killed_leaves_the_answer_to_it) {
  // One worker: the killed task, then the failing one right after it, on
  // the same thread, before the node actor hears of the kill.
  auto one = worker_pool::make({1});
  BOOST_REQUIRE(one);
  std::shared_ptr<worker_pool> single = std::move(*one);
  auto plan = parse_fault_plan(R"({"faults": [{"point": "task.start",
    "fault": "kill_node", "node": "n", "detail": "killed"}]})",
                               "plan");
  BOOST_REQUIRE_MESSAGE(plan, why(plan));
  auto n = spawn_node(*sys, "n", ws, ops, milliseconds(10000), single,
                      std::make_shared<fault_injector>(std::move(*plan)));
  task_def failing = task_on("failing", "n");
  failing.steps.push_back(step_def{"bad", {op("NoSuchOp", {}, {})}, 1, {}});
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {task_on("killed", "n"), failing}});
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_node_lost(done.error()), error_text(done.error()));
  BOOST_TEST(contains(error_text(done.error()), "killed by the fault plan"),
             error_text(done.error()));
  // Joined here, not by whichever thread lets go of it last.
  single->stop();
}

BOOST_AUTO_TEST_CASE(a_node_stores_and_fetches_blobs) {
  auto n = node();
  auto put = ask<caf::unit_t>(
    n, put_blobs{{blob_value{"w", make_scalar<double>(2.5)}}});
  BOOST_REQUIRE_MESSAGE(put, why(put));
  auto got = ask<blob_values>(n, fetch_blobs{{"w"}});
  BOOST_REQUIRE_MESSAGE(got, why(got));
  BOOST_REQUIRE_EQUAL(got->blobs.size(), 1u);
  BOOST_TEST(got->blobs[0].name == "w");
  auto missing = ask<blob_values>(n, fetch_blobs{{"nope"}});
  BOOST_TEST(!missing);
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

// -- the persistence actor ---------------------------------------------------

BOOST_AUTO_TEST_CASE(persistence_reports_a_missing_checkpoint_as_absent) {
  test::temp_dir dir;
  auto p = spawn_persistence(*sys, "n", ws, dir.str());
  auto status
    = ask<checkpoint_status>(p, check_checkpoint{dir.str() + "/n.3", false});
  BOOST_REQUIRE_MESSAGE(status, why(status));
  BOOST_TEST(!status->exists);
  BOOST_TEST(!status->complete);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(persistence_saves_a_checkpoint_it_then_finds_complete) {
  test::temp_dir dir;
  ws->set("w", make_scalar<double>(1.5));
  auto p = spawn_persistence(*sys, "n", ws, dir.str());
  auto db = dir.str() + "/n.1";
  auto stats = ask<checkpoint_stats>(p, save_checkpoint{"n", 1, db, {"w"}});
  BOOST_REQUIRE_MESSAGE(stats, why(stats));
  auto status = ask<checkpoint_status>(p, check_checkpoint{db, true});
  BOOST_REQUIRE_MESSAGE(status, why(status));
  BOOST_TEST(status->exists);
  BOOST_TEST(status->complete);
  BOOST_TEST(status->intact);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// -- the checkpoint manager (a thread of its own: a real scheduler) ----------

namespace {

// A fake persistence actor: lists one blob at init, never answers a load.
caf::behavior silent_persistence(caf::event_based_actor* self,
                                 held_promises held) {
  return {
    [](init_checkpoint&) {
      return blob_names{{"w"}};
    },
    [self, held](load_checkpoint&) -> caf::result<checkpoint_stats> {
      held->push_back(self->make_response_promise());
      return held->back();
    },
  };
}

} // namespace

BOOST_AUTO_TEST_CASE(a_manager_names_node_request_and_epoch_of_a_timeout) {
  test::temp_dir dir;
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto p = sys->spawn(silent_persistence, held);
  checkpoint_policy policy;
  policy.timeout = milliseconds(200);
  auto manager = spawn_checkpoint_manager(
    *sys, dir.str(), std::make_shared<file_metadata_handler>(dir.str()),
    policy);
  BOOST_REQUIRE(manager);
  auto params = ask<caf::unit_t>(manager, ckpt_set_params{{"slow"}, {}});
  BOOST_REQUIRE_MESSAGE(params, why(params));
  auto init = ask<ckpt_result>(
    manager,
    ckpt_init{{node_ref{"slow", stand_in<persistence_actor>(p)}}, -1, {}});
  BOOST_REQUIRE_MESSAGE(init, why(init));
  auto loaded = ask<ckpt_result>(manager, ckpt_load{3, {}, {}, false});
  BOOST_REQUIRE(!loaded);
  BOOST_TEST(is_node_lost(loaded.error()));
  BOOST_TEST(error_text(loaded.error())
               == "node slow (checkpoint load, epoch 3) did not answer within "
                  "200 ms",
             error_text(loaded.error()));
  caf::anon_send_exit(manager, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// -- the job runner ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_job_runner_refuses_a_job_whose_loop_could_not_end) {
  job_runner_config cfg;
  cfg.job.name = "endless";
  auto runner = spawn_job_runner(*sys, cfg);
  auto epochs = ask<ckpt_epoch>(runner, run_job{});
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_error(epochs.error(), actors_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(a_job_runner_fails_a_group_at_once_when_its_node_ends) {
  auto dropping = sys->spawn(task_dropping, "dropping");
  job_runner_config cfg;
  cfg.job.name = "j";
  cfg.job.init_group.tasks.push_back(task_on("init", "dropping"));
  cfg.job.epoch_group.tasks.push_back(task_on("step", "dropping"));
  cfg.job.stop_conditions.push_back(stop_condition{"dropping", "stop"});
  cfg.nodes = {{"dropping", stand_in<node_actor>(dropping)}};
  // Far beyond the test's own wait: only the node's end may fail the group.
  cfg.group_timeout = std::chrono::hours(1);
  auto runner = spawn_job_runner(*sys, cfg);
  auto epochs = ask<ckpt_epoch>(runner, run_job{}, milliseconds(5000));
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_node_lost(epochs.error()), error_text(epochs.error()));
  BOOST_TEST(contains(error_text(epochs.error()),
                      "node dropping (init group, epoch 0) is down"),
             error_text(epochs.error()));
  // Should it still wait (the defect this guards against), the runner must
  // not hold the actor system open.
  caf::anon_send_exit(runner, caf::exit_reason::kill);
}

BOOST_AUTO_TEST_CASE(a_job_runner_reports_the_group_and_epoch_of_a_lost_node) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto frozen = sys->spawn(task_holding, held);
  job_runner_config cfg;
  cfg.job.name = "j";
  cfg.job.init_group.tasks.push_back(task_on("init", "frozen"));
  cfg.job.epoch_group.tasks.push_back(task_on("step", "frozen"));
  cfg.job.stop_conditions.push_back(stop_condition{"frozen", "stop"});
  cfg.nodes = {{"frozen", stand_in<node_actor>(frozen)}};
  cfg.group_timeout = milliseconds(200);
  auto runner = spawn_job_runner(*sys, cfg);
  auto epochs = ask<ckpt_epoch>(runner, run_job{});
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_node_lost(epochs.error()));
  BOOST_TEST(contains(error_text(epochs.error()),
                      "node frozen (init group, epoch 0) did not answer "
                      "within 200 ms"),
             error_text(epochs.error()));
  caf::anon_send_exit(frozen, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

// -- timings a node reports ---------------------------------------------------

BOOST_AUTO_TEST_SUITE(task_timings)

BOOST_AUTO_TEST_CASE(a_reported_span_is_placed_inside_its_group) {
  using clock = std::chrono::steady_clock;
  auto from = clock::time_point{} + std::chrono::seconds(100);
  auto to = from + std::chrono::milliseconds(10); // 10,000 us
  auto [start, end] = detail::place_within(from, to, 2000, 3000);
  BOOST_TEST((start == from + std::chrono::microseconds(2000)));
  BOOST_TEST((end == from + std::chrono::microseconds(5000)));
}

BOOST_AUTO_TEST_CASE(
  a_node_that_lies_about_its_timings_stays_inside_the_group) {
  using clock = std::chrono::steady_clock;
  auto from = clock::time_point{} + std::chrono::seconds(100);
  auto to = from + std::chrono::milliseconds(10);
  constexpr auto huge = std::numeric_limits<int64_t>::max();
  constexpr auto tiny = std::numeric_limits<int64_t>::min();
  for (auto [offset, duration] : std::vector<std::pair<int64_t, int64_t>>{
         {huge, huge}, {tiny, tiny}, {-5, 20000}, {9000, huge}, {0, tiny}}) {
    auto [start, end] = detail::place_within(from, to, offset, duration);
    BOOST_TEST((from <= start && start <= end && end <= to),
               offset << ", " << duration);
  }
  // A group whose end comes before its start (a clock that went back).
  auto [start, end] = detail::place_within(to, from, 5, 5);
  BOOST_TEST((start == to && end == to));
}

BOOST_AUTO_TEST_SUITE_END()
