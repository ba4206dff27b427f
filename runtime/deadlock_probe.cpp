#include <epochrt/runtime/deadlock_probe.hpp>

#include <algorithm>

namespace epochrt {

deadlock_probe::deadlock_probe(size_t processes, uint32_t stalled_checks)
  : processes_(processes), detector_(stalled_checks) {
  // nop
}

uint64_t deadlock_probe::begin_round() {
  if (!complete_)
    detector_.interrupt();
  ++round_;
  complete_ = false;
  reported_.clear();
  tasks_.clear();
  activity_ = sent_ = received_ = 0;
  return round_;
}

std::optional<std::string>
deadlock_probe::report(const std::string& process,
                       const exchange_probe_reply& reply) {
  if (complete_ || reply.round != round_ || !reported_.insert(process).second)
    return std::nullopt;
  tasks_.insert(tasks_.end(), reply.tasks.begin(), reply.tasks.end());
  activity_ += reply.activity + reply.sent + reply.received;
  sent_ += reply.sent;
  received_ += reply.received;
  if (reported_.size() < processes_)
    return std::nullopt;
  complete_ = true;
  if (sent_ != received_) {
    detector_.interrupt();
    return std::nullopt;
  }
  std::sort(tasks_.begin(), tasks_.end(), [](auto& x, auto& y) {
    return x.task < y.task;
  });
  return detector_.observe(tasks_, activity_);
}

} // namespace epochrt
