#include "bench/daemon_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <limits.h>
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

// Reads the daemon's first stdout line, at most until `deadline`. Empty
// when the daemon closed stdout (it died) or the time ran out.
std::string read_first_line(int fd, steady_clock::time_point deadline) {
  std::string line;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline
                                                         - steady_clock::now());
    if (left.count() <= 0)
      return {};
    pollfd pfd{fd, POLLIN, 0};
    auto ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return {};
    char c = 0;
    auto n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return {};
    if (c == '\n')
      return line;
    line += c;
  }
}

} // namespace

node_daemon::node_daemon(node_daemon&& other) noexcept
  : pid_(std::exchange(other.pid_, -1)),
    stdout_fd_(std::exchange(other.stdout_fd_, -1)),
    port_(std::exchange(other.port_, 0)),
    log_path_(std::move(other.log_path_)) {
  // nop
}

node_daemon& node_daemon::operator=(node_daemon&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = std::exchange(other.pid_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    port_ = std::exchange(other.port_, 0);
    log_path_ = std::move(other.log_path_);
  }
  return *this;
}

node_daemon::~node_daemon() {
  stop();
}

node_daemon
node_daemon::start(const std::string& binary, const std::string& root,
                   const std::string& log_path, milliseconds ready_timeout) {
  if (::access(binary.c_str(), X_OK) != 0)
    throw std::runtime_error(errno_text(binary)
                             + " (build the epochrt_cli target, or pass "
                               "--epochrt PATH)");
  return start_program(
    {binary, "node", "--listen", "127.0.0.1:0", "--checkpoint-root", root},
    log_path, ready_timeout);
}

node_daemon node_daemon::start_program(std::vector<std::string> args,
                                       const std::string& log_path,
                                       milliseconds ready_timeout) {
  const auto binary = args.at(0);
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed, and the parent may
  // already run other threads.
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(errno_text("pipe2"));
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid < 0) {
    auto err = errno_text("fork");
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(err);
  }
  if (pid == 0) {
    // The kernel stops the daemon if the benchmark dies without cleaning
    // up; checking the parent closes the race with a parent that died
    // before prctl.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent)
      ::_exit(127);
    // A shell starts background jobs with SIGINT ignored, and an ignored
    // signal stays ignored across exec: the daemon could then not be
    // stopped with it. It waits for SIGINT and SIGTERM itself.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    auto log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    auto null = ::open("/dev/null", O_RDONLY);
    if (log < 0 || null < 0 || ::dup2(fds[1], STDOUT_FILENO) < 0
        || ::dup2(log, STDERR_FILENO) < 0 || ::dup2(null, STDIN_FILENO) < 0)
      ::_exit(127);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  node_daemon result;
  result.pid_ = pid;
  result.stdout_fd_ = fds[0];
  result.log_path_ = log_path;
  auto line = read_first_line(fds[0], steady_clock::now() + ready_timeout);
  // "listening on 127.0.0.1:PORT"
  constexpr std::string_view prefix = "listening on ";
  auto colon = line.rfind(':');
  long port = 0;
  if (line.rfind(prefix, 0) == 0 && colon != std::string::npos) {
    char* end = nullptr;
    port = std::strtol(line.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535)
      port = 0;
  }
  if (port == 0) {
    auto status = result.stop(milliseconds{500});
    throw std::runtime_error(binary + " did not report its port within "
                             + std::to_string(ready_timeout.count())
                             + " ms (first stdout line: '" + line
                             + "', exit status " + std::to_string(status)
                             + "); its log:\n" + tail_of(log_path, 10));
  }
  result.port_ = static_cast<uint16_t>(port);
  return result;
}

int node_daemon::stop(milliseconds grace) {
  if (pid_ <= 0)
    return -1;
  int status = 0;
  ::kill(pid_, SIGTERM);
  auto deadline = steady_clock::now() + grace;
  pid_t reaped = 0;
  for (;;) {
    reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped < 0 && errno == EINTR)
      continue;
    if (reaped != 0 || steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(milliseconds{5});
  }
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR)
      ; // retry
  }
  pid_ = -1;
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
  return reaped > 0 ? shell_status(status) : -1;
}

std::string sibling_program(const char* argv0, const std::string& name) {
  std::string self;
  char buf[PATH_MAX];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0)
    self.assign(buf, static_cast<size_t>(n));
  else if (argv0 != nullptr)
    self = argv0;
  auto slash = self.rfind('/');
  auto dir
    = slash == std::string::npos ? std::string{"."} : self.substr(0, slash);
  return dir + "/" + name;
}

std::string tail_of(const std::string& path, int lines) {
  std::ifstream in{path};
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines)
      last.pop_front();
  }
  std::string result;
  for (auto& l : last)
    result += "  " + l + "\n";
  return result;
}

} // namespace epochrt::bench
