#include "tools/process/child_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace epochrt::process {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string errno_text(const std::string& what, int err = errno) {
  return what + ": " + std::strerror(err);
}

void close_fd(int& fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

exit_status status_of(int raw) {
  exit_status st;
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

// `program` itself when it names a path, else the first executable file of
// that name in PATH; empty when there is none.
std::string resolve(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    auto colon = dirs.find(':', start);
    auto dir = dirs.substr(start, colon - start);
    auto candidate = (dir.empty() ? std::string{"."} : dir) + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)
        && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos)
      return {};
    start = colon + 1;
  }
}

// Opens where an output stream goes: -1 for inherit and pipe (set up
// elsewhere), -2 with `error` set when it cannot be opened.
int open_output(const output& o, std::string& error) {
  if (o.to != output::kind::file && o.to != output::kind::null)
    return -1;
  auto path = o.to == output::kind::null ? std::string{"/dev/null"} : o.path;
  auto fd
    = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = errno_text("cannot open " + path);
    return -2;
  }
  return fd;
}

// What the child reports through its error pipe before it gives up.
enum class child_stage : int { streams, directory, exec };

struct child_report {
  child_stage stage;
  int err;
};

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void child_failed(int report_fd, child_stage stage) {
  child_report r{stage, errno};
  [[maybe_unused]] auto n = ::write(report_fd, &r, sizeof(r));
  ::_exit(127);
}

// Makes `fd` the child's descriptor `target`, inheritable across exec.
bool place(int fd, int target) {
  if (fd == target)
    return ::fcntl(fd, F_SETFD, 0) == 0;
  return ::dup2(fd, target) >= 0;
}

// Reads what is ready on `fd` into `sink`: false at EOF or on an error.
bool read_ready(int fd, std::string& sink) {
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      sink.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR)
      continue;
    return false;
  }
}

// Polls `fds` until one is ready or `deadline`: false when the time ran out
// (or poll failed).
bool poll_until(pollfd* fds, nfds_t n, steady_clock::time_point deadline) {
  for (;;) {
    auto left
      = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now())
          .count();
    if (left <= 0)
      return false;
    auto ready = ::poll(fds, n, static_cast<int>(left));
    if (ready > 0)
      return true;
    if (ready == 0 || errno != EINTR)
      return false;
  }
}

// A complete line of `text` that starts with `prefix`, without it; nullopt
// when there is none yet.
std::optional<std::string> line_after(const std::string& text,
                                      const std::string& prefix) {
  size_t start = 0;
  for (;;) {
    auto end = text.find('\n', start);
    if (end == std::string::npos)
      return std::nullopt;
    if (text.compare(start, prefix.size(), prefix) == 0)
      return text.substr(start + prefix.size(), end - start - prefix.size());
    start = end + 1;
  }
}

} // namespace

std::string describe(const exit_status& status) {
  if (status.signal != 0)
    return "killed by signal " + std::to_string(status.signal);
  return "exit " + std::to_string(status.exit_code);
}

