// The errors of the actors layer (actors/api/actors_errc.hpp): one
// predicate that tells their codes apart by category too; and the names of
// every layer's codes (actors/api/error_codes.hpp), from one list.

#define BOOST_TEST_MODULE actors_errors
#include <boost/test/unit_test.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(errors)

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

BOOST_AUTO_TEST_CASE(no_error_has_no_code_and_renders_as_nothing) {
  BOOST_TEST(error_code_name(caf::error{}).empty());
  BOOST_TEST(coded_error_text(caf::error{}).empty());
}

BOOST_AUTO_TEST_CASE(every_layers_codes_are_named_without_registration) {
  BOOST_TEST(coded_error_text(make_error(codec_errc::malformed, "line 3"))
             == "malformed: line 3");
  BOOST_TEST(coded_error_text(make_error(fault_errc::invalid_plan, "no point"))
             == "invalid_plan: no point");
  BOOST_TEST(coded_error_text(make_error(runtime_errc::op_failed, "x"))
             == "op_failed: x");
  BOOST_TEST(coded_error_text(make_error(persistence_errc::corrupt, "y"))
             == "corrupt: y");
  BOOST_TEST(coded_error_text(make_error(actors_errc::node_lost, "node a"))
             == "node_lost: node a");
}

BOOST_AUTO_TEST_CASE(an_error_without_context_renders_as_its_code) {
  BOOST_TEST(coded_error_text(make_error(codec_errc::malformed))
             == "malformed");
}

BOOST_AUTO_TEST_CASE(cafs_own_errors_are_named_by_their_sec_code) {
  caf::error err = caf::sec::request_timeout;
  BOOST_TEST(error_code_name(err) == "request_timeout");
  BOOST_TEST(coded_error_text(err) == "request_timeout");
}

BOOST_AUTO_TEST_CASE(another_category_falls_back_to_cafs_rendering) {
  caf::error err{3, caf::atom("elsewhere"),
                 caf::make_message(std::string{"x"})};
  BOOST_TEST(error_code_name(err).empty());
  BOOST_TEST(coded_error_text(err) == caf::to_string(err));
  // The context alone needs nothing but the context.
  BOOST_TEST(error_text(err) == "x");
}

BOOST_AUTO_TEST_CASE(a_configured_system_renders_our_errors_with_their_code) {
  caf::actor_system_config cfg;
  configure(cfg);
  caf::actor_system sys{cfg};
  auto err = make_error(persistence_errc::not_committed, "epoch 7");
  BOOST_TEST(sys.render(err) == "not_committed: epoch 7");
}

BOOST_AUTO_TEST_SUITE_END()
