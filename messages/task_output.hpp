#pragma once

#include <string>

#include <epochrt/messages/tensor.hpp>

namespace epochrt {

/// One output of a finished task: blob `blob` of task `task`, as the task
/// left it.
struct task_output {
  std::string task;
  std::string blob;
  tensor value;
};

} // namespace epochrt