std::optional<child_process> child_process::start(const options& opts,
                                                  std::string& error) {
  if (opts.argv.empty()) {
    error = "no program to start";
    return std::nullopt;
  }
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed, and the parent may run
  // other threads.
  auto program = resolve(opts.argv[0]);
  if (program.empty()) {
    error = "cannot find " + opts.argv[0] + " in PATH";
    return std::nullopt;
  }
  std::vector<std::string> env = child_env(opts.env);
  std::vector<char*> argv;
  for (auto& a : opts.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // Every descriptor here is close-on-exec: a copy in another child, of
  // this thread or another, would keep a pipe open after we close ours.
  // The child's own copies are made by dup2, which clears the flag.
  struct fds {
    int out = -1, err = -1, in = -1;
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    int report[2] = {-1, -1};
    ~fds() {
      for (auto* fd :
           {&out, &err, &in, &in_pipe[0], &in_pipe[1], &out_pipe[0],
            &out_pipe[1], &err_pipe[0], &err_pipe[1], &report[0], &report[1]})
        close_fd(*fd);
    }
  } f;
  f.out = open_output(opts.out, error);
  if (f.out == -2)
    return std::nullopt;
  // stdout and stderr to the same file share one description, as a shell's
  // 2>&1 does.
  if (opts.err.to == output::kind::file && opts.out.to == output::kind::file
      && opts.err.path == opts.out.path)
    f.err = ::fcntl(f.out, F_DUPFD_CLOEXEC, 0);
  else
    f.err = open_output(opts.err, error);
  if (f.err == -2)
    return std::nullopt;
  if (!opts.stdin_pipe) {
    f.in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (f.in < 0) {
      error = errno_text("cannot open /dev/null");
      return std::nullopt;
    }
  }
  if ((opts.stdin_pipe && ::pipe2(f.in_pipe, O_CLOEXEC) != 0)
      || (opts.out.to == output::kind::pipe
          && ::pipe2(f.out_pipe, O_CLOEXEC) != 0)
      || (opts.err.to == output::kind::pipe
          && ::pipe2(f.err_pipe, O_CLOEXEC) != 0)
      || ::pipe2(f.report, O_CLOEXEC) != 0) {
    error = errno_text("pipe2");
    return std::nullopt;
  }
  int child_in = opts.stdin_pipe ? f.in_pipe[0] : f.in;
  int child_out = opts.out.to == output::kind::pipe ? f.out_pipe[1] : f.out;
  int child_err = opts.err.to == output::kind::pipe ? f.err_pipe[1] : f.err;
  const char* cwd = opts.cwd.empty() ? nullptr : opts.cwd.c_str();
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid < 0) {
    error = errno_text("fork");
    return std::nullopt;
  }
  if (pid == 0) {
    if (opts.own_group)
      ::setpgid(0, 0);
    if (opts.parent_death_signal != 0) {
      ::prctl(PR_SET_PDEATHSIG, opts.parent_death_signal);
      // The parent may have died before prctl.
      if (::getppid() != parent)
        ::_exit(127);
    }
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!place(child_in, STDIN_FILENO)
        || (child_out >= 0 && !place(child_out, STDOUT_FILENO))
        || (child_err >= 0 && !place(child_err, STDERR_FILENO)))
      child_failed(f.report[1], child_stage::streams);
    if (cwd != nullptr && ::chdir(cwd) != 0)
      child_failed(f.report[1], child_stage::directory);
    ::execve(program.c_str(), argv.data(), envp.data());
    child_failed(f.report[1], child_stage::exec);
  }
  if (opts.own_group)
    ::setpgid(pid, pid); // also here: whichever runs first
  child_process result;
  result.pid_ = pid;
  result.program_ = opts.argv[0];
  result.own_group_ = opts.own_group;
  result.stop_signal_ = opts.stop_signal;
  result.stop_grace_ = opts.stop_grace;
  result.stdin_fd_ = std::exchange(f.in_pipe[1], -1);
  result.stdout_fd_ = std::exchange(f.out_pipe[0], -1);
  result.stderr_fd_ = std::exchange(f.err_pipe[0], -1);
  // The report pipe stays empty and closes at exec: the child runs the
  // program. A report means it gave up, and has exited.
  close_fd(f.report[1]);
  child_report report{};
  ssize_t n = 0;
  while ((n = ::read(f.report[0], &report, sizeof(report))) < 0
         && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof(report))) {
    result.reap(true);
    switch (report.stage) {
      case child_stage::streams:
        error = errno_text("cannot set up the streams of " + opts.argv[0],
                           report.err);
        break;
      case child_stage::directory:
        error = errno_text("cannot enter " + opts.cwd, report.err);
        break;
      case child_stage::exec:
        error = errno_text("cannot execute " + program, report.err);
        break;
    }
    return std::nullopt;
  }
  return result;
}

child_process::child_process(child_process&& other) noexcept
  : pid_(std::exchange(other.pid_, -1)), program_(std::move(other.program_)),
    own_group_(other.own_group_), stop_signal_(other.stop_signal_),
    stop_grace_(other.stop_grace_),
    stdin_fd_(std::exchange(other.stdin_fd_, -1)),
    stdout_fd_(std::exchange(other.stdout_fd_, -1)),
    stderr_fd_(std::exchange(other.stderr_fd_, -1)),
    status_(std::move(other.status_)), port_(other.port_) {
  // nop
}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    stop();
    close_pipes();
    pid_ = std::exchange(other.pid_, -1);
    program_ = std::move(other.program_);
    own_group_ = other.own_group_;
    stop_signal_ = other.stop_signal_;
    stop_grace_ = other.stop_grace_;
    stdin_fd_ = std::exchange(other.stdin_fd_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    stderr_fd_ = std::exchange(other.stderr_fd_, -1);
    status_ = std::move(other.status_);
    port_ = other.port_;
  }
  return *this;
}

