#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/messages/exchange_protocol.hpp>

namespace epochrt {

/// Tells a group run that can never end from one that is slow: a pure
/// state machine fed with what the exchange sees of the run's tasks (every
/// task that uses its channels or collectives) at regular checks, and with
/// a count of the run's events (operations, messages, reductions, task
/// ends), which moves whenever anything happens.
///
/// A run is deadlocked when, at `stalled_checks` checks in a row, every
/// task has ended or waits, at least one waits, none is in flight, and no
/// event happened since the check before: nothing can then end a wait,
/// since only a task's operation or work under way could. (Waits end on
/// other threads after the exchange's lock is released; a second check
/// sees what the first could not.) Not thread-safe: its owner locks.
class deadlock_detector {
public:
  explicit deadlock_detector(uint32_t stalled_checks = 2);

  /// One check. Returns what deadlocks the run, naming every waiting task
  /// and what it waits in, once it is deadlocked; none before.
  std::optional<std::string>
  observe(const std::vector<exchange_task_view>& tasks, uint64_t events);

  /// A check that could not see the whole run (a report missing, messages
  /// of the run between processes): the run is not known to be quiet, and
  /// the count starts again.
  void interrupt();

private:
  uint32_t stalled_checks_;
  uint32_t stalled_ = 0;
  std::optional<uint64_t> last_events_;
};

} // namespace epochrt
