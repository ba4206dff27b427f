#include "tools/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace epochrt::cli {

namespace {

child_status status_of(int raw) {
  child_status st;
  if (WIFSIGNALED(raw))
    st.signal = WTERMSIG(raw);
  else
    st.exit_code = WEXITSTATUS(raw);
  return st;
}

// The environment of the child: ours with `extra` added or replaced.
std::vector<std::string> child_env(const std::vector<std::string>& extra) {
  std::vector<std::string> result;
  for (auto** e = environ; *e != nullptr; ++e) {
    std::string entry{*e};
    auto name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (auto& x : extra)
      replaced = replaced || x.substr(0, x.find('=')) == name;
    if (!replaced)
      result.push_back(std::move(entry));
  }
  result.insert(result.end(), extra.begin(), extra.end());
  return result;
}

} // namespace

std::optional<child_process> child_process::start(const options& opts,
                                                  std::string& error) {
  if (opts.argv.empty()) {
    error = "no program to start";
    return std::nullopt;
  }
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env = child_env(opts.env);
  std::vector<char*> argv;
  for (auto& a : opts.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  auto out
    = opts.stdout_path.empty() ? std::string{"/dev/null"} : opts.stdout_path;
  auto err
    = opts.stderr_path.empty() ? std::string{"/dev/null"} : opts.stderr_path;
  int out_fd
    = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int err_fd
    = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    error
      = "cannot open " + (out_fd < 0 ? out : err) + ": " + std::strerror(errno);
    if (out_fd >= 0)
      ::close(out_fd);
    if (err_fd >= 0)
      ::close(err_fd);
    return std::nullopt;
  }
  // What the child says when it cannot run the program: prepared here, since
  // after fork only async-signal-safe calls are allowed.
  auto exec_failed = "epochrt: cannot execute " + opts.argv[0] + "\n";
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid < 0) {
    error = std::string{"fork: "} + std::strerror(errno);
    ::close(out_fd);
    ::close(err_fd);
    return std::nullopt;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // Its own process group keeps it from the terminal's signals: it dies
    // with the sweep instead, however the sweep ends.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0)
      ::dup2(null_fd, STDIN_FILENO);
    if (opts.cwd.empty() || ::chdir(opts.cwd.c_str()) == 0)
      ::execve(argv[0], argv.data(), envp.data());
    [[maybe_unused]] auto n
      = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid); // also here: whichever runs first
  ::close(out_fd);
  ::close(err_fd);
  return child_process{pid};
}

child_process::child_process(child_process&& other) noexcept
  : pid_(other.pid_) {
  other.pid_ = -1;
}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

child_process::~child_process() {
  kill();
}

bool child_process::poll(child_status& status) {
  if (pid_ < 0)
    return true;
  // Whether it ended, without reaping it yet: its process group id stays
  // its own until then, so the kill below reaches only what it left
  // running in its group.
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info,
               WEXITED | WNOHANG | WNOWAIT)
      != 0) {
    if (errno == ECHILD) { // reaped elsewhere (SIGCHLD ignored): it ended
      status = {};
      pid_ = -1;
      return true;
    }
    return false;
  }
  if (info.si_pid == 0)
    return false;
  ::kill(-pid_, SIGKILL);
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  status = status_of(raw);
  pid_ = -1;
  return true;
}

child_status child_process::wait(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  child_status status;
  auto pause = std::chrono::milliseconds(1);
  while (!poll(status)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill();
      status = {};
      status.timed_out = true;
      return status;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return status;
}

void child_process::kill() {
  if (pid_ < 0)
    return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string describe(const child_status& status) {
  if (status.timed_out)
    return "timed out";
  if (status.signal != 0)
    return "killed by signal " + std::to_string(status.signal);
  return "exit " + std::to_string(status.exit_code);
}

} // namespace epochrt::cli
