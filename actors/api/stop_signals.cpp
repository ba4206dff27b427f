#include <epochrt/actors/api/stop_signals.hpp>

#include <ctime>
#include <iostream>

#include <pthread.h>

#include <epochrt/actors/api/job_runner.hpp>

namespace epochrt {

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

void stop_signals::watch(std::function<void(int)> on_first,
                         std::function<void(int)> on_again) {
  if (watcher_.joinable())
    return;
  watcher_ = std::thread{
    [this, first = std::move(on_first), again = std::move(on_again)]() mutable {
      run(std::move(first), std::move(again));
    }};
}

void stop_signals::watch(job_runner& runner) {
  watch(
    [&runner](int signo) {
      runner.request_stop();
      print_notice(signo, false);
    },
    [&runner](int signo) {
      runner.request_stop_now();
      print_notice(signo, true);
    });
}

void stop_signals::print_notice(int signo, bool again) {
  if (again)
    std::cerr << "epochrt: " << signal_name(signo)
              << " again: stopping at once; a rerun resumes from the last "
                 "committed epoch"
              << std::endl;
  else
    std::cerr << "epochrt: " << signal_name(signo)
              << ": stopping after the running epoch and its checkpoint "
                 "(send it again to stop at once)"
              << std::endl;
}

void stop_signals::run(std::function<void(int)> on_first,
                       std::function<void(int)> on_again) {
  // A short wait, so that the destructor never waits long for this thread.
  timespec tick{0, 100 * 1000 * 1000};
  while (!done_) {
    auto signo = sigtimedwait(&set_, nullptr, &tick);
    if (signo < 0)
      continue; // EAGAIN (the tick) or EINTR
    if (received_ == 0) {
      received_ = signo;
      if (on_first)
        on_first(signo);
      continue;
    }
    if (on_again)
      on_again(signo);
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

} // namespace epochrt
