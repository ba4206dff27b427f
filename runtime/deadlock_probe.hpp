#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/deadlock_detector.hpp>

namespace epochrt {

/// The deadlock check of a group run whose tasks live in several processes,
/// as the process that probes it (its prober) runs it: a pure state machine,
/// fed with each process's report of a round (exchange_probe_reply); the
/// caller sends the probes and owns the clock.
///
/// A round's reports, taken at different moments, still show one moment of
/// the whole run when the run is quiet: a round begins only once the round
/// before is complete, so some moment lies between every process's two
/// reports, and a process whose count of activity did not move between its
/// two reports was, at that moment, as both show it. At that moment no
/// message of the run was between processes when the run's messages sent
/// equal those received (Mattern's four-counter method). The run is then
/// deadlocked as deadlock_detector says, over every process's tasks.
///
/// Not thread-safe: its owner locks.
class deadlock_probe {
public:
  /// `processes`: how many processes report in each round, the prober
  /// included.
  explicit deadlock_probe(size_t processes, uint32_t stalled_checks = 2);

  /// Begins a round and returns its number, for the probes. A round still
  /// missing a report saw no whole moment of the run: it counts as not
  /// quiet.
  uint64_t begin_round();

  /// The report of process `process` (any key telling processes apart).
  /// Ignored when it is of another round than the current one, or the
  /// process reported in this round already. Returns what deadlocks the
  /// run, naming every waiting task in the order of their names, once a
  /// round is complete and the run deadlocked; none before.
  std::optional<std::string> report(const std::string& process,
                                    const exchange_probe_reply& reply);

private:
  size_t processes_;
  deadlock_detector detector_;
  uint64_t round_ = 0;
  bool complete_ = true;
  std::set<std::string> reported_;
  std::vector<exchange_task_view> tasks_;
  uint64_t activity_ = 0;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
};

} // namespace epochrt
