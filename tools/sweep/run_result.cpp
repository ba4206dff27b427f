#include "tools/sweep/run_result.hpp"

#include <sstream>

namespace epochrt::cli::sweep {

std::string describe(const run_status& status) {
  return status.timed_out ? "timed out" : process::describe(status);
}

bool succeeded(const run_status& status) {
  return !status.timed_out && status.signal == 0 && status.exit_code == 0;
}

std::string error_line(const std::string& err) {
  std::string found;
  std::istringstream in{err};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("epochrt: error:", 0) == 0)
      found = line;
  return found;
}

} // namespace epochrt::cli::sweep
