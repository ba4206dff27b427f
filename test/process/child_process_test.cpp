// child_process, the launcher of tools/process: how a child starts, what it
// reads and writes, how it ends and how it is made to end.

#define BOOST_TEST_MODULE process
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include "tools/process/child_process.hpp"
#include "tools/process/text_file.hpp"

using epochrt::process::child_process;
using epochrt::process::output;
using epochrt::process::read_text;
using epochrt::test::contains;
using epochrt::test::temp_dir;
using namespace std::chrono_literals;

namespace {

child_process::options shell(const std::string& script) {
  child_process::options o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

child_process start(const child_process::options& o) {
  std::string error;
  auto proc = child_process::start(o, error);
  BOOST_REQUIRE_MESSAGE(proc, error);
  return std::move(*proc);
}

// The first line the child writes to the file at `path`, once it is
// complete (at most 10 s); empty when none comes.
std::string first_line_of(const std::string& path) {
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(10ms)) {
    auto text = read_text(path);
    if (auto end = text.find('\n'); end != std::string::npos)
      return text.substr(0, end);
  }
  return {};
}

// True once no process `pid` exists (a zombie still counts as gone).
bool gone(pid_t pid) {
  for (auto deadline = std::chrono::steady_clock::now() + 5s;
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(10ms)) {
    auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty() || contains(stat, ") Z "))
      return true;
  }
  return false;
}

} // namespace

BOOST_AUTO_TEST_CASE(wait_gives_the_exit_code_of_a_child_that_exits) {
  auto proc = start(shell("exit 3"));
  BOOST_TEST(proc.wait(10s) == 3);
  BOOST_TEST_REQUIRE(proc.status().has_value());
  BOOST_TEST(proc.status()->exit_code == 3);
  BOOST_TEST(proc.status()->signal == 0);
  BOOST_TEST(!proc.running());
}

BOOST_AUTO_TEST_CASE(a_child_ended_by_a_signal_counts_as_128_plus_it) {
  auto proc = start(shell("kill -TERM $$"));
  BOOST_TEST(proc.wait(10s) == 128 + SIGTERM);
  BOOST_TEST(proc.status()->signal == SIGTERM);
  BOOST_TEST(describe(*proc.status()) == "killed by signal 15");
}

BOOST_AUTO_TEST_CASE(signal_reaches_a_running_child) {
  auto proc = start(shell("exec sleep 30"));
  BOOST_TEST(proc.running());
  proc.signal(SIGKILL);
  BOOST_TEST(proc.wait(10s) == 128 + SIGKILL);
}

BOOST_AUTO_TEST_CASE(wait_returns_minus_one_while_the_child_runs) {
  auto proc = start(shell("exec sleep 30"));
  BOOST_TEST(proc.wait(50ms) == -1);
  BOOST_TEST(proc.running());
  BOOST_TEST(!proc.status().has_value());
}

BOOST_AUTO_TEST_CASE(kill_ends_and_reaps_a_child_that_outlived_its_limit) {
  auto proc = start(shell("exec sleep 30"));
  BOOST_TEST(proc.wait(50ms) == -1);
  auto pid = proc.pid();
  proc.kill();
  BOOST_TEST(proc.status()->signal == SIGKILL);
  BOOST_TEST(proc.pid() == -1);
  BOOST_TEST(gone(pid));
}

BOOST_AUTO_TEST_CASE(stop_sends_its_signal_and_waits_for_the_child) {
  temp_dir dir;
  auto ready = dir.sub("ready");
  auto proc = start(shell("trap 'exit 7' TERM; echo ready > " + ready
                          + "; while :; do sleep 0.01; done"));
  BOOST_TEST_REQUIRE(first_line_of(ready) == "ready"); // the trap is set
  BOOST_TEST(proc.stop(SIGTERM, 10s) == 7);
}

