#pragma once

// How the benchmarks start their children (node daemons, CAF peers, Gloo
// workers, mpirun, a CAF client), on the launcher of tools/process: each
// child gets SIGTERM from the kernel if the benchmark dies without
// unwinding (a crash, a SIGKILL, an unhandled Ctrl-C), and SIGTERM, then
// SIGKILL, when it is dropped while it runs. A child that cannot be started
// is a std::runtime_error.

#include <chrono>
#include <string>
#include <vector>

#include "tools/process/child_process.hpp"
#include "tools/process/node_daemon.hpp"

namespace epochrt::bench {

using process::child_process;
using process::node_daemon;

/// Starts `args` (the program first, looked up in PATH when it has no
/// slash) with stderr appended to `log_path`, and stdout to a pipe that
/// read_to_end reads when `capture_stdout`, else to the log as well.
child_process start_child(std::vector<std::string> args,
                          const std::string& log_path, bool capture_stdout);

/// Waits at most `grace` for the child to exit, then stops it (SIGTERM, 2 s,
/// SIGKILL). Its exit code as the shell reports it (128 + signal), or -1.
int finish(child_process& child, std::chrono::milliseconds grace);

/// Starts `args` like start_child, with stdout read until its "listening on
/// HOST:PORT" line, at most `ready_timeout`: any program that prints that
/// line and exits on SIGTERM. The error says what it printed instead, and
/// the end of its log.
child_process start_listening(std::vector<std::string> args,
                              const std::string& log_path,
                              std::chrono::milliseconds ready_timeout);

/// Starts `binary node --listen 127.0.0.1:0 --checkpoint-root root`, its
/// stderr (its log) appended to `log_path`, and waits at most
/// `ready_timeout` for its port. stop() sends SIGTERM and gives it 5 s.
node_daemon start_node_daemon(const std::string& binary,
                              const std::string& root,
                              const std::string& log_path,
                              std::chrono::milliseconds ready_timeout);

/// The program `name` beside this one (the directory of /proc/self/exe,
/// else of `argv0`), as CMake puts them all in <build>/bin.
std::string sibling_program(const char* argv0, const std::string& name);

} // namespace epochrt::bench
