#pragma once

#include <memory>
#include <vector>

#include <epochrt/actors/api/job_events.hpp>

namespace epochrt::cli {

/// Hands every job event to each of several observers, in the order added
/// (a job runner and a checkpoint manager take one observer each).
/// Thread-safe as long as the observers are; add them all before the job.
class job_event_fanout : public job_events {
public:
  void add(std::shared_ptr<job_events> observer);

  bool empty() const noexcept {
    return observers_.empty();
  }

  void on_event(const job_event& event) override;

private:
  std::vector<std::shared_ptr<job_events>> observers_;
};

} // namespace epochrt::cli