BOOST_AUTO_TEST_CASE(stop_kills_a_child_that_ignores_its_signal) {
  temp_dir dir;
  auto ready = dir.sub("ready");
  auto proc = start(shell("trap '' TERM; echo ready > " + ready
                          + "; while :; do sleep 0.01; done"));
  BOOST_TEST_REQUIRE(first_line_of(ready) == "ready");
  BOOST_TEST(proc.stop(SIGTERM, 100ms) == 128 + SIGKILL);
}

BOOST_AUTO_TEST_CASE(the_destructor_kills_and_reaps_a_running_child) {
  pid_t pid = -1;
  {
    auto proc = start(shell("exec sleep 30"));
    pid = proc.pid();
  }
  BOOST_TEST(gone(pid));
}

BOOST_AUTO_TEST_CASE(the_destructor_uses_the_stop_signal_and_grace) {
  temp_dir dir;
  auto mark = dir.sub("stopped");
  {
    auto ready = dir.sub("ready");
    auto o = shell("trap 'echo term > " + mark + "; exit 0' TERM; echo ready > "
                   + ready + "; while :; do sleep 0.01; done");
    o.stop_signal = SIGTERM;
    o.stop_grace = 10s;
    auto proc = start(o);
    BOOST_TEST_REQUIRE(first_line_of(ready) == "ready");
  }
  BOOST_TEST(read_text(mark) == "term\n");
}

BOOST_AUTO_TEST_CASE(stdout_and_stderr_pipes_are_read_to_their_end) {
  auto o = shell("echo out; echo err >&2; echo more");
  o.out = output::pipe();
  o.err = output::pipe();
  auto proc = start(o);
  std::string out;
  std::string err;
  BOOST_TEST(proc.read_to_end(10s, out, err));
  BOOST_TEST(out == "out\nmore\n");
  BOOST_TEST(err == "err\n");
  BOOST_TEST(proc.wait(10s) == 0);
}

BOOST_AUTO_TEST_CASE(read_to_end_gives_up_after_its_timeout) {
  auto o = shell("echo early; exec sleep 30");
  o.out = output::pipe();
  auto proc = start(o);
  std::string out;
  std::string err;
  auto before = std::chrono::steady_clock::now();
  BOOST_TEST(!proc.read_to_end(200ms, out, err));
  BOOST_TEST((std::chrono::steady_clock::now() - before < 5s));
  BOOST_TEST(out == "early\n");
}

BOOST_AUTO_TEST_CASE(output_files_are_appended_to) {
  temp_dir dir;
  auto o = shell("echo out; echo err >&2");
  o.out = output::file(dir.sub("out"));
  o.err = output::file(dir.sub("err"));
  for (int i = 0; i < 2; ++i)
    BOOST_TEST(start(o).wait(10s) == 0);
  BOOST_TEST(read_text(dir.sub("out")) == "out\nout\n");
  BOOST_TEST(read_text(dir.sub("err")) == "err\nerr\n");
}

BOOST_AUTO_TEST_CASE(stdout_and_stderr_may_share_one_file) {
  temp_dir dir;
  auto o = shell("echo one; echo two >&2; echo three");
  o.out = output::file(dir.sub("log"));
  o.err = output::file(dir.sub("log"));
  BOOST_TEST(start(o).wait(10s) == 0);
  BOOST_TEST(read_text(dir.sub("log")) == "one\ntwo\nthree\n");
}

BOOST_AUTO_TEST_CASE(a_child_sees_eof_when_its_stdin_pipe_is_closed) {
  child_process::options o;
  o.argv = {"cat"};
  o.stdin_pipe = true;
  auto proc = start(o);
  BOOST_TEST(proc.wait(200ms) == -1); // cat waits for input
  proc.close_stdin();
  BOOST_TEST(proc.wait(10s) == 0);
}

BOOST_AUTO_TEST_CASE(without_a_pipe_stdin_is_empty) {
  child_process::options o;
  o.argv = {"cat"};
  o.out = output::pipe();
  auto proc = start(o);
  std::string out;
  std::string err;
  BOOST_TEST(proc.read_to_end(10s, out, err));
  BOOST_TEST(out.empty());
  BOOST_TEST(proc.wait(10s) == 0);
}

