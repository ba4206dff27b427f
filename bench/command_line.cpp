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

bool parse_size_list(std::string_view text, std::vector<int>& out) {
  out.clear();
  return !text.empty() && text.back() != ','
    && for_each_item(text, [&](std::string_view item) {
         long scale = 1024; // a bare number is MiB
         if (!item.empty() && (item.back() == 'K' || item.back() == 'M')) {
           scale = item.back() == 'K' ? 1 : 1024;
           item.remove_suffix(1);
         }
         long value = 0;
         if (!parse_count(item, 1, (1L << 20) / scale, value))
           return false;
         out.push_back(static_cast<int>(value * scale));
         return true;
       });
}

std::string size_name(int kib) {
  if (kib % 1024 == 0)
    return std::to_string(kib / 1024) + "MiB";
  return std::to_string(kib) + "KiB";
}

} // namespace epochrt::bench
