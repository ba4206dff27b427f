#include <epochrt/messages/exchange_protocol.hpp>

#include <tuple>

namespace epochrt {

tensor materialize(const tensor_slice_view& x) {
  tensor result;
  result.type = x.source->type;
  result.shape = {static_cast<int64_t>(x.last - x.first)};
  auto size = element_size(x.source->type);
  result.data.assign(x.source->data.data() + x.first * size,
                     x.source->data.data() + x.last * size);
  return result;
}

namespace detail {

caf::error write_views_as_tensors(caf::serializer& f,
                                  const std::vector<tensor_slice_view>& xs) {
  auto count = xs.size();
  if (auto err = f.begin_sequence(count))
    return err;
  for (auto& x : xs) {
    auto type = x.source->type;
    std::vector<int64_t> shape{static_cast<int64_t>(x.last - x.first)};
    auto size = element_size(type);
    auto bytes = (x.last - x.first) * size;
    std::vector<std::string> no_strings;
    if (auto err = f(type, shape))
      return err;
    if (auto err = f.begin_sequence(bytes))
      return err;
    // The serializer only reads what it is given.
    auto* data = const_cast<char*>(x.source->data.data()) + x.first * size;
    if (bytes > 0)
      if (auto err = f.apply_raw(bytes, data))
        return err;
    if (auto err = f.end_sequence())
      return err;
    if (auto err = f(no_strings))
      return err;
  }
  return f.end_sequence();
}

} // namespace detail

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
