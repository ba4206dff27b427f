#include "tools/job_event_fanout.hpp"

#include <exception>

namespace epochrt::cli {

void job_event_fanout::add(std::shared_ptr<job_events> observer) {
  if (observer)
    observers_.push_back(std::move(observer));
}

void job_event_fanout::on_event(const job_event& event) {
  // One observer's exception must not keep the event from the others; the
  // first is passed on, to be logged as any observer's.
  std::exception_ptr first;
  for (auto& observer : observers_) {
    try {
      observer->on_event(event);
    } catch (...) {
      if (!first)
        first = std::current_exception();
    }
  }
  if (first)
    std::rethrow_exception(first);
}

} // namespace epochrt::cli
