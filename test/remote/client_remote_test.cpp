// A daemon's checks, seen by a master that sends requests the `epochrt`
// command never would: each is refused with a clear error, nothing lands
// outside the checkpoint root, and the daemon keeps serving.

#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/support/node_daemons.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/remote/remote_node_actor.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace fs = std::filesystem;

using namespace epochrt;
using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;

namespace {

struct config : caf::actor_system_config {
  config() {
    // Plain TCP: nothing to check, nothing that can fail.
    BOOST_REQUIRE(!configure_network(*this));
  }
};

// One daemon (tensors up to 1 KiB) and a master's actor system.
struct client_fixture {
  temp_dir dir;
  node_daemon daemon
    = start_daemon(dir.str(), "d", {"--max-tensor-bytes", "1024"});
  config cfg;
  caf::actor_system sys{cfg};
  std::vector<node_and_persistence_actor> proxies;

  ~client_fixture() {
    for (auto& proxy : proxies)
      caf::anon_send_exit(proxy, caf::exit_reason::user_shutdown);
  }

  caf::expected<node_and_persistence_actor> attach(const std::string& node) {
    remote_node_config rc;
    rc.name = node;
    rc.address
      = node_address{"127.0.0.1", static_cast<uint16_t>(daemon.port())};
    rc.timeouts.request_timeout = 10s;
    rc.timeouts.group_timeout = 10s;
    rc.timeouts.checkpoint_timeout = 10s;
    rc.handshake_timeout = 5s;
    auto connected = connect_remote_node(sys, rc);
    if (!connected)
      return std::move(connected.error());
    proxies.push_back(connected->proxy);
    exchange = connected->exchange;
    return connected->proxy;
  }

  // The daemon's exchange, once attached.
  caf::actor exchange;

  // A plan that gives node n1 its exchange and hosts channel `channel` on
  // node `channel_node` (valid only when that is n1).
  exchange_plan plan_with(const std::string& channel,
                          const std::string& channel_node) {
    exchange_plan plan;
    plan.peers.push_back(exchange_peer{"n1", exchange, "", 0});
    channel_plan ch;
    ch.channel = channel_def{channel, channel_node, 1, {"x"}};
    plan.channels.push_back(ch);
    return plan;
  }

  template <class Reply, class Request>
  caf::expected<Reply>
  ask(const node_and_persistence_actor& node, Request msg) {
    return detail::blocking_request<Reply>(sys, node, 15s, std::move(msg));
  }

  // A blocking save, as the checkpoint manager makes one: the snapshot,
  // then the outcome of its write.
  caf::expected<checkpoint_stats> save(const node_and_persistence_actor& node,
                                       const std::string& name, int64_t epoch,
                                       const std::string& db) {
    auto snapshot = ask<snapshot_taken>(node, begin_save{name, epoch, 1, db});
    if (!snapshot)
      return std::move(snapshot.error());
    return ask<checkpoint_stats>(node, end_save{name, epoch, 1});
  }

  // The daemon still answers: a put and a fetch round trip on `node`.
  bool still_serving(const node_and_persistence_actor& node) {
    put_blobs put;
    put.blobs.push_back(blob_value{"ok", make_scalar<int64_t>(7)});
    if (!ask<caf::unit_t>(node, put))
      return false;
    auto got = ask<blob_values>(node, fetch_blobs{{"ok"}});
    return got && got->blobs.size() == 1
      && got->blobs[0].value == make_scalar<int64_t>(7);
  }

  // Everything in the test directory except the daemon's own files.
  std::vector<std::string> outside_root() {
    std::vector<std::string> result;
    for (auto& entry : fs::recursive_directory_iterator(dir.path())) {
      auto path = entry.path().string();
      if (path.rfind(daemon.root(), 0) == 0
          || path.rfind(dir.sub("d."), 0) == 0)
        continue;
      result.push_back(path);
    }
    return result;
  }
};

bool rejected(const caf::error& err) {
  return is_error(err, actors_errc::rejected);
}

bool says(const caf::error& err, const std::string& part) {
  return error_text(err).find(part) != std::string::npos;
}

run_tasks tasks_with(op_def op) {
  task_def task;
  task.name = "t";
  task.node = "n1";
  task.steps.push_back(step_def{"s", {std::move(op)}, 1, ""});
  return run_tasks{"epoch", 1, {std::move(task)}};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(daemon_checks, client_fixture)

BOOST_AUTO_TEST_CASE(node_names_with_a_slash_or_dot_dot_are_refused) {
  for (auto name : {"a/b", "..", "../up", ""}) {
    auto attached = attach(name);
    BOOST_REQUIRE(!attached);
    BOOST_TEST(rejected(attached.error()), name);
    BOOST_TEST(says(attached.error(), "invalid node name"), name);
  }
  auto good = attach("n1");
  BOOST_REQUIRE(good);
  BOOST_TEST(still_serving(*good));
}

BOOST_AUTO_TEST_CASE(an_oversized_tensor_is_refused_and_not_stored) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  put_blobs put;
  put.blobs.push_back(
    blob_value{"big", make_tensor<float>({512}, std::vector<float>(512))});
  auto stored = ask<caf::unit_t>(*node, put);
  BOOST_REQUIRE(!stored);
  BOOST_TEST(rejected(stored.error()));
  BOOST_TEST(says(stored.error(), "at most 1024"));
  BOOST_TEST(!static_cast<bool>(ask<blob_values>(*node, fetch_blobs{{"big"}})));
  BOOST_TEST(still_serving(*node));
}

BOOST_AUTO_TEST_CASE(an_unknown_op_is_refused_before_anything_runs) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  op_def fill;
  fill.type = "CreateCounter";
  fill.outputs = {"made"};
  op_def unknown;
  unknown.type = "NoSuchOp";
  auto msg = tasks_with(fill);
  msg.tasks[0].steps[0].ops.push_back(unknown);
  auto done = ask<tasks_done>(*node, msg);
  BOOST_REQUIRE(!done);
  BOOST_TEST(rejected(done.error()));
  BOOST_TEST(says(done.error(), "NoSuchOp"));
  // The op before it did not run either.
  BOOST_TEST(
    !static_cast<bool>(ask<blob_values>(*node, fetch_blobs{{"made"}})));
  BOOST_TEST(still_serving(*node));
}

