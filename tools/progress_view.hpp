#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt::cli {

/// `epochrt run` on a terminal: one live line on stderr for the job —
///
///   pipeline  epoch 3/4  1.20 s/epoch  ckpt 2: 4.1 ms 1.2 KiB 0.3 MiB/s
///   committed 2
///
/// the epoch running or that ran last (of the limit when the job file sets
/// one), the time of the last one that ended, the last checkpoint's time
/// (its slowest node's save, then the commit), the bytes it wrote and their
/// throughput, and the last committed epoch. Redrawn in place at each
/// event.
///
/// Written by hand: Debian packages no C++ progress library (no
/// `indicators`; `apt-cache search` shows Go ones only), and one line needs
/// only a carriage return and the ANSI "erase line" (ESC [2K). The line
/// ends with a carriage return, cursor at its start, so that a warning
/// logged meanwhile writes over it rather than after it.
///
/// Thread-safe (job_events' contract); each redraw is one write(2).
class progress_view : public job_events {
public:
  /// Draws on file descriptor `fd` (a terminal).
  progress_view(std::string job_name, std::optional<int64_t> epoch_limit,
                int fd = 2);

  void on_event(const job_event& event) override;

  /// Leaves the last line on screen and moves below it.
  void finish();

  /// Erases the line, for a message that takes its place; the next event
  /// draws it again.
  void clear_line();

  /// The current line, without control characters (for tests).
  std::string text() const;

private:
  // What text() returns.
  std::string line() const EPOCHRT_REQUIRES(mtx_);

  void draw() EPOCHRT_REQUIRES(mtx_);

  mutable annotated_mutex mtx_;
  std::string job_;
  std::optional<int64_t> limit_;
  int fd_;
  int64_t epoch_ EPOCHRT_GUARDED_BY(mtx_) = -1;
  int64_t epoch_us_ EPOCHRT_GUARDED_BY(mtx_) = -1;
  int64_t committed_ EPOCHRT_GUARDED_BY(mtx_) = -1;
  int64_t resumed_ EPOCHRT_GUARDED_BY(mtx_) = -1;
  // A checkpoint's figures: its slowest node's save (whole, and its writing
  // alone) and the bytes its nodes wrote together.
  struct save_figures {
    int64_t epoch = -1;
    int64_t us = 0;
    int64_t write_us = 0;
    uint64_t bytes = 0;
  };
  // The last committed checkpoint, its commit included in `us`.
  save_figures ckpt_ EPOCHRT_GUARDED_BY(mtx_);
  // The checkpoint being written, as its nodes report.
  save_figures pending_ EPOCHRT_GUARDED_BY(mtx_);
  bool finished_ EPOCHRT_GUARDED_BY(mtx_) = false;
};

} // namespace epochrt::cli
