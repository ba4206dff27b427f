// The errors of the actors layer (actors/api/actors_errc.hpp): one
// predicate that tells their codes apart by category too, and one renderer.

#define BOOST_TEST_MODULE actors_errors
#include <boost/test/unit_test.hpp>

#include <caf/error.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/messages/error_text.hpp>

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

BOOST_AUTO_TEST_CASE(errors_of_the_actors_layer_render_with_their_code) {
  auto err = make_error(actors_errc::node_lost, "node a is down");
  BOOST_TEST(error_text(err) == "node a is down");
  BOOST_TEST(error_text(err, error_form::code_and_context)
             == "node_lost: node a is down");
}

BOOST_AUTO_TEST_SUITE_END()
