#include "tools/stop_signals.hpp"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include <pthread.h>
#include <unistd.h>

namespace epochrt::cli {

stop_signals::stop_signals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

stop_signals::~stop_signals() {
  done_ = true;
  if (watcher_.joinable())
    watcher_.join();
}

void stop_signals::watch(std::function<void(int)> on_first) {
  if (watcher_.joinable())
    return;
  watcher_ = std::thread{[this, fn = std::move(on_first)]() mutable {
    run(std::move(fn));
  }};
}

void stop_signals::run(std::function<void(int)> on_first) {
  // A short wait, so that the destructor never waits long for this thread.
  timespec tick{0, 100 * 1000 * 1000};
  while (!done_) {
    auto signo = sigtimedwait(&set_, nullptr, &tick);
    if (signo < 0)
      continue; // EAGAIN (the tick) or EINTR
    if (received_ == 0) {
      received_ = signo;
      // First, so that it may clear a progress line for the notice below.
      if (on_first)
        on_first(signo);
      std::cerr << "epochrt: " << signal_name(signo)
                << ": stopping after the running epoch and its checkpoint "
                   "(send it again to stop at once)"
                << std::endl;
      continue;
    }
    // At once: whatever is committed stays committed; the epoch running
    // now is lost and runs again on the rerun.
    std::cerr << "epochrt: " << signal_name(signo)
              << " again: stopping at once; a rerun resumes from the last "
                 "committed epoch"
              << std::endl;
    std::_Exit(128 + received_.load());
  }
}

const char* signal_name(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal";
  }
}

} // namespace epochrt::cli
