#include "test/support/process_runner.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace epochrt::test {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

/// A pipe whose ends close themselves.
struct pipe_pair {
  int fds[2] = {-1, -1};
  pipe_pair() {
    if (::pipe2(fds, O_CLOEXEC) != 0)
      fail("pipe2");
  }
  ~pipe_pair() {
    close_read();
    close_write();
  }
  void close_read() {
    if (fds[0] >= 0)
      ::close(fds[0]);
    fds[0] = -1;
  }
  void close_write() {
    if (fds[1] >= 0)
      ::close(fds[1]);
    fds[1] = -1;
  }
};

// Starts `program` with `args` and the file actions given, which it
// destroys. Throws when the child cannot be started.
pid_t spawn(const std::string& program, const std::vector<std::string>& args,
            posix_spawn_file_actions_t& actions) {
  std::vector<std::string> storage;
  storage.push_back(program);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  auto rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    fail("posix_spawn " + program);
  }
  return pid;
}

} // namespace

process_runner::process_runner(std::string program,
                               std::chrono::milliseconds timeout)
  : program_(std::move(program)), timeout_(timeout) {
  // nop
}

process_result process_runner::run(const std::vector<std::string>& args) const {
  pipe_pair out;
  pipe_pair err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);
  auto pid = spawn(program_, args, actions);
  // Our copies of the write ends must go, or the reads never see EOF.
  out.close_write();
  err.close_write();
  process_result result;
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  pollfd fds[2] = {{out.fds[0], POLLIN, 0}, {err.fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    auto ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      fail("poll");
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      char buf[4096];
      auto n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1; // poll ignores negative descriptors
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      fail("waitpid");
  }
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  return result;
}

namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

} // namespace

background_process::background_process(const std::string& program,
                                       const std::vector<std::string>& args,
                                       const std::string& out_file,
                                       const std::string& err_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_ = spawn(program, args, actions);
}

background_process::~background_process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

bool background_process::running() {
  if (exit_code_ >= 0)
    return false;
  int status = 0;
  auto rc = ::waitpid(pid_, &status, WNOHANG);
  if (rc == pid_) {
    exit_code_ = exit_code_of(status);
    return false;
  }
  return rc == 0;
}

void background_process::signal(int signal) {
  if (running())
    ::kill(pid_, signal);
}

int background_process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exit_code_;
}

} // namespace epochrt::test