child_process::~child_process() {
  stop();
  close_pipes();
}

void child_process::close_pipes() {
  close_fd(stdin_fd_);
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
}

// Reaps the child once it ended (`block`: waits for that). It is looked at
// before it is reaped: until then its process group id stays its own, so
// the group kill reaches only what it left running in its group.
void child_process::reap(bool block) {
  if (pid_ < 0)
    return;
  siginfo_t info{};
  int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  int rc = 0;
  while ((rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, flags)) != 0
         && errno == EINTR) {
  }
  if (rc != 0) {
    // ECHILD: reaped elsewhere (SIGCHLD ignored); it ended, how is lost.
    status_ = exit_status{};
    pid_ = -1;
    return;
  }
  if (info.si_pid == 0)
    return; // still running
  if (own_group_)
    ::kill(-pid_, SIGKILL);
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  status_ = status_of(raw);
  pid_ = -1;
}

bool child_process::running() {
  reap(false);
  return pid_ >= 0;
}

int child_process::wait(milliseconds limit) {
  auto deadline = steady_clock::now() + limit;
  auto pause = milliseconds{1};
  while (running()) {
    if (steady_clock::now() >= deadline)
      return -1;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, milliseconds{20});
  }
  return status_ ? status_->code() : -1;
}

void child_process::signal(int sig) {
  if (running())
    ::kill(pid_, sig);
}

void child_process::close_stdin() {
  close_fd(stdin_fd_);
}

int child_process::stop(int sig, milliseconds grace) {
  close_stdin();
  if (running()) {
    if (sig != 0)
      ::kill(pid_, sig);
    if (wait(grace) < 0) {
      if (own_group_)
        ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      reap(true);
    }
  }
  return status_ ? status_->code() : -1;
}

bool child_process::read_to_end(milliseconds timeout, std::string& out,
                                std::string& err) {
  auto deadline = steady_clock::now() + timeout;
  pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  for (;;) {
    if (fds[0].fd < 0 && fds[1].fd < 0)
      return true;
    if (!poll_until(fds, 2, deadline))
      return false;
    for (int i = 0; i < 2; ++i)
      if (fds[i].fd >= 0 && fds[i].revents != 0
          && !read_ready(fds[i].fd, *sinks[i]))
        fds[i].fd = -1; // closed: poll ignores negative descriptors
  }
}

uint16_t child_process::await_listening(milliseconds timeout,
                                        std::string& error) {
  const std::string prefix = "listening on ";
  auto deadline = steady_clock::now() + timeout;
  std::string seen;
  std::string what;
  for (;;) {
    if (auto rest = line_after(seen, prefix)) {
      auto colon = rest->rfind(':');
      char* end = nullptr;
      auto port = colon == std::string::npos
        ? 0L
        : std::strtol(rest->c_str() + colon + 1, &end, 10);
      if (port > 0 && port <= 65535 && end != nullptr && *end == '\0') {
        port_ = static_cast<uint16_t>(port);
        return port_;
      }
      what = "printed a \"listening on\" line without a port";
      break;
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    if (stdout_fd_ < 0) {
      what = "has no stdout pipe to read";
      break;
    }
    if (!poll_until(&pfd, 1, deadline)) {
      what = "printed no \"listening on\" line in "
        + std::to_string(timeout.count()) + " ms";
      break;
    }
    if (!read_ready(stdout_fd_, seen)) {
      // Its stdout ends when it dies: say whether that happened.
      if (wait(milliseconds{500}) >= 0)
        what = "ended (" + describe(*status_)
          + ") before it printed a \"listening on\" line";
      else
        what = "closed its stdout without a \"listening on\" line";
      break;
    }
  }
  error = program_ + " " + what + (seen.empty() ? "" : "; its stdout: " + seen);
  return 0;
}

} // namespace epochrt::process
