// The errors of fault plans render like every other category's.

#include <epochrt/faults/fault_errc.hpp>

#include <boost/test/unit_test.hpp>

#include <epochrt/messages/error_text.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(fault_errc_suite)

BOOST_AUTO_TEST_CASE(the_code_form_names_a_fault_code_before_the_context) {
  BOOST_TEST(error_text(make_error(fault_errc::invalid_plan, "no point"),
                        error_form::code_and_context)
             == "invalid_plan: no point");
}

BOOST_AUTO_TEST_SUITE_END()
