#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

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
  int lane(const std::string& name) EPOCHRT_REQUIRES(mtx_);

  void append(const std::string& json_object) EPOCHRT_REQUIRES(mtx_);

  int64_t micros(job_event::clock::time_point t) const;

  annotated_mutex mtx_;
  std::ofstream out_ EPOCHRT_GUARDED_BY(mtx_);
  job_event::clock::time_point origin_;
  std::map<std::string, int> lanes_ EPOCHRT_GUARDED_BY(mtx_);
  bool first_ EPOCHRT_GUARDED_BY(mtx_) = true;
  bool closed_ EPOCHRT_GUARDED_BY(mtx_) = false;
};

} // namespace epochrt::cli
