#include <epochrt/runtime/deadlock_detector.hpp>

namespace epochrt {

deadlock_detector::deadlock_detector(uint32_t stalled_checks)
  : stalled_checks_(stalled_checks < 1 ? 1 : stalled_checks) {
  // nop
}

std::optional<std::string>
deadlock_detector::observe(const std::vector<exchange_task_view>& tasks,
                           uint64_t events) {
  using state = exchange_task_view::state;
  bool any_waiting = false;
  bool stuck = true;
  for (auto& task : tasks) {
    if (task.what == state::waiting)
      any_waiting = true;
    else if (task.what != state::ended)
      stuck = false;
  }
  auto quiet = last_events_ && *last_events_ == events;
  last_events_ = events;
  if (!any_waiting || !stuck || !quiet) {
    stalled_ = 0;
    return std::nullopt;
  }
  if (++stalled_ < stalled_checks_)
    return std::nullopt;
  std::string text = "deadlock: every task of the group that uses channels "
                     "or collectives waits, and nothing can end a wait:";
  auto first = true;
  for (auto& task : tasks)
    if (task.what == state::waiting) {
      text += (first ? " " : "; ") + task.task + " waits in " + task.waits_in;
      first = false;
    }
  return text;
}

void deadlock_detector::interrupt() {
  stalled_ = 0;
  last_events_.reset();
}

} // namespace epochrt
