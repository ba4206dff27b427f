// Logging (actors/api/logging.hpp): each actor system has a logger of its
// own, made from the log_options given to configure; a host's sink gets
// the lines of its system only, at the level set for that system.

#define BOOST_TEST_MODULE actors_logging
#include <boost/test/unit_test.hpp>

#include <stdexcept>

#include "test/actors/test_support.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

// A second actor system beside the fixture's, with a capture of its own.
struct second_system {
  log_capture logs;
  std::unique_ptr<caf::actor_system_config> cfg = make_config(logs.options());
  caf::actor_system sys{*cfg};
};

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(logging, system_fixture)

BOOST_AUTO_TEST_CASE(a_host_sink_gets_the_lines_of_a_job_in_its_system) {
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json")};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(has(logs.text(), "[info] starting epoch 1\n"));
  BOOST_TEST(has(logs.text(), "[info] finished training after epoch 4\n"));
}

BOOST_AUTO_TEST_CASE(another_actor_system_keeps_its_own_lines) {
  second_system other;
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json")};
  BOOST_REQUIRE(runner.train(*sess));
  BOOST_TEST(has(logs.text(), "starting epoch"));
  BOOST_TEST(other.logs.text().empty());
}

BOOST_AUTO_TEST_CASE(a_level_set_on_one_system_holds_there_only) {
  second_system other;
  set_log_level(sys, log_level::warn);
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json")};
  BOOST_REQUIRE(runner.train(*sess));
  local_session other_sess{other.sys, ops, quick_options()};
  job_runner other_runner{load_example("pipeline.json")};
  BOOST_REQUIRE(other_runner.train(other_sess));
  BOOST_TEST(!has(logs.text(), "[info]"));
  BOOST_TEST(has(other.logs.text(), "[info] starting epoch 1\n"));
}

BOOST_AUTO_TEST_CASE(a_sink_that_throws_costs_its_lines_not_the_job) {
  log_options throwing;
  throwing.sink = [](log_level, std::string_view) {
    throw std::runtime_error("sink broken");
  };
  auto cfg = make_config(throwing);
  caf::actor_system broken{*cfg};
  local_session sess{broken, ops, quick_options()};
  job_runner runner{load_example("pipeline.json")};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
}

BOOST_AUTO_TEST_SUITE_END()
