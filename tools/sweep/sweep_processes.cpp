#include "tools/sweep/sweep_processes.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tools/cli_output.hpp"
#include "tools/process/text_file.hpp"

namespace epochrt::cli::sweep {

namespace fs = std::filesystem;

using process::child_process;
using process::node_daemon;
using process::read_text;

namespace {

// Every child of the sweep leads its own process group, which it takes along
// when it ends or is killed, and dies with the sweep (PR_SET_PDEATHSIG),
// however the sweep ends: its group keeps it from the terminal's signals.
child_process::options sweep_child() {
  child_process::options o;
  o.own_group = true;
  o.parent_death_signal = SIGKILL;
  return o;
}

// The nodes named by the `node_moved` lines of the --stats-json file at
// `path`. A run killed while writing leaves its last line cut short: such
// a line is not one of them.
std::vector<std::string> moved_nodes(const fs::path& path) {
  std::vector<std::string> result;
  std::istringstream in{read_text(path)};
  for (std::string line; std::getline(in, line);) {
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_object() && doc.value("type", "") == "node_moved")
      result.push_back(doc.value("node", ""));
  }
  return result;
}

} // namespace

sweep_processes::sweep_processes(const sweep_options& opts, std::string exe,
                                 std::string job_file)
  : opts_(opts), exe_(std::move(exe)), job_file_(std::move(job_file)),
    own_hosts_(std::find(opts.faults.begin(), opts.faults.end(), "host_loss")
               != opts.faults.end()) {
  for (auto& name : opts_.daemon_nodes) {
    daemon d;
    d.node = name;
    daemons_.push_back(std::move(d));
  }
}

std::string
sweep_processes::start_daemon(daemon& d, const fs::path& dir,
                              const std::optional<fs::path>& plan,
                              const std::optional<fs::path>& trace) {
  node_daemon::options o;
  o.program = exe_;
  o.root = d.root.string();
  o.port = d.port;
  o.args = {"--connection-timeout-ms",
            std::to_string(opts_.connection_timeout_ms), "-q"};
  // Every daemon of a case shares the case's root, each with its own
  // nodes, like the master's working directory: none may lock it. Unless
  // the sweep loses hosts: each has one of its own then.
  if (!own_hosts_)
    o.args.push_back("--shared-root");
  if (opts_.secret_file) {
    o.args.push_back("--secret-file");
    o.args.push_back(*opts_.secret_file);
  }
  if (plan) {
    o.args.push_back("--fault-plan");
    o.args.push_back(plan->string());
  }
  if (trace) {
    o.args.push_back("--fault-trace");
    o.args.push_back(trace->string());
  }
  o.log_path = (dir / (d.node + ".err")).string();
  o.ready_timeout = std::chrono::seconds(10);
  o.launch = sweep_child();
  // The old port may be held for a moment by the daemon that just died.
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::string error;
    auto why = node_daemon::failure::cannot_start;
    d.proc = node_daemon::start(o, error, &why);
    if (d.proc) {
      d.port = d.proc->port();
      return {};
    }
    if (why == node_daemon::failure::cannot_start)
      return error;
    if (why == node_daemon::failure::silent)
      return "the daemon of node " + d.node + " did not start listening";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "the daemon of node " + d.node + " could not listen on port "
    + std::to_string(d.port) + " again";
}

std::vector<std::string>
sweep_processes::run_argv(const fs::path& stats,
                          const std::optional<fs::path>& plan,
                          const std::optional<fs::path>& trace) {
  std::vector<std::string> argv{
    exe_,
    "run",
    job_file_,
    "--checkpoint-dir",
    "ckpt",
    "--max-failures",
    std::to_string(lost_host_.empty() ? opts_.max_failures
                                      : std::max(opts_.max_failures, 1)),
    "--connection-timeout-ms",
    std::to_string(opts_.connection_timeout_ms),
    "--reconnect-timeout-ms",
    std::to_string(std::max<int64_t>(opts_.timeout_ms / 4, 1000))};
  if (opts_.keep_last > 0) {
    argv.push_back("--keep-last");
    argv.push_back(std::to_string(opts_.keep_last));
  }
  if (opts_.full_every > 0) {
    argv.push_back("--full-every");
    argv.push_back(std::to_string(opts_.full_every));
  }
  for (auto& f : opts_.fetches) {
    argv.push_back("--fetch");
    argv.push_back(f);
  }
  for (auto& n : opts_.remote_nodes) {
    argv.push_back("--node");
    argv.push_back(n);
  }
  for (auto& d : daemons_) {
    argv.push_back("--node");
    argv.push_back(d.node + "=127.0.0.1:" + std::to_string(d.port));
  }
  if (own_hosts_) {
    argv.push_back("--replicas");
    argv.push_back("1");
    if (spare_ && spare_->proc) {
      argv.push_back("--spare");
      argv.push_back("127.0.0.1:" + std::to_string(spare_->port));
    }
  }
  if (opts_.secret_file) {
    argv.push_back("--secret-file");
    argv.push_back(*opts_.secret_file);
  }
  argv.push_back("--stats-json");
  argv.push_back(stats.string());
  if (plan) {
    argv.push_back("--fault-plan");
    argv.push_back(plan->string());
  }
  if (trace) {
    argv.push_back("--fault-trace");
    argv.push_back(trace->string());
  }
  return argv;
}

