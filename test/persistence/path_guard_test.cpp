#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "test/persistence/test_util.hpp"
#include <epochrt/persistence/path_guard.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

BOOST_FIXTURE_TEST_SUITE(path_guard, persistence_fixture)

BOOST_AUTO_TEST_CASE(relative_path_inside_is_resolved_and_normalised) {
  auto p = resolve_inside(root.string(), "a/./b/../c.1");
  BOOST_REQUIRE_MESSAGE(p, describe(p));
  BOOST_TEST(*p == (root / "a" / "c.1").string());
}

BOOST_AUTO_TEST_CASE(absolute_path_inside_is_accepted) {
  auto p = resolve_inside(root.string(), (root / "x" / "y").string());
  BOOST_REQUIRE(p);
  BOOST_TEST(*p == (root / "x" / "y").string());
}

BOOST_AUTO_TEST_CASE(root_itself_is_accepted) {
  auto p = resolve_inside(root.string(), ".");
  BOOST_REQUIRE(p);
  BOOST_TEST(*p == root.string());
}

BOOST_AUTO_TEST_CASE(dot_dot_escapes_are_rejected) {
  for (auto path : {"..", "../x", "a/../../x", "a/../..", "./../../etc"})
    BOOST_TEST(has_code(resolve_inside(root.string(), path),
                        persistence_errc::invalid_name),
               "accepted " << path);
}

BOOST_AUTO_TEST_CASE(absolute_paths_outside_are_rejected) {
  BOOST_TEST(has_code(resolve_inside(root.string(), "/etc/passwd"),
                      persistence_errc::invalid_name));
  // A sibling that shares the root's name as a prefix.
  BOOST_TEST(has_code(resolve_inside(root.string(), root.string() + "x/y"),
                      persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_CASE(empty_path_is_rejected) {
  BOOST_TEST(has_code(resolve_inside(root.string(), ""),
                      persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_CASE(symlink_out_of_root_is_rejected) {
  fs::create_directories(root / "outside");
  fs::create_directories(root / "inside");
  fs::create_directory_symlink(root / "outside", root / "inside" / "link");
  auto inner = (root / "inside").string();
  BOOST_TEST(
    has_code(resolve_inside(inner, "link/x"), persistence_errc::invalid_name));
  BOOST_TEST(static_cast<bool>(resolve_inside(inner, "plain/x")));
}

BOOST_AUTO_TEST_SUITE_END()
