#pragma once

#include <memory>

#include <epochrt/epochrt.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt::python {

/// A job_events that hands every event to the observer set now, if any:
/// what a manager or a runner is made with, so that each `train` can
/// watch its own job (`JobRunner.train(..., on_epoch=, stats_json=)`).
/// Thread-safe; `set` and `on_event` take one mutex, so an observer is
/// never called after `set` replaced it and returned.
class events_slot : public job_events {
public:
  void set(std::shared_ptr<job_events> target) EPOCHRT_EXCLUDES(mtx_) {
    annotated_mutex::guard guard{mtx_};
    target_ = std::move(target);
  }

  void on_event(const job_event& event) override EPOCHRT_EXCLUDES(mtx_) {
    annotated_mutex::guard guard{mtx_};
    if (target_)
      target_->on_event(event);
  }

private:
  annotated_mutex mtx_;
  std::shared_ptr<job_events> target_ EPOCHRT_GUARDED_BY(mtx_);
};

} // namespace epochrt::python