BOOST_AUTO_TEST_CASE(the_child_runs_in_cwd_with_the_added_environment) {
  temp_dir dir;
  auto o = shell("pwd; echo \"$EPOCHRT_TEST_VALUE\"; echo \"$HOME\"");
  o.cwd = dir.str();
  o.env = {"EPOCHRT_TEST_VALUE=added", "HOME=/replaced"};
  o.out = output::pipe();
  auto proc = start(o);
  std::string out;
  std::string err;
  BOOST_TEST(proc.read_to_end(10s, out, err));
  auto real = std::filesystem::canonical(dir.path()).string();
  BOOST_TEST(out == real + "\nadded\n/replaced\n");
}

BOOST_AUTO_TEST_CASE(a_program_that_cannot_run_is_an_error_of_start) {
  std::string error;
  child_process::options o;
  o.argv = {"/nonexistent/program"};
  BOOST_TEST(!child_process::start(o, error));
  BOOST_TEST(contains(error, "cannot execute /nonexistent/program"), error);
  o.argv = {"epochrt-no-such-program"};
  BOOST_TEST(!child_process::start(o, error));
  BOOST_TEST(contains(error, "cannot find epochrt-no-such-program in PATH"),
             error);
  o = shell("exit 0");
  o.cwd = "/nonexistent/dir";
  BOOST_TEST(!child_process::start(o, error));
  BOOST_TEST(contains(error, "cannot enter /nonexistent/dir"), error);
  o = shell("exit 0");
  o.out = output::file("/nonexistent/dir/out");
  BOOST_TEST(!child_process::start(o, error));
  BOOST_TEST(contains(error, "cannot open /nonexistent/dir/out"), error);
}

BOOST_AUTO_TEST_CASE(a_child_of_its_own_group_takes_the_group_along) {
  temp_dir dir;
  auto file = dir.sub("pid");
  auto o = shell("sleep 30 & echo $! > " + file + "; wait");
  o.own_group = true;
  auto proc = start(o);
  auto text = first_line_of(file);
  BOOST_TEST_REQUIRE(!text.empty());
  auto grandchild = static_cast<pid_t>(std::stol(text));
  proc.kill();
  BOOST_TEST(gone(grandchild));
}

BOOST_AUTO_TEST_CASE(the_parent_death_signal_comes_when_the_starter_ends) {
  std::optional<child_process> proc;
  std::thread starter{[&] {
    auto o = shell("exec sleep 30");
    o.parent_death_signal = SIGTERM;
    std::string error;
    proc = child_process::start(o, error);
  }};
  starter.join();
  BOOST_TEST_REQUIRE(proc.has_value());
  BOOST_TEST(proc->wait(10s) == 128 + SIGTERM);
}

BOOST_AUTO_TEST_CASE(await_listening_reads_the_port_of_the_line) {
  auto o = shell("echo starting; echo 'listening on 127.0.0.1:4242'; "
                 "exec sleep 30");
  o.out = output::pipe();
  auto proc = start(o);
  std::string error;
  BOOST_TEST(proc.await_listening(10s, error) == 4242, error);
  BOOST_TEST(proc.port() == 4242);
  BOOST_TEST(proc.running());
}

BOOST_AUTO_TEST_CASE(await_listening_says_when_the_child_ended_first) {
  auto o = shell("echo oops; exit 3");
  o.out = output::pipe();
  auto proc = start(o);
  std::string error;
  BOOST_TEST(proc.await_listening(10s, error) == 0);
  BOOST_TEST(contains(error, "ended (exit 3) before it printed"), error);
  BOOST_TEST(contains(error, "its stdout: oops"), error);
}

BOOST_AUTO_TEST_CASE(await_listening_gives_up_after_its_timeout) {
  auto o = shell("exec sleep 30");
  o.out = output::pipe();
  auto proc = start(o);
  std::string error;
  BOOST_TEST(proc.await_listening(200ms, error) == 0);
  BOOST_TEST(contains(error, "printed no \"listening on\" line in 200 ms"),
             error);
  BOOST_TEST(proc.running());
}
