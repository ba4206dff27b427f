// A node daemon's gate checks the tasks it is sent (path arguments placed
// under the root through the filesystem, the host's schema checks) without
// holding one of CAF's scheduler threads: a daemon with one scheduler thread
// keeps serving its other nodes while one node's check takes long. The
// daemon and the master are two actor systems of this process, talking over
// 127.0.0.1.

#define BOOST_TEST_MODULE gate_blocking
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_server.hpp>
#include <epochrt/epochrt.hpp>

using namespace epochrt;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;

// An op whose schema check takes 1.5 s: host code the gate runs.
op_schema slow_check_op() {
  op_schema schema;
  schema.type = "SlowCheck";
  schema.min_outputs = schema.max_outputs = 1;
  schema.fn = [](op_context& ctx) -> caf::error {
    ctx.set_output(0, make_scalar<int64_t>(1));
    return caf::none;
  };
  schema.check = [](const op_def&) -> std::string {
    std::this_thread::sleep_for(1500ms);
    return {};
  };
  return schema;
}

std::shared_ptr<op_registry> make_ops() {
  auto result = std::make_shared<op_registry>();
  BOOST_REQUIRE(!add_builtin_ops(*result));
  BOOST_REQUIRE(!result->add(slow_check_op()));
  return result;
}

struct daemon_config : caf::actor_system_config {
  daemon_config() {
    BOOST_REQUIRE(!configure_network(*this));
    // One scheduler thread: a handler that waits holds every actor.
    set("scheduler.max-threads", 1);
  }
};

struct master_config : caf::actor_system_config {
  master_config() {
    BOOST_REQUIRE(!configure_network(*this));
  }
};

// Why `x` holds no value; empty when it holds one (Boost.Test evaluates a
// message even when its assertion holds).
template <class T>
std::string why(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

task_group_def one_task(const std::string& node, op_def op) {
  task_group_def group;
  add_task(group, make_task(node + "_task", node, {std::move(op)}));
  return group;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_slow_task_check_on_one_node_does_not_stall_another) {
  test::temp_dir dir;
  daemon_config dcfg;
  caf::actor_system daemon_sys{dcfg};
  node_server_options opts;
  opts.checkpoint_root = dir.str();
  auto server = node_server::start(daemon_sys, make_ops(), opts);
  BOOST_REQUIRE_MESSAGE(server, why(server));
  auto port = (*server)->port();
  master_config mcfg;
  caf::actor_system master_sys{mcfg};
  {
    distributed_session_options sopts;
    sopts.timeouts.group_timeout = 60s;
    sopts.timeouts.request_timeout = 10s;
    distributed_session sess{master_sys,
                             make_ops(),
                             {{"a", node_address{"127.0.0.1", port}},
                              {"b", node_address{"127.0.0.1", port}}},
                             sopts};
    BOOST_REQUIRE(!sess.connect_all());
    // Warm up b: its first group runs at full speed.
    auto warm = sess.run(one_task("b", make_op("ConstantFill", {}, {"y"})));
    BOOST_REQUIRE_MESSAGE(warm, why(warm));
    auto slow = std::async(std::launch::async, [&] {
      return sess.run(one_task("a", make_op("SlowCheck", {}, {"x"})), "slow");
    });
    std::this_thread::sleep_for(200ms);
    auto start = clock_type::now();
    auto other = sess.run(one_task("b", make_op("ConstantFill", {}, {"y"})));
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                  clock_type::now() - start)
                  .count();
    BOOST_REQUIRE_MESSAGE(other, why(other));
    BOOST_TEST(took < 500,
               "node b's group took " << took
                                      << " ms while node a's "
                                         "tasks were checked");
    auto slow_result = slow.get();
    BOOST_TEST(static_cast<bool>(slow_result), why(slow_result));
  }
  (*server)->stop();
}
