#pragma once

// The one way epochrt's programs, benchmarks and tests start another
// program: `epochrt sweep` its runs and daemons, the benchmarks their
// daemons and baselines, the tests the `epochrt` command. Not part of the
// installed API.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace epochrt::process {

/// How a child process ended.
struct exit_status {
  /// The signal that ended it, or 0.
  int signal = 0;
  /// Its exit code when it exited (signal == 0).
  int exit_code = 0;

  /// The number a shell reports: the exit code, or 128 + the signal.
  int code() const noexcept {
    return signal != 0 ? 128 + signal : exit_code;
  }
};

/// "exit 0", "exit 1", "killed by signal 9".
std::string describe(const exit_status& status);

/// Where one of the child's output streams goes.
struct output {
  enum class kind { inherit, null, file, pipe };
  kind to = kind::inherit;
  /// For kind::file: appended to, created when missing.
  std::string path;

  static output null() {
    return {kind::null, {}};
  }
  static output file(std::string path) {
    return {kind::file, std::move(path)};
  }
  /// A pipe that read_to_end or await_listening reads.
  static output pipe() {
    return {kind::pipe, {}};
  }
};

/// A program started as a child process, owned: no shell is involved, and
/// destroying a child that still runs stops it (see options::stop_signal)
/// and reaps it, so that no error path leaves one behind.
///
/// Not thread-safe: one thread owns a child_process at a time.
class child_process {
public:
  struct options {
    /// The program and its arguments. argv[0] is a path, or a name looked
    /// up in PATH when it has no slash.
    std::vector<std::string> argv;
    /// Working directory; empty: the caller's.
    std::string cwd;
    /// "NAME=VALUE" entries added to (or replacing in) our environment.
    std::vector<std::string> env;
    /// stdin: /dev/null, or a pipe whose write end only this object holds,
    /// so the child sees EOF when close_stdin is called or when this
    /// process dies, however it dies.
    bool stdin_pipe = false;
    output out;
    output err;
    /// The child leads a process group of its own: the terminal's signals
    /// do not reach it, and whatever is left of its group when it ends or
    /// is killed gets SIGKILL with it.
    bool own_group = false;
    /// Sent to the child by the kernel when the thread that started it
    /// ends (PR_SET_PDEATHSIG; 0: none). Only for a child started by a
    /// thread that lives as long as the child should.
    int parent_death_signal = 0;
    /// How the destructor stops a child that still runs: its stdin pipe is
    /// closed, `stop_signal` sent (0: none), and after `stop_grace` it gets
    /// SIGKILL. The default kills it at once.
    int stop_signal = 0;
    std::chrono::milliseconds stop_grace{0};
  };

  /// Starts the child. The child begins with SIGINT and SIGTERM at their
  /// default actions and no signal blocked, whatever the parent set (a
  /// shell starts background jobs with SIGINT ignored). nullopt with an
  /// error text when it cannot be started: no program, a file that cannot
  /// be opened, fork failing, a working directory or program that the
  /// child cannot enter or execute.
  static std::optional<child_process> start(const options& opts,
                                            std::string& error);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process();

  /// -1 once the child is reaped.
  pid_t pid() const noexcept {
    return pid_;
  }

  /// True while the child has not ended; once it has, reaps it (see
  /// options::own_group) and keeps its status.
  bool running();

  /// How the child ended; nullopt while it runs (as of the last look).
  const std::optional<exit_status>& status() const noexcept {
    return status_;
  }

  /// Waits at most `limit` for the child to end. Its exit_status::code(),
  /// or -1 when it still runs.
  int wait(std::chrono::milliseconds limit);

  /// Sends `sig` to the child while it runs.
  void signal(int sig);

  /// Closes the write end of the child's stdin pipe (when it has one).
  void close_stdin();

  /// Stops the child: closes its stdin, sends `sig` (0: none), waits at
  /// most `grace`, then SIGKILL, and reaps it. Its exit_status::code(), or
  /// -1 when there never was a child. Idempotent.
  int stop(int sig, std::chrono::milliseconds grace);

  /// Stops the child as the destructor would (options::stop_signal).
  int stop() {
    return stop(stop_signal_, stop_grace_);
  }

  /// SIGKILL, then reaps it.
  void kill() {
    stop(0, std::chrono::milliseconds{0});
  }

  /// Reads the output streams that are pipes until each is closed (the
  /// child exited) or `timeout` has passed: false in the latter case. What
  /// came in is appended to `out` and `err`.
  bool read_to_end(std::chrono::milliseconds timeout, std::string& out,
                   std::string& err);

  /// Reads stdout (a pipe) until a line "listening on HOST:PORT", at most
  /// `timeout`, and keeps the pipe open after it: the child may write to
  /// it still. The port, also kept as port(); 0 with `error` saying what
  /// the child did instead (exited, closed stdout, stayed silent) and what
  /// it printed.
  uint16_t await_listening(std::chrono::milliseconds timeout,
                           std::string& error);

  /// The port of the "listening on" line; 0 before await_listening.
  uint16_t port() const noexcept {
    return port_;
  }

private:
  child_process() = default;

  void reap(bool block);
  void close_pipes();

  pid_t pid_ = -1;
  std::string program_;
  bool own_group_ = false;
  int stop_signal_ = 0;
  std::chrono::milliseconds stop_grace_{0};
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::optional<exit_status> status_;
  uint16_t port_ = 0;
};

} // namespace epochrt::process
