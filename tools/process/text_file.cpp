#include "tools/process/text_file.hpp"

#include <deque>
#include <fstream>
#include <sstream>

namespace epochrt::process {

std::string read_text(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string tail_of(const std::string& path, int lines) {
  std::ifstream in{path};
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines)
      last.pop_front();
  }
  std::string result;
  for (auto& l : last)
    result += "  " + l + "\n";
  return result;
}

} // namespace epochrt::process
