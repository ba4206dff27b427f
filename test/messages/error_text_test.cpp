#include <epochrt/messages/error_text.hpp>

#include <boost/test/unit_test.hpp>

#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <epochrt/messages/codec_errc.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(error_text_suite)

BOOST_AUTO_TEST_CASE(no_error_renders_as_nothing) {
  BOOST_TEST(error_text(caf::error{}).empty());
}

BOOST_AUTO_TEST_CASE(an_error_renders_as_its_context_string_alone) {
  auto err = make_error(codec_errc::malformed, "job.json: line 3");
  BOOST_TEST(error_text(err) == "job.json: line 3");
}

BOOST_AUTO_TEST_CASE(a_context_that_is_not_one_string_renders_as_caf_does) {
  caf::error err{3, caf::atom("elsewhere"), caf::make_message(1, 2)};
  BOOST_TEST(error_text(err) == caf::to_string(err));
}

BOOST_AUTO_TEST_SUITE_END()
