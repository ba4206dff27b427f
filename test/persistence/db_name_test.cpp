#include <boost/test/unit_test.hpp>

#include "test/persistence/test_util.hpp"
#include <epochrt/persistence/db_name.hpp>

using namespace epochrt;
using namespace epochrt::test;

BOOST_AUTO_TEST_SUITE(db_names)

BOOST_AUTO_TEST_CASE(db_prefix_is_joined_with_a_slash) {
  BOOST_TEST(db_name(5, "trainer_1", "/tmp/x") == "/tmp/x/trainer_1.5");
  BOOST_TEST(db_name(0, "n", "rel/dir") == "rel/dir/n.0");
}

BOOST_AUTO_TEST_CASE(db_prefix_with_trailing_slash_gets_no_second_one) {
  BOOST_TEST(db_name(3, "n", "/tmp/x/") == "/tmp/x/n.3");
}

BOOST_AUTO_TEST_CASE(empty_db_prefix_gives_the_bare_name) {
  BOOST_TEST(db_name(12, "ps_0", "") == "ps_0.12");
}

BOOST_AUTO_TEST_CASE(path_prefix_replaces_db_prefix_by_concatenation) {
  BOOST_TEST(db_name(5, "trainer_1", "/tmp/x", "/data/ckpt_")
             == "/data/ckpt_trainer_1.5");
  BOOST_TEST(db_name(5, "trainer_1", "/tmp/x", "/data/")
             == "/data/trainer_1.5");
}

BOOST_AUTO_TEST_CASE(checked_db_name_accepts_a_valid_node) {
  auto name = checked_db_name(5, "trainer_1", "/tmp/x");
  BOOST_REQUIRE(name);
  BOOST_TEST(*name == "/tmp/x/trainer_1.5");
}

BOOST_AUTO_TEST_CASE(checked_db_name_rejects_escaping_node_names) {
  for (const char* node : {"../x", "a/b", "..", "", "/abs", ".hidden"})
    BOOST_TEST(has_code(checked_db_name(1, node, "/tmp/x"),
                        persistence_errc::invalid_name),
               "accepted '" << node << "'");
}

BOOST_AUTO_TEST_CASE(checked_db_name_rejects_a_negative_epoch) {
  BOOST_TEST(has_code(checked_db_name(-1, "n", "/tmp/x"),
                      persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_SUITE_END()
