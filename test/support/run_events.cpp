#include "test/support/run_events.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "test/support/eventually.hpp"

namespace epochrt::test {

namespace {

bool matches(const nlohmann::json& line, const run_event& event) {
  if (!line.is_object() || line.value("type", "") != event.type)
    return false;
  if (event.epoch >= 0 && line.value("epoch", int64_t{-1}) != event.epoch)
    return false;
  if (event.committed && !line.value("committed", false))
    return false;
  if (event.failures >= 0
      && line.value("failures", int64_t{-1}) != event.failures)
    return false;
  return true;
}

bool holds(const std::string& stats_path, const run_event& event) {
  std::ifstream in{stats_path};
  std::string line;
  // getline drops a last line without its newline: one being written.
  while (std::getline(in, line) && !in.eof()) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && matches(parsed, event))
      return true;
  }
  return false;
}

} // namespace

std::string run_event::describe() const {
  auto text = type;
  if (epoch >= 0)
    text += " " + std::to_string(epoch);
  if (committed)
    text += " committed";
  if (failures >= 0)
    text += " (failure " + std::to_string(failures) + ")";
  return text;
}

run_event epoch_committed(int64_t epoch) {
  run_event result;
  result.type = "epoch";
  result.epoch = epoch;
  result.committed = true;
  return result;
}

run_event node_lost_event(int64_t failures) {
  run_event result;
  result.type = "node_lost";
  result.failures = failures;
  return result;
}

bool stats_reached(const std::string& stats_path, const run_event& event,
                   std::chrono::milliseconds timeout) {
  return eventually(
    [&] {
      return holds(stats_path, event);
    },
    timeout);
}

} // namespace epochrt::test
