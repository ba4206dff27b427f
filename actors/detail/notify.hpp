#pragma once

#include <cstdint>
#include <string>

#include <caf/fwd.hpp>

#include <epochrt/actors/api/job_events.hpp>

namespace epochrt::detail {

/// Calls `events->on_event(event)` when `events` is set. An exception it
/// throws is logged to `sys`'s logger and otherwise ignored (the policy
/// job_events states).
void notify(const caf::actor_system& sys, job_events* events,
            const job_event& event) noexcept;

/// Notifies `events` that `what` happened from `start` to now.
void notify_span(const caf::actor_system& sys, job_events* events,
                 job_event::kind what, int64_t epoch,
                 job_event::clock::time_point start, bool ok = true,
                 std::string detail = {}) noexcept;

} // namespace epochrt::detail
