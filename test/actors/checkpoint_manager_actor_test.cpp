// The checkpoint manager actor (actors/core/checkpoint_manager_actor.hpp):
// fans saves and loads out to the persistence actors and names the node,
// request and epoch of one that does not answer. A thread of its own: on a
// real scheduler with bounded waits, with fake persistence actors.

#define BOOST_TEST_MODULE actors_checkpoint_manager
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
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

} // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoint_manager, scheduler_fixture)

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
  auto params
    = ask<caf::unit_t>(manager, ckpt_set_params{{"slow"}, {}, {}, false});
  BOOST_REQUIRE_MESSAGE(params, why(params));
  auto init = ask<ckpt_result>(
    manager,
    ckpt_init{{node_ref{"slow", stand_in<persistence_actor>(p), {}}}, -1, {}});
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
BOOST_AUTO_TEST_SUITE_END()
