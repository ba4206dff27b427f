#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <epochrt/messages/protocol.hpp>

namespace epochrt {

/// Called after every epoch with the epoch and the outputs of the epoch
/// group's tasks. Runs on the runner actor's thread: it must not block long
/// and must not call back into epochrt.
using epoch_observer
  = std::function<void(int64_t epoch, const std::vector<task_output>&)>;

} // namespace epochrt
