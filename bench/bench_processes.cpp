#include "bench/bench_processes.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <limits.h>
#include <unistd.h>

#include "tools/process/text_file.hpp"

namespace epochrt::bench {

namespace {

using std::chrono::milliseconds;

// The benchmarks' policy for every child.
child_process::options bench_child(std::vector<std::string> args,
                                   milliseconds stop_grace) {
  child_process::options opts;
  opts.argv = std::move(args);
  opts.parent_death_signal = SIGTERM;
  opts.stop_signal = SIGTERM;
  opts.stop_grace = stop_grace;
  return opts;
}

} // namespace

child_process start_child(std::vector<std::string> args,
                          const std::string& log_path, bool capture_stdout) {
  auto opts = bench_child(std::move(args), milliseconds{2000});
  opts.out = capture_stdout ? process::output::pipe()
                            : process::output::file(log_path);
  opts.err = process::output::file(log_path);
  std::string error;
  auto child = child_process::start(opts, error);
  if (!child)
    throw std::runtime_error(error);
  return std::move(*child);
}

int finish(child_process& child, milliseconds grace) {
  auto status = child.wait(grace);
  return status >= 0 ? status : child.stop();
}

child_process start_listening(std::vector<std::string> args,
                              const std::string& log_path,
                              milliseconds ready_timeout) {
  auto opts = bench_child(std::move(args), milliseconds{5000});
  opts.out = process::output::pipe();
  opts.err = process::output::file(log_path);
  std::string error;
  auto child = child_process::start(opts, error);
  if (child && child->await_listening(ready_timeout, error) != 0)
    return std::move(*child);
  throw std::runtime_error(error + "; its log:\n"
                           + process::tail_of(log_path, 10));
}

node_daemon
start_node_daemon(const std::string& binary, const std::string& root,
                  const std::string& log_path, milliseconds ready_timeout) {
  if (::access(binary.c_str(), X_OK) != 0)
    throw std::runtime_error(binary + ": " + std::strerror(errno)
                             + " (build the epochrt_cli target, or pass "
                               "--epochrt PATH)");
  node_daemon::options opts;
  opts.program = binary;
  opts.root = root;
  opts.log_path = log_path;
  opts.ready_timeout = ready_timeout;
  opts.launch = bench_child({}, milliseconds{5000});
  std::string error;
  auto daemon = node_daemon::start(opts, error);
  if (!daemon)
    throw std::runtime_error(error + "; its log:\n"
                             + process::tail_of(log_path, 10));
  return std::move(*daemon);
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

} // namespace epochrt::bench
