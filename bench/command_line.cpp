#include "bench/command_line.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace epochrt::bench {

bool parse_count(std::string_view text, long min, long max, long& out) {
  if (text.empty())
    return false;
  std::string digits{text}; // strtol needs the terminating NUL
  char* end = nullptr;
  errno = 0;
  auto value = std::strtol(digits.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max)
    return false;
  out = value;
  return true;
}

bool parse_count(std::string_view text, long min, long max, int& out) {
  long value = 0;
  if (!parse_count(text, min, max, value))
    return false;
  out = static_cast<int>(value);
  return true;
}

bool for_each_item(std::string_view list,
                   const std::function<bool(std::string_view)>& take) {
  while (!list.empty()) {
    auto comma = list.find(',');
    if (!take(list.substr(0, comma)))
      return false;
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return true;
}

bool parse_int_list(std::string_view text, std::vector<int>& out) {
  out.clear();
  return !text.empty() && text.back() != ','
    && for_each_item(text, [&](std::string_view item) {
         int value = 0;
         if (!parse_count(item, 1, 4096, value))
           return false;
         out.push_back(value);
         return true;
       });
}

} // namespace epochrt::bench
