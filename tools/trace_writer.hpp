#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <epochrt/actors/api/job_events.hpp>

namespace epochrt::cli {

/// `epochrt run --trace FILE`: the job's timeline in the Chrome trace-event
/// format (JSON array form), which Perfetto's UI (ui.perfetto.dev) and
/// chrome://tracing open. One process, "epochrt run"; one lane (thread) for
/// the job runner (groups, epochs, snapshots, lost nodes, recoveries), one
/// for the checkpoint manager (commits), one per node (its checkpoint
/// writes, each with its snapshot and sync parts nested, and loads). Times are
/// microseconds from the start of the run.
///
/// Each event is appended and flushed as it happens; `close` ends the
/// array. A process killed before that leaves the array open, which both
/// viewers accept. Thread-safe (job_events' contract).
class trace_writer : public job_events {
public:
  /// Opens (creates or truncates) `path`; null with `problem` set when it
  /// cannot be written.
  static std::shared_ptr<trace_writer> open(const std::string& path,
                                            std::string& problem);

  ~trace_writer() override;

  void on_event(const job_event& event) override;

  /// Ends the JSON array; later events are dropped.
  void close();

private:
  explicit trace_writer(std::ofstream out);

  // The lane of `name`, named in the trace on first use.
  int lane(const std::string& name);

  void append(const std::string& json_object);

  int64_t micros(job_event::clock::time_point t) const;

  std::mutex mtx_;
  std::ofstream out_;
  job_event::clock::time_point origin_;
  std::map<std::string, int> lanes_;
  bool first_ = true;
  bool closed_ = false;
};

} // namespace epochrt::cli
