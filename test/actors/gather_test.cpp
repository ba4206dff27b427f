// The gather of a fan-out (actors/detail/gather.hpp): every reply in target
// order, one timer for the whole fan-out, failures settled by its policy
// and named after node, group and epoch. On CAF's deterministic test
// coordinator.

#define BOOST_TEST_MODULE actors_gather
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/gather.hpp>

using namespace epochrt;
using epochrt::test::deterministic_fixture;
using epochrt::test::held_promises;
using std::chrono::milliseconds;

namespace {

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
// Tells a holding node to answer what it holds with the int sent along.
using release_atom = caf::atom_constant<caf::atom("release")>;

// A fake node that answers only when the test says so: it keeps the
// promise of every request in `held`.
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
