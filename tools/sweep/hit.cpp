#include "tools/sweep/hit.hpp"

#include <cstdlib>
#include <sstream>

#include "tools/process/text_file.hpp"

namespace epochrt::cli::sweep {

std::vector<hit> read_trace(const std::filesystem::path& path, int phase,
                            const std::string& process) {
  std::vector<hit> hits;
  std::istringstream in{epochrt::process::read_text(path)};
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      auto tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab - start));
      if (tab == std::string::npos)
        break;
      start = tab + 1;
    }
    if (fields.size() != 5)
      continue;
    auto point = fault_point_from_name(fields[0]);
    if (!point)
      continue;
    hit h;
    h.phase = phase;
    h.process = process;
    h.point = *point;
    h.node = fields[1];
    h.epoch = std::strtoll(fields[2].c_str(), nullptr, 10);
    h.detail = fields[3];
    h.n = std::strtoull(fields[4].c_str(), nullptr, 10);
    hits.push_back(std::move(h));
  }
  return hits;
}

} // namespace epochrt::cli::sweep
