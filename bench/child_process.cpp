#include "bench/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace epochrt::bench {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

int shell_status(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

// Polls for the child's exit until `deadline`; the reaped pid, or 0.
pid_t reap_until(pid_t pid, int& status, steady_clock::time_point deadline) {
  for (;;) {
    auto reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped < 0 && errno == EINTR)
      continue;
    if (reaped != 0 || steady_clock::now() >= deadline)
      return reaped;
    std::this_thread::sleep_for(milliseconds{5});
  }
}

} // namespace

child_process::child_process(child_process&& other) noexcept
  : pid_(std::exchange(other.pid_, -1)),
    stdout_fd_(std::exchange(other.stdout_fd_, -1)) {
  // nop
}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    finish(milliseconds{0});
    pid_ = std::exchange(other.pid_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
  }
  return *this;
}

child_process::~child_process() {
  finish(milliseconds{0});
}

child_process child_process::start(std::vector<std::string> args,
                                   const std::string& log_path,
                                   bool capture_stdout) {
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed, and the parent runs
  // other threads (CAF's).
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (capture_stdout && ::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(errno_text("pipe2"));
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid < 0) {
    auto err = errno_text("fork");
    if (capture_stdout) {
      ::close(fds[0]);
      ::close(fds[1]);
    }
    throw std::runtime_error(err);
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent)
      ::_exit(127);
    // A shell starts background jobs with SIGINT ignored, and that survives
    // exec; the children must stay stoppable.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    auto log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    auto null = ::open("/dev/null", O_RDONLY);
    auto out = capture_stdout ? fds[1] : log;
    if (log < 0 || null < 0 || ::dup2(out, STDOUT_FILENO) < 0
        || ::dup2(log, STDERR_FILENO) < 0 || ::dup2(null, STDIN_FILENO) < 0)
      ::_exit(127);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  child_process result;
  result.pid_ = pid;
  if (capture_stdout) {
    ::close(fds[1]);
    result.stdout_fd_ = fds[0];
  }
  return result;
}

std::string child_process::read_output(milliseconds timeout, bool& timed_out) {
  timed_out = false;
  std::string result;
  if (stdout_fd_ < 0)
    return result;
  auto deadline = steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline
                                                         - steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      return result;
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    auto ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return result;
    if (ready == 0) {
      timed_out = true;
      return result;
    }
    auto n = ::read(stdout_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return result; // EOF: the child closed stdout
    result.append(buf, static_cast<size_t>(n));
  }
}

int child_process::finish(milliseconds grace) {
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
  if (pid_ <= 0)
    return -1;
  int status = 0;
  auto reaped = reap_until(pid_, status, steady_clock::now() + grace);
  if (reaped == 0) {
    ::kill(pid_, SIGTERM);
    reaped = reap_until(pid_, status, steady_clock::now() + milliseconds{2000});
  }
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR)
      ; // retry
  }
  pid_ = -1;
  return reaped > 0 ? shell_status(status) : -1;
}

} // namespace epochrt::bench
