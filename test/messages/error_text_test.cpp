#include <epochrt/messages/error_text.hpp>

#include <boost/test/unit_test.hpp>

#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/sec.hpp>

#include <epochrt/messages/codec_errc.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(error_text_suite)

BOOST_AUTO_TEST_CASE(no_error_renders_as_nothing_in_either_form) {
  BOOST_TEST(error_text(caf::error{}).empty());
  BOOST_TEST(error_text(caf::error{}, error_form::code_and_context).empty());
}

BOOST_AUTO_TEST_CASE(the_context_form_is_the_context_string_alone) {
  auto err = make_error(codec_errc::malformed, "job.json: line 3");
  BOOST_TEST(error_text(err) == "job.json: line 3");
  BOOST_TEST(error_text(err, error_form::context) == "job.json: line 3");
}

BOOST_AUTO_TEST_CASE(the_code_form_names_the_code_before_the_context) {
  BOOST_TEST(error_text(make_error(codec_errc::malformed, "job.json: line 3"),
                        error_form::code_and_context)
             == "malformed: job.json: line 3");
}

BOOST_AUTO_TEST_CASE(the_code_form_of_an_error_without_context_is_its_code) {
  BOOST_TEST(
    error_text(make_error(codec_errc::malformed), error_form::code_and_context)
    == "malformed");
}

BOOST_AUTO_TEST_CASE(cafs_own_errors_are_named_by_their_sec_code) {
  caf::error err = caf::sec::request_timeout;
  BOOST_TEST(error_text(err, error_form::code_and_context)
             == "request_timeout");
}

BOOST_AUTO_TEST_CASE(an_unregistered_category_falls_back_to_cafs_rendering) {
  caf::error err{3, caf::atom("elsewhere"),
                 caf::make_message(std::string{"x"})};
  BOOST_TEST(error_text(err, error_form::code_and_context)
             == caf::to_string(err));
  // The context form still needs nothing but the context.
  BOOST_TEST(error_text(err) == "x");
}

BOOST_AUTO_TEST_CASE(a_registered_category_gets_its_codes_named) {
  auto category = caf::atom("ert_test");
  register_error_category(category, [](uint8_t code) {
    return "code" + std::to_string(code);
  });
  caf::error err{7, category, caf::make_message(std::string{"why"})};
  BOOST_TEST(error_text(err, error_form::code_and_context) == "code7: why");
}

BOOST_AUTO_TEST_SUITE_END()
