#include <boost/test/unit_test.hpp>

#include <string>

#include <epochrt/messages/names.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(names)

BOOST_AUTO_TEST_CASE(valid_node_name_rejects_unsafe_names) {
  for (const char* name :
       {"", "/", "a/b", "..", ".", ".hidden", "-x", "a b", "a\\b", "x\n"})
    BOOST_TEST(!valid_node_name(name), "accepted '" << name << "'");
  BOOST_TEST(!valid_node_name(std::string(129, 'a')));
  BOOST_TEST(!valid_node_name(std::string("a\0b", 3)));
}

BOOST_AUTO_TEST_CASE(valid_node_name_accepts_safe_names) {
  for (const char* name :
       {"trainer_0", "node-1.a", "A", "ps_12.reader", "trainer:0"})
    BOOST_TEST(valid_node_name(name), "rejected '" << name << "'");
  BOOST_TEST(valid_node_name(std::string(128, 'a')));
}

BOOST_AUTO_TEST_CASE(node_name_problem_explains_a_rejection) {
  BOOST_TEST(node_name_problem("trainer_0").empty());
  BOOST_TEST(!node_name_problem("a/b").empty());
  BOOST_TEST(!node_name_problem("").empty());
}

BOOST_AUTO_TEST_CASE(valid_blob_name_rejects_blanks_and_controls) {
  BOOST_TEST(valid_blob_name("w/0:grad"));
  BOOST_TEST(!valid_blob_name(""));
  BOOST_TEST(!valid_blob_name("a b"));
  BOOST_TEST(!valid_blob_name("a\tb"));
  BOOST_TEST(!valid_blob_name(std::string(257, 'x')));
}

BOOST_AUTO_TEST_SUITE_END()
