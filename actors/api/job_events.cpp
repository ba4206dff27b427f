#include <epochrt/actors/api/job_events.hpp>

#include <exception>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/notify.hpp>

namespace epochrt {

job_events::~job_events() {
  // nop
}

namespace detail {

void notify(const caf::actor_system& sys, job_events* events,
            const job_event& event) noexcept {
  if (events == nullptr)
    return;
  try {
    events->on_event(event);
  } catch (const std::exception& ex) {
    log(sys).warn("the job's event observer threw: {}", ex.what());
  } catch (...) {
    log(sys).warn("the job's event observer threw");
  }
}

void notify_span(const caf::actor_system& sys, job_events* events,
                 job_event::kind what, int64_t epoch,
                 job_event::clock::time_point start, bool ok,
                 std::string detail) noexcept {
  if (events == nullptr)
    return;
  job_event event;
  event.what = what;
  event.epoch = epoch;
  event.start = start;
  event.end = job_event::clock::now();
  event.ok = ok;
  event.detail = std::move(detail);
  notify(sys, events, event);
}

} // namespace detail

} // namespace epochrt
