#include "test/wire/peer_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace epochrt::test {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void close_fd(int& fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

// Reads `fd` for at most `timeout` until a complete line contains `marker`:
// true with the rest of that line in `rest`. `seen` collects all text read.
bool read_line_with(int fd, const std::string& marker,
                    std::chrono::milliseconds timeout, std::string& rest,
                    std::string& seen) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto at = seen.find(marker);
    if (at != std::string::npos) {
      auto end = seen.find('\n', at);
      if (end != std::string::npos) {
        rest = seen.substr(at + marker.size(), end - at - marker.size());
        return true;
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd pfd{fd, POLLIN, 0};
    auto ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR)
      return false;
    if (ready <= 0)
      continue;
    char buf[256];
    auto n = ::read(fd, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR))
      return false; // the child closed stdout: it will not print the line
    if (n > 0)
      seen.append(buf, static_cast<size_t>(n));
  }
}

} // namespace

peer_process::peer_process(const std::string& program,
                           const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout) {
  // O_CLOEXEC keeps our ends out of every other child: a copy of the stdin
  // write end elsewhere would keep the peer alive after we close ours.
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    fail("pipe2");
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    fail("pipe2");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears O_CLOEXEC on the child's copies.
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  std::vector<std::string> storage{program};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  auto rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  if (rc != 0) {
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    errno = rc;
    fail("posix_spawn " + program);
  }
  pid_ = pid;
  std::string rest;
  std::string seen;
  if (!read_line_with(stdout_fd_, "listening on ", timeout, rest, seen)) {
    // Its stdout also ends when it dies: say which happened.
    std::string what;
    if (wait(std::chrono::milliseconds(500)) >= 0)
      what = "exited with status " + std::to_string(exit_code_)
        + " before it printed a \"listening on\" line";
    else
      what = "printed no \"listening on\" line in "
        + std::to_string(timeout.count()) + " ms";
    signal(SIGKILL);
    wait(std::chrono::seconds(10));
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    throw std::runtime_error(program + " " + what + "; its stdout: " + seen);
  }
  auto colon = rest.rfind(':');
  port_ = static_cast<uint16_t>(std::stoi(rest.substr(colon + 1)));
}

peer_process::~peer_process() {
  close_stdin();
  if (wait(std::chrono::seconds(5)) < 0) {
    signal(SIGKILL);
    wait(std::chrono::seconds(10));
  }
  close_fd(stdout_fd_);
}

bool peer_process::running() {
  if (exit_code_ >= 0 || pid_ < 0)
    return false;
  int status = 0;
  auto rc = ::waitpid(pid_, &status, WNOHANG);
  if (rc != pid_)
    return rc == 0;
  if (WIFEXITED(status))
    exit_code_ = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    exit_code_ = 128 + WTERMSIG(status);
  else
    exit_code_ = 255;
  return false;
}

void peer_process::close_stdin() {
  close_fd(stdin_fd_);
}

void peer_process::signal(int sig) {
  if (running())
    ::kill(pid_, sig);
}

int peer_process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exit_code_;
}

} // namespace epochrt::test