BOOST_AUTO_TEST_CASE(a_groups_plan_crosses_once_and_then_goes_as_its_key) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  op_def fill;
  fill.type = "CreateCounter";
  fill.outputs = {"made"};
  auto run = [&](uint64_t id, exchange_plan plan, uint64_t key) {
    auto msg = tasks_with(fill);
    msg.run = id;
    msg.plan = std::move(plan);
    msg.plan_key = key;
    return ask<tasks_done>(*node, msg);
  };
  // A plan naming a node without an exchange is refused when it crosses.
  auto refused = run(1, plan_with("c", "n9"), 7);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(says(refused.error(), "no exchange"), error_text(refused.error()));
  auto first = run(2, plan_with("c", "n1"), 8);
  BOOST_REQUIRE_MESSAGE(first, (first ? "" : error_text(first.error())));
  // The same key again: the proxy sends the key alone, and the daemon runs
  // the plan it kept; the bad plan beside the key never crosses.
  auto again = run(3, plan_with("c", "n9"), 8);
  BOOST_REQUIRE_MESSAGE(again, (again ? "" : error_text(again.error())));
  // A key the daemon keeps no plan for is refused, saying so.
  auto unknown = run(4, {}, 9);
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(is_error(unknown.error(), runtime_errc::exchange_failed));
  BOOST_TEST(says(unknown.error(), "not kept on this daemon"),
             error_text(unknown.error()));
  BOOST_TEST(still_serving(*node));
}

BOOST_AUTO_TEST_CASE(checkpoint_paths_never_leave_the_root) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  BOOST_REQUIRE(still_serving(*node));
  auto escaping
    = ask<snapshot_taken>(*node, begin_save{"n1", 1, 1, "../../escaped/n1.1"});
  BOOST_TEST(!static_cast<bool>(escaping));
  // An absolute path is taken as relative to the root.
  auto absolute = dir.sub("elsewhere/n1.1");
  auto placed = save(*node, "n1", 1, absolute);
  BOOST_REQUIRE_MESSAGE(placed, (placed ? "" : error_text(placed.error())));
  BOOST_TEST(placed->db == daemon.root() + absolute);
  BOOST_TEST(fs::is_directory(daemon.root() + absolute));
  BOOST_TEST(outside_root().empty());
  BOOST_TEST(still_serving(*node));
}

BOOST_AUTO_TEST_CASE(a_checkpoint_request_for_another_node_is_refused) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  auto other = ask<snapshot_taken>(*node, begin_save{"n2", 1, 1, "ck/n2.1"});
  BOOST_REQUIRE(!other);
  BOOST_TEST(rejected(other.error()));
  BOOST_TEST(!fs::exists(daemon.root() + "/ck"));
}

BOOST_AUTO_TEST_CASE(a_saved_checkpoint_loads_back_across_processes) {
  auto node = attach("n1");
  BOOST_REQUIRE(node);
  BOOST_REQUIRE(still_serving(*node));
  BOOST_REQUIRE(save(*node, "n1", 3, "ck/n1.3"));
  BOOST_REQUIRE(ask<caf::unit_t>(*node, reset_workspace{"test"}));
  BOOST_TEST(!static_cast<bool>(ask<blob_values>(*node, fetch_blobs{{"ok"}})));
  BOOST_REQUIRE(ask<checkpoint_stats>(
    *node, load_checkpoint{"n1", 3, "ck/n1.3", {}, false}));
  auto read = ask<blob_values>(*node, read_checkpoint{"n1", "ck/n1.3", {"ok"}});
  BOOST_REQUIRE(read);
  BOOST_TEST(read->blobs.size() == 1u);
  BOOST_TEST(still_serving(*node));
}

BOOST_AUTO_TEST_SUITE_END()
