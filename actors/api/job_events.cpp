#include <epochrt/actors/api/job_events.hpp>

#include <exception>

#include <epochrt/actors/detail/log.hpp>

namespace epochrt {

job_events::~job_events() {
  // nop
}

void notify(job_events* events, const job_event& event) noexcept {
  if (events == nullptr)
    return;
  try {
    events->on_event(event);
  } catch (const std::exception& ex) {
    detail::log().warn("the job's event observer threw: {}", ex.what());
  } catch (...) {
    detail::log().warn("the job's event observer threw");
  }
}

} // namespace epochrt
