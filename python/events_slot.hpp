#pragma once

#include <memory>
#include <mutex>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// A job_events that hands every event to the observer set now, if any:
/// what a manager or a runner is made with, so that each `train` can
/// watch its own job (`JobRunner.train(..., on_epoch=, stats_json=)`).
/// Thread-safe; `set` and `on_event` take one mutex, so an observer is
/// never called after `set` replaced it and returned.
class events_slot : public job_events {
public:
  void set(std::shared_ptr<job_events> target) {
    std::lock_guard<std::mutex> guard{mtx_};
    target_ = std::move(target);
  }

  void on_event(const job_event& event) override {
    std::lock_guard<std::mutex> guard{mtx_};
    if (target_)
      target_->on_event(event);
  }

private:
  std::mutex mtx_;
  std::shared_ptr<job_events> target_;
};

} // namespace epochrt::python
