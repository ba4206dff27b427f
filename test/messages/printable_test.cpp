#include <epochrt/messages/printable.hpp>

#include <random>

#include <boost/test/unit_test.hpp>

using epochrt::printable;

BOOST_AUTO_TEST_SUITE(printable_suite)

BOOST_AUTO_TEST_CASE(printable_ascii_and_utf8_pass_unchanged) {
  BOOST_TEST(printable("job.json: epoch[0] 'x' \\ ~")
             == "job.json: epoch[0] 'x' \\ ~");
  BOOST_TEST(printable("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")
             == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

BOOST_AUTO_TEST_CASE(control_characters_are_escaped) {
  using namespace std::string_literals;
  BOOST_TEST(printable("a\x1b[31mb"s) == "a\\x1B[31mb");
  BOOST_TEST(printable("a\0b"s) == "a\\x00b");
  BOOST_TEST(printable("\t\n\r\x7f"s) == "\\t\\n\\r\\x7F");
}

BOOST_AUTO_TEST_CASE(line_separators_c1_and_bidi_controls_are_escaped) {
  BOOST_TEST(printable("a\xE2\x80\xA8z") == "a\\u2028z");
  BOOST_TEST(printable("a\xE2\x80\xA9z") == "a\\u2029z");
  BOOST_TEST(printable("\xC2\x9B") == "\\u009B");
  BOOST_TEST(printable("\xE2\x80\xAE") == "\\u202E");
  BOOST_TEST(printable("\xEF\xBB\xBF") == "\\uFEFF");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_is_escaped_byte_by_byte) {
  BOOST_TEST(printable("\xFF") == "\\xFF");
  BOOST_TEST(printable("\xC0\xAF") == "\\xC0\\xAF");          // overlong '/'
  BOOST_TEST(printable("\xED\xA0\x80") == "\\xED\\xA0\\x80"); // surrogate
  BOOST_TEST(printable("\xE2\x82") == "\\xE2\\x82");          // cut short
  BOOST_TEST(printable("\xF4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");
}

BOOST_AUTO_TEST_CASE(escaping_random_bytes_leaves_nothing_to_escape) {
  std::mt19937 gen{42};
  std::uniform_int_distribution<int> byte{0, 255};
  for (int round = 0; round < 2000; ++round) {
    std::string text(static_cast<size_t>(round % 64), '\0');
    for (auto& c : text)
      c = static_cast<char>(byte(gen));
    auto once = printable(text);
    BOOST_TEST(printable(once) == once);
    for (unsigned char c : once)
      BOOST_TEST_REQUIRE((c >= 0x20 && c != 0x7f));
  }
}

BOOST_AUTO_TEST_SUITE_END()
