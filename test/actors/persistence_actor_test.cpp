// The persistence actor (actors/core/persistence_actor.hpp): one node's
// checkpoints, saved from its workspace and checked on disk. On a real
// scheduler with bounded waits.

#define BOOST_TEST_MODULE actors_persistence
#include <boost/test/unit_test.hpp>

#include <string>
#include <type_traits>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

using namespace epochrt;
using epochrt::test::converts_to;
using epochrt::test::reply_to;
using epochrt::test::scheduler_fixture;
using epochrt::test::takes;
using epochrt::test::why;

namespace {

static_assert(takes<persistence_actor, begin_save>);
static_assert(std::is_same_v<reply_to<persistence_actor, begin_save>,
                             caf::detail::type_list<snapshot_taken>>);
static_assert(std::is_same_v<reply_to<persistence_actor, read_checkpoint>,
                             caf::detail::type_list<blob_values>>);
static_assert(!takes<persistence_actor, run_tasks>);
static_assert(!takes<persistence_actor, ckpt_save>);

// A persistence actor on a daemon is the node's proxy, which stands for
// both.
static_assert(converts_to<persistence_actor, node_and_persistence_actor>);

// The handle others hold is the narrow one.
static_assert(
  std::is_same_v<decltype(spawn_persistence(std::declval<caf::actor_system&>(),
                                            "", nullptr)),
                 persistence_actor>);

} // namespace

BOOST_FIXTURE_TEST_SUITE(persistence, scheduler_fixture)

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
  auto snapshot = ask<snapshot_taken>(p, begin_save{"n", 1, 1, db});
  BOOST_REQUIRE_MESSAGE(snapshot, why(snapshot));
  auto stats = ask<checkpoint_stats>(p, end_save{"n", 1, 1});
  BOOST_REQUIRE_MESSAGE(stats, why(stats));
  BOOST_TEST(stats->blobs == 1u);
  auto status = ask<checkpoint_status>(p, check_checkpoint{db, true});
  BOOST_REQUIRE_MESSAGE(status, why(status));
  BOOST_TEST(status->exists);
  BOOST_TEST(status->complete);
  BOOST_TEST(status->intact);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// Two saves begun before either is asked for (the epoch loop's of epoch 3
// and a blocking one of epoch 5): each end_save gets its own save's outcome.
BOOST_AUTO_TEST_CASE(persistence_keeps_each_begun_save_until_it_is_asked_for) {
  test::temp_dir dir;
  ws->set("w", make_scalar<double>(1.5));
  auto p = spawn_persistence(*sys, "n", ws, dir.str());
  auto first
    = ask<snapshot_taken>(p, begin_save{"n", 3, 7, dir.str() + "/n.3"});
  BOOST_REQUIRE_MESSAGE(first, why(first));
  auto second
    = ask<snapshot_taken>(p, begin_save{"n", 5, 8, dir.str() + "/n.5"});
  BOOST_REQUIRE_MESSAGE(second, why(second));
  // Another save's id, or another epoch, finds none.
  BOOST_TEST(!ask<checkpoint_stats>(p, end_save{"n", 3, 8}));
  BOOST_TEST(!ask<checkpoint_stats>(p, end_save{"n", 3, 99}));
  auto of_first = ask<checkpoint_stats>(p, end_save{"n", 3, 7});
  BOOST_REQUIRE_MESSAGE(of_first, why(of_first));
  BOOST_TEST(of_first->db.substr(of_first->db.size() - 4) == "/n.3");
  auto of_second = ask<checkpoint_stats>(p, end_save{"n", 5, 8});
  BOOST_REQUIRE_MESSAGE(of_second, why(of_second));
  BOOST_TEST(of_second->db.substr(of_second->db.size() - 4) == "/n.5");
  // Asked for once: the outcome is gone.
  BOOST_TEST(!ask<checkpoint_stats>(p, end_save{"n", 3, 7}));
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

// Outcomes a gone manager never asked for are dropped oldest first, not
// lowest epoch first: a job resumed from an earlier epoch still gets its
// own.
BOOST_AUTO_TEST_CASE(persistence_drops_the_oldest_uncollected_saves) {
  test::temp_dir dir;
  ws->set("w", make_scalar<double>(1.5));
  auto p = spawn_persistence(*sys, "n", ws, dir.str());
  auto begin = [&](int64_t epoch, uint64_t id) {
    auto taken = ask<snapshot_taken>(
      p, begin_save{"n", epoch, id, dir.str() + "/n." + std::to_string(epoch)});
    BOOST_REQUIRE_MESSAGE(taken, why(taken));
  };
  for (int64_t epoch = 10; epoch < 30; ++epoch)
    begin(epoch, 100 + epoch); // never asked for
  begin(1, 1);
  auto resumed = ask<checkpoint_stats>(p, end_save{"n", 1, 1});
  BOOST_TEST(static_cast<bool>(resumed), why(resumed));
  // The newest uncollected ones are still there, the oldest gone.
  BOOST_TEST(
    static_cast<bool>(ask<checkpoint_stats>(p, end_save{"n", 29, 129})));
  BOOST_TEST(!ask<checkpoint_stats>(p, end_save{"n", 10, 110}));
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}
BOOST_AUTO_TEST_SUITE_END()