run_result sweep_processes::run_job(const fs::path& dir, int k,
                                    const std::optional<fs::path>& plan,
                                    const std::optional<fs::path>& trace) {
  auto out = dir / ("run" + std::to_string(k) + ".out");
  auto err = dir / ("run" + std::to_string(k) + ".err");
  auto stats = dir / ("run" + std::to_string(k) + ".stats");
  auto o = sweep_child();
  o.argv = run_argv(stats, plan, trace);
  o.cwd = (dir / "cwd").string();
  o.out = process::output::file(out.string());
  o.err = process::output::file(err.string());
  run_result result;
  std::string error;
  auto proc = child_process::start(o, error);
  if (!proc) {
    result.err = "epochrt: error: cannot start a run: " + error;
    result.status.exit_code = 1;
    return result;
  }
  auto deadline = std::chrono::steady_clock::now()
    + std::chrono::milliseconds(opts_.timeout_ms);
  for (;;) {
    if (!proc->running()) {
      static_cast<process::exit_status&>(result.status) = *proc->status();
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      proc->kill();
      result.status.timed_out = true;
      break;
    }
    revive_daemons(dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  result.out = read_text(out);
  result.err = read_text(err);
  result.moved_nodes = moved_nodes(stats);
  return result;
}

void sweep_processes::lose_host(daemon& d) {
  std::error_code ec;
  fs::remove_all(d.root, ec);
  d.root = spare_->root;
  d.port = spare_->port;
  d.proc = std::move(spare_->proc);
  d.moved = true;
  spare_.reset();
}

void sweep_processes::revive_daemons(const fs::path& dir) {
  for (auto& d : daemons_) {
    if (d.proc && !d.proc->running() && d.node == lost_host_ && spare_
        && spare_->proc) {
      ++d.deaths;
      lose_host(d);
      continue;
    }
    if (d.proc && !d.proc->running()) {
      d.proc.reset();
      ++d.deaths;
      if (auto err
          = start_daemon(d, dir, std::nullopt, dir / (d.node + ".trace"));
          !err.empty())
        std::cerr << "epochrt: sweep: " << err << '\n';
    }
  }
}

std::string sweep_processes::start_daemons(const fs::path& dir,
                                           const std::string& plan_for,
                                           const std::optional<fs::path>& plan,
                                           const std::string& lost_host) {
  stop_daemons();
  lost_host_ = lost_host;
  // Each daemon creates its root, and fails to start, saying why, when
  // it cannot.
  auto host_root = [&](const std::string& name) {
    return dir / ("host-" + name);
  };
  for (auto& d : daemons_) {
    d.moved = false;
    d.root = own_hosts_ ? host_root(d.node) : dir / "cwd";
    auto err = start_daemon(d, dir, d.node == plan_for ? plan : std::nullopt,
                            dir / (d.node + ".trace"));
    if (!err.empty())
      return err;
  }
  if (!lost_host.empty()) {
    spare_.emplace();
    spare_->node = "spare";
    spare_->root = host_root("spare");
    if (auto err
        = start_daemon(*spare_, dir, std::nullopt, dir / "spare.trace");
        !err.empty())
      return err;
  }
  return {};
}

void sweep_processes::stop_daemons() {
  for (auto& d : daemons_)
    d.proc.reset();
  spare_.reset();
}

std::string sweep_processes::restart_without_plan(const std::string& node,
                                                  const fs::path& dir) {
  for (auto& d : daemons_)
    if (d.node == node && d.proc && !d.moved) {
      d.proc.reset();
      if (auto err
          = start_daemon(d, dir, std::nullopt, dir / (d.node + ".trace"));
          !err.empty())
        return err;
    }
  return {};
}

bool sweep_processes::host_moved() const {
  for (auto& d : daemons_)
    if (d.moved)
      return true;
  return false;
}

int sweep_processes::deaths(const std::string& node) const {
  int n = 0;
  for (auto& d : daemons_)
    if (d.node == node)
      n += d.deaths;
  return n;
}

bool sweep_processes::verifies(const fs::path& dir, std::string& why) {
  return run_verify(
    dir, {exe_, "ckpt", "verify", (dir / "cwd" / "ckpt").string()}, why);
}

bool sweep_processes::verifies_on_daemons(const fs::path& dir,
                                          std::string& why) {
  // The directory by the name the runs gave it, from where they ran: the
  // daemons place databases by that name.
  std::vector<std::string> argv{exe_, "ckpt", "verify", "ckpt"};
  for (auto& d : daemons_) {
    argv.push_back("--node");
    argv.push_back(d.node + "=127.0.0.1:" + std::to_string(d.port));
  }
  argv.push_back("--replicas");
  argv.push_back("1");
  argv.push_back("--connection-timeout-ms");
  argv.push_back(std::to_string(opts_.connection_timeout_ms));
  if (opts_.secret_file) {
    argv.push_back("--secret-file");
    argv.push_back(*opts_.secret_file);
  }
  return run_verify(dir, std::move(argv), why);
}

bool sweep_processes::run_verify(const fs::path& dir,
                                 std::vector<std::string> argv,
                                 std::string& why) {
  auto err = dir / "verify.err";
  auto o = sweep_child();
  o.argv = std::move(argv);
  o.cwd = (dir / "cwd").string();
  o.out = process::output::file((dir / "verify.out").string());
  o.err = process::output::file(err.string());
  std::string error;
  auto proc = child_process::start(o, error);
  if (!proc) {
    why = error;
    return false;
  }
  run_status status;
  if (proc->wait(std::chrono::milliseconds(opts_.timeout_ms)) < 0) {
    proc->kill();
    status.timed_out = true;
  } else {
    static_cast<process::exit_status&>(status) = *proc->status();
  }
  if (succeeded(status))
    return true;
  why = one_line(error_line(read_text(err)));
  if (why.empty())
    why = describe(status);
  return false;
}

} // namespace epochrt::cli::sweep
