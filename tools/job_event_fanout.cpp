#include "tools/job_event_fanout.hpp"

namespace epochrt::cli {

void job_event_fanout::add(std::shared_ptr<job_events> observer) {
  if (observer)
    observers_.push_back(std::move(observer));
}

void job_event_fanout::on_event(const job_event& event) {
  // One observer's exception must not keep the event from the others.
  for (auto& observer : observers_)
    notify(observer.get(), event);
}

} // namespace epochrt::cli
