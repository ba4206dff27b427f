#include "tools/cli_output.hpp"

#include <iostream>

#include <caf/error.hpp>

#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/printable.hpp>

namespace epochrt::cli {

std::string one_line(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (char c : text)
    result += (c == '\n' || c == '\r') ? ' ' : c;
  while (!result.empty() && (result.back() == ' ' || result.back() == '\t'))
    result.pop_back();
  return result;
}

void print_warning(std::string_view text) {
  std::cout.flush();
  std::cerr << "epochrt: warning: " << printable(one_line(text)) << std::endl;
}

void print_error(std::string_view text) {
  // Flush stdout first so that, on a terminal, results printed so far come
  // before the error that ends them.
  std::cout.flush();
  // Text from a job file or a peer may hold control characters: they are
  // escaped, never sent to the terminal.
  std::cerr << "epochrt: error: " << printable(one_line(text)) << std::endl;
}

std::string describe(const caf::error& err) {
  return one_line(coded_error_text(err));
}

} // namespace epochrt::cli
