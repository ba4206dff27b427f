// The checkpoint manager actor (actors/core/checkpoint_manager_actor.hpp):
// fans saves and loads out to the persistence actors and names the node,
// request and epoch of one that does not answer. A thread of its own: on a
// real scheduler with bounded waits, with fake persistence actors.

#define BOOST_TEST_MODULE actors_checkpoint_manager
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/actors/core/checkpoint_manager_actor.hpp>
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>

using namespace epochrt;
using epochrt::test::held_promises;
using epochrt::test::reply_to;
using epochrt::test::scheduler_fixture;
using epochrt::test::stand_in;
using epochrt::test::takes;
using epochrt::test::why;
using std::chrono::milliseconds;

namespace {

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

// The handle others hold is the narrow one.
static_assert(std::is_same_v<decltype(spawn_checkpoint_manager(
                               std::declval<caf::actor_system&>(), "", nullptr,
                               checkpoint_policy{})),
                             checkpoint_manager_actor>);

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

using snapshot_done_atom = caf::atom_constant<caf::atom("snapdone")>;
using write_done_atom = caf::atom_constant<caf::atom("writedone")>;

// How a fake persistence actor saves: its snapshot fails with
// `snapshot_error` or is taken after `snapshot_time`; its write's outcome is
// answered `write_time` after end_save asks (the write itself is not
// modelled). `write_ended` is set when it answers an end_save of a begun
// save.
struct fake_save {
  std::string snapshot_error;
  milliseconds snapshot_time{0};
  milliseconds write_time{0};
  std::shared_ptr<std::atomic<bool>> write_ended
    = std::make_shared<std::atomic<bool>>(false);
};

caf::behavior saving_persistence(caf::event_based_actor* self, fake_save how) {
  struct pending {
    std::vector<caf::response_promise> snapshots;
    std::vector<caf::response_promise> writes;
    std::set<uint64_t> begun;
  };
  auto st = std::make_shared<pending>();
  return {
    [](init_checkpoint&) {
      return blob_names{{"w"}};
    },
    [self, how, st](begin_save& msg) -> caf::result<snapshot_taken> {
      if (!how.snapshot_error.empty())
        return make_error(actors_errc::checkpoint_failed, how.snapshot_error);
      st->begun.insert(msg.id);
      st->snapshots.push_back(self->make_response_promise());
      self->delayed_send(self, how.snapshot_time, snapshot_done_atom::value);
      return st->snapshots.back();
    },
    [st](snapshot_done_atom) {
      auto rp = st->snapshots.front();
      st->snapshots.erase(st->snapshots.begin());
      rp.deliver(snapshot_taken{1});
    },
    [self, how, st](end_save& msg) -> caf::result<checkpoint_stats> {
      if (st->begun.count(msg.id) == 0)
        return make_error(actors_errc::invalid_argument, "no save begun");
      st->writes.push_back(self->make_response_promise());
      self->delayed_send(self, how.write_time, write_done_atom::value);
      return st->writes.back();
    },
    [how, st](write_done_atom) {
      auto rp = st->writes.front();
      st->writes.erase(st->writes.begin());
      *how.write_ended = true;
      checkpoint_stats stats;
      stats.blobs = 1;
      rp.deliver(stats);
    },
  };
}

// Keeps the commit events the manager emits, from its thread.
class commit_recorder : public job_events {
public:
  void on_event(const job_event& event) override {
    if (event.what != job_event::kind::commit)
      return;
    std::lock_guard<std::mutex> guard{mtx_};
    commits_.push_back(event);
  }

  std::vector<job_event> commits() {
    std::lock_guard<std::mutex> guard{mtx_};
    return commits_;
  }

private:
  std::mutex mtx_;
  std::vector<job_event> commits_;
};

// The fixture with a manager bound to fake persistence actors.
struct manager_fixture : scheduler_fixture {
  test::temp_dir dir;

