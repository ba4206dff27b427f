#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include <caf/expected.hpp>

#include <epochrt/actors/core/checkpoint_manager_state.hpp>
#include <epochrt/messages/manager_protocol.hpp>

namespace epochrt {

// Where retention stands or ends: its outcome so far, or why it stopped.
using retention_done = std::function<void(caf::expected<retention_result>)>;

// Retention up to `epoch`: keeps the last `keep_last` committed epochs up
// to `epoch`, and any committed epoch after it (left by an earlier run
// that went further; never ours to judge). First every node checks that it
// can read its kept databases (their references decide what may go); only
// then are the older epochs uncommitted, and then every node removes their
// databases but payloads a kept checkpoint refers to, and its holders the
// copies. In that order, so that a crash in between leaves databases of
// uncommitted epochs, which the next pruning removes, never a committed
// epoch without its databases. Calls `done` at the end, with what was kept
// and removed or with the first failure.
void retain(manager_self self, int64_t epoch, size_t keep_last,
            retention_done done);

// Retention after the commit of `epoch` (checkpoint_policy::keep_last).
// Failures cost a warning, never the commit. Calls `done` at the end.
void apply_retention(manager_self self, int64_t epoch,
                     std::function<void()> done);

} // namespace epochrt
