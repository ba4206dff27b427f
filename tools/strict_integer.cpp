#include "tools/strict_integer.hpp"

#include <charconv>
#include <string>

#include <epochrt/messages/printable.hpp>

namespace epochrt::cli {

namespace {

template <class T>
std::optional<T> parse_whole(std::string_view text, T min, T max) {
  // from_chars takes no '+', no spaces and no base prefix, and reports an
  // out-of-range value instead of clamping it; all of `text` must be used.
  T value{};
  auto* first = text.data();
  auto* last = text.data() + text.size();
  if (text.empty())
    return std::nullopt;
  auto [end, ec] = std::from_chars(first, last, value, 10);
  if (ec != std::errc{} || end != last || value < min || value > max)
    return std::nullopt;
  return value;
}

template <class T>
CLI::Validator make_validator(T min, T max) {
  auto expected = "a decimal integer from " + std::to_string(min) + " to "
    + std::to_string(max);
  return CLI::Validator{[min, max, expected](std::string& text) {
                          if (parse_whole<T>(text, min, max))
                            return std::string{};
                          return "expected " + expected + ", got '"
                            + printable(text) + "'";
                        },
                        expected};
}

} // namespace

std::optional<int64_t> parse_strict_integer(std::string_view text, int64_t min,
                                            int64_t max) {
  return parse_whole<int64_t>(text, min, max);
}

std::optional<uint64_t> parse_strict_unsigned(std::string_view text,
                                              uint64_t min, uint64_t max) {
  return parse_whole<uint64_t>(text, min, max);
}

CLI::Validator strict_integer(int64_t min, int64_t max) {
  return make_validator<int64_t>(min, max);
}

CLI::Validator strict_unsigned(uint64_t min, uint64_t max) {
  return make_validator<uint64_t>(min, max);
}

} // namespace epochrt::cli