  // A manager of the named persistence actors under `policy`, its nodes
  // set and bound as a job runner does.
  checkpoint_manager_actor
  bound_manager(const std::vector<std::pair<std::string, caf::actor>>& nodes,
                checkpoint_policy policy) {
    auto manager = spawn_checkpoint_manager(
      *sys, dir.str(), std::make_shared<file_metadata_handler>(dir.str()),
      std::move(policy));
    BOOST_REQUIRE(manager);
    std::vector<std::string> names;
    std::vector<node_ref> refs;
    for (auto& [name, actor] : nodes) {
      names.push_back(name);
      refs.push_back(node_ref{name, stand_in<persistence_actor>(actor), {}});
    }
    auto params
      = ask<caf::unit_t>(manager, ckpt_set_params{names, {}, {}, false});
    BOOST_REQUIRE_MESSAGE(params, why(params));
    auto init = ask<ckpt_result>(manager, ckpt_init{refs, -1, {}});
    BOOST_REQUIRE_MESSAGE(init, why(init));
    return manager;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoint_manager, manager_fixture)

// A save is one transaction: its snapshot and its write share the policy's
// timeout, which a blocking save's caller waits for once.
BOOST_AUTO_TEST_CASE(a_save_takes_one_timeout_for_snapshot_and_write) {
  fake_save slow;
  slow.snapshot_time = milliseconds(400);
  slow.write_time = milliseconds(400);
  auto p = sys->spawn(saving_persistence, slow);
  checkpoint_policy policy;
  policy.timeout = milliseconds(600);
  auto manager = bound_manager({{"n", p}}, policy);
  auto saved = ask<ckpt_result>(manager, ckpt_save{1});
  BOOST_REQUIRE(!saved);
  BOOST_TEST(is_node_lost(saved.error()), why(saved));
  BOOST_TEST(error_text(saved.error()).find("checkpoint write, epoch 1")
               != std::string::npos,
             why(saved));
  caf::anon_send_exit(manager, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// The epoch loop's save writes in the background, behind the next epoch's
// snapshot on each node: its write has a timeout of its own.
BOOST_AUTO_TEST_CASE(an_epoch_loop_save_gives_its_write_a_timeout_of_its_own) {
  fake_save slow;
  slow.snapshot_time = milliseconds(400);
  slow.write_time = milliseconds(400);
  auto p = sys->spawn(saving_persistence, slow);
  checkpoint_policy policy;
  policy.timeout = milliseconds(600);
  auto events = std::make_shared<commit_recorder>();
  policy.events = events;
  auto manager = bound_manager({{"n", p}}, policy);
  auto started = ask<caf::unit_t>(manager, ckpt_save_async{1, false});
  BOOST_REQUIRE_MESSAGE(started, why(started));
  auto flushed = ask<caf::unit_t>(manager, ckpt_flush{1});
  BOOST_REQUIRE_MESSAGE(flushed, why(flushed));
  BOOST_TEST(slow.write_ended->load());
  auto commits = events->commits();
  BOOST_REQUIRE_EQUAL(commits.size(), 1u);
  BOOST_TEST(commits[0].epoch == 1);
  BOOST_TEST(commits[0].ok, commits[0].detail);
  caf::anon_send_exit(manager, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// A node whose snapshot failed fails the save, but the answer waits for the
// nodes that are still writing theirs: nothing the save began is left
// running behind it.
BOOST_AUTO_TEST_CASE(a_failed_save_is_answered_after_every_write_ended) {
  fake_save writing;
  writing.write_time = milliseconds(200);
  fake_save failing;
  failing.snapshot_error = "the snapshot broke";
  auto a = sys->spawn(saving_persistence, writing);
  auto b = sys->spawn(saving_persistence, failing);
  checkpoint_policy policy;
  policy.timeout = milliseconds(10000);
  auto manager = bound_manager({{"a", a}, {"b", b}}, policy);
  auto saved = ask<ckpt_result>(manager, ckpt_save{1});
  BOOST_REQUIRE(!saved);
  BOOST_TEST(error_text(saved.error()).find("the snapshot broke")
               != std::string::npos,
             why(saved));
  BOOST_TEST(writing.write_ended->load());
  // The same for the epoch loop's save: refused at once, and a flush
  // returns only once the other node's write has ended.
  *writing.write_ended = false;
  auto started = ask<caf::unit_t>(manager, ckpt_save_async{2, false});
  BOOST_REQUIRE(!started);
  BOOST_TEST(error_text(started.error()).find("the snapshot broke")
               != std::string::npos,
             why(started));
  auto flushed = ask<caf::unit_t>(manager, ckpt_flush{});
  BOOST_REQUIRE_MESSAGE(flushed, why(flushed));
  BOOST_TEST(writing.write_ended->load());
  caf::anon_send_exit(manager, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_manager_names_node_request_and_epoch_of_a_timeout) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto p = sys->spawn(silent_persistence, held);
  checkpoint_policy policy;
  policy.timeout = milliseconds(200);
  auto manager = bound_manager({{"slow", p}}, policy);
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
BOOST_AUTO_TEST_SUITE_END()
