#include <epochrt/messages/exchange_protocol.hpp>

#include <tuple>

namespace epochrt {

bool operator==(const task_ref& x, const task_ref& y) noexcept {
  return x.node == y.node && x.task == y.task;
}

bool operator<(const task_ref& x, const task_ref& y) noexcept {
  return std::tie(x.node, x.task) < std::tie(y.node, y.task);
}

std::string task_text(const task_ref& x) {
  return "task '" + x.task + "' on " + x.node;
}

std::string tasks_text(const std::vector<task_ref>& xs) {
  std::string result;
  for (auto& x : xs) {
    if (!result.empty())
      result += ", ";
    result += "'" + x.task + "' on " + x.node;
  }
  return result;
}

bool operator==(const channel_plan& x, const channel_plan& y) noexcept {
  return x.channel == y.channel && x.putters == y.putters
    && x.takers == y.takers;
}

bool operator==(const collective_plan& x, const collective_plan& y) noexcept {
  return x.name == y.name && x.kind == y.kind && x.op == y.op
    && x.root == y.root && x.participants == y.participants;
}

bool operator==(const exchange_peer& x, const exchange_peer& y) noexcept {
  return x.node == y.node && x.endpoint == y.endpoint && x.host == y.host
    && x.port == y.port;
}

bool operator==(const exchange_plan& x, const exchange_plan& y) noexcept {
  return x.channels == y.channels && x.collectives == y.collectives
    && x.peers == y.peers && x.relay == y.relay;
}

const channel_plan*
exchange_plan::find_channel(std::string_view name) const noexcept {
  for (auto& x : channels)
    if (x.channel.name == name)
      return &x;
  return nullptr;
}

const collective_plan*
exchange_plan::find_collective(std::string_view name) const noexcept {
  for (auto& x : collectives)
    if (x.name == name)
      return &x;
  return nullptr;
}

const caf::actor*
exchange_plan::endpoint_of(std::string_view node) const noexcept {
  for (auto& x : peers)
    if (x.node == node)
      return &x.endpoint;
  return nullptr;
}

} // namespace epochrt
