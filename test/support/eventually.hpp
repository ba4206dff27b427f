#pragma once

#include <chrono>
#include <thread>

namespace epochrt::test {

/// Polls `pred` every 10 ms for at most `timeout`; its last result.
template <class Predicate>
bool eventually(Predicate pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

} // namespace epochrt::test
