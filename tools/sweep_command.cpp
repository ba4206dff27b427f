#include "tools/sweep_command.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "tools/cli_output.hpp"
#include "tools/process/child_process.hpp"
#include "tools/process/node_daemon.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/messages/fault_draws.hpp>
#include <epochrt/messages/fault_plan.hpp>
#include <epochrt/messages/fault_point.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::cli {

namespace fs = std::filesystem;

namespace {

using process::child_process;
using process::node_daemon;
using process::read_text;

// Where a hit was made: the master (the `epochrt run` process) or the
// daemon of a node the sweep started.
const std::string master_process = "master";

// One line of a trace (fault_injector::trace_to), with the run it came
// from: 1 for the run from scratch, 2 for the rerun that resumes the
// finished job (the loading points are reached only there).
struct hit {
  int phase = 1;
  std::string process;
  fault_point point = fault_point::save_open;
  std::string node;
  int64_t epoch = -1;
  std::string detail;
  uint64_t n = 0;
};

struct sweep_case {
  size_t index = 0;
  // The hit's place in the reference runs' traces: cases are listed in
  // the order the job reaches them.
  size_t order = 0;
  hit where;
  fault_rule rule;
};

enum class outcome { recovered, clear_error, wrong, hung };

const char* outcome_name(outcome x) {
  switch (x) {
    case outcome::recovered:
      return "recovered";
    case outcome::clear_error:
      return "clear error";
    case outcome::wrong:
      return "WRONG";
    case outcome::hung:
      return "HUNG";
  }
  return "?";
}

// How a run of a program ended: by itself, or killed because it outlived
// its time limit.
struct run_status : process::exit_status {
  bool timed_out = false;
};

// "exit 0", "exit 1", "killed by signal 9", "timed out".
std::string describe(const run_status& status) {
  return status.timed_out ? "timed out" : process::describe(status);
}

struct run_result {
  run_status status;
  std::string out;
  std::string err;
};

std::vector<hit> read_trace(const fs::path& path, int phase,
                            const std::string& process) {
  std::vector<hit> hits;
  std::istringstream in{read_text(path)};
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      auto tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab - start));
      if (tab == std::string::npos)
        break;
      start = tab + 1;
    }
    if (fields.size() != 5)
      continue;
    auto point = fault_point_from_name(fields[0]);
    if (!point)
      continue;
    hit h;
    h.phase = phase;
    h.process = process;
    h.point = *point;
    h.node = fields[1];
    h.epoch = std::strtoll(fields[2].c_str(), nullptr, 10);
    h.detail = fields[3];
    h.n = std::strtoull(fields[4].c_str(), nullptr, 10);
    hits.push_back(std::move(h));
  }
  return hits;
}

// Exited 0, in time.
bool succeeded(const run_status& status) {
  return !status.timed_out && status.signal == 0 && status.exit_code == 0;
}

// The last line starting with "epochrt: error:" in `err`, or empty.
std::string error_line(const std::string& err) {
  std::string found;
  std::istringstream in{err};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("epochrt: error:", 0) == 0)
      found = line;
  return found;
}

std::string self_path() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string{"epochrt"} : path.string();
}

bool is_persistence_point(fault_point p) {
  auto name = info(p).name;
  return name.rfind("save.", 0) == 0 || name.rfind("commit.", 0) == 0
    || name.rfind("load.", 0) == 0;
}

// A point where a task's channel or collective message leaves or its
// results arrive: lost, doubled and killed messages are swept there too.
bool is_exchange_point(fault_point p) {
  return p == fault_point::channel_put || p == fault_point::channel_take
    || p == fault_point::channel_close || p == fault_point::collective_send
    || p == fault_point::collective_receive;
}

// Every child of the sweep leads its own process group, which it takes along
// when it ends or is killed, and dies with the sweep (PR_SET_PDEATHSIG),
// however the sweep ends: its group keeps it from the terminal's signals.
child_process::options sweep_child() {
  child_process::options o;
  o.own_group = true;
  o.parent_death_signal = SIGKILL;
  return o;
}

// A daemon the sweep runs for one node.
struct daemon {
  std::string node;
  fs::path root;
  uint16_t port = 0;
  std::optional<node_daemon> proc;
  // How often it died while a run was going on.
  int deaths = 0;
};

class sweeper {
public:
  sweeper(const sweep_options& opts, fs::path work, bool temporary,
          std::string exe)
    : opts_(opts), work_(std::move(work)), temporary_(temporary),
      exe_(std::move(exe)) {}

  int run();

private:
  // --- processes ---------------------------------------------------------

  // Starts (or restarts, on its old port) the daemon of `d.node`, with the
  // plan and trace files when given. Returns an error text or empty.
  std::string start_daemon(daemon& d, const fs::path& dir,
                           const std::optional<fs::path>& plan,
                           const std::optional<fs::path>& trace) {
    node_daemon::options o;
    o.program = exe_;
    o.root = d.root.string();
    o.port = d.port;
    o.args = {"--connection-timeout-ms",
              std::to_string(opts_.connection_timeout_ms), "-q"};
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

  std::vector<std::string> run_argv(const std::optional<fs::path>& plan,
                                    const std::optional<fs::path>& trace) {
    std::vector<std::string> argv{
      exe_,
      "run",
      job_file_,
      "--checkpoint-dir",
      "ckpt",
      "--max-failures",
      std::to_string(opts_.max_failures),
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
    if (opts_.secret_file) {
      argv.push_back("--secret-file");
      argv.push_back(*opts_.secret_file);
    }
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

  // One run of the job in `dir`/cwd; daemons that die meanwhile are
  // restarted, fault-free, on their port.
  run_result run_job(const fs::path& dir, int k,
                     const std::optional<fs::path>& plan,
                     const std::optional<fs::path>& trace) {
    auto out = dir / ("run" + std::to_string(k) + ".out");
    auto err = dir / ("run" + std::to_string(k) + ".err");
    auto o = sweep_child();
    o.argv = run_argv(plan, trace);
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
    return result;
  }

  void revive_daemons(const fs::path& dir) {
    for (auto& d : daemons_) {
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

  // Starts the daemons of a case in `dir`, fresh, with `plan` for the one
  // named `plan_for`.
  std::string start_daemons(const fs::path& dir, const std::string& plan_for,
                            const std::optional<fs::path>& plan) {
    for (auto& d : daemons_) {
      d.proc.reset();
      d.root = dir / "cwd";
      auto err = start_daemon(d, dir, d.node == plan_for ? plan : std::nullopt,
                              dir / (d.node + ".trace"));
      if (!err.empty())
        return err;
    }
    return {};
  }

  void stop_daemons() {
    for (auto& d : daemons_)
      d.proc.reset();
  }

  // --- checks ------------------------------------------------------------

  std::set<int64_t> committed(const fs::path& dir) {
    std::set<int64_t> result;
    file_metadata_handler handler{(dir / "cwd" / "ckpt").string()};
    if (auto md = handler.load())
      result.insert(md->committed_epochs.begin(), md->committed_epochs.end());
    return result;
  }

  // An epoch the master loaded, or asked a remote node to load, while it
  // was not committed. The master's trace is in the order things happened:
  // its commits (commit.rename.after: the metadata file now says so) and
  // its loads interleave there, so a run that recovers on its own and
  // loads what it committed itself is judged right. Daemons load only
  // when the master asks them (load_checkpoint).
  std::optional<int64_t> uncommitted_load(const std::vector<hit>& master,
                                          std::set<int64_t> committed) {
    for (auto& h : master) {
      if (h.point == fault_point::commit_rename_after) {
        if (h.detail == "write" || h.detail == "write_final")
          committed.insert(h.epoch);
        else if (h.detail == "uncommit")
          committed.erase(h.epoch);
        else if (h.detail == "reset")
          committed.clear();
        continue;
      }
      auto loads = h.point == fault_point::load_open
        || (h.point == fault_point::remote_send
            && h.detail == "load_checkpoint");
      if (loads && h.epoch >= 0 && committed.count(h.epoch) == 0)
        return h.epoch;
    }
    return std::nullopt;
  }

  // What the runs left in their working directory besides the checkpoint
  // directory (the daemons' roots are that directory too).
  std::string stray_files(const fs::path& dir) {
    std::error_code ec;
    std::string found;
    for (auto& entry : fs::directory_iterator(dir / "cwd", ec))
      if (entry.path().filename() != "ckpt")
        found += (found.empty() ? "" : ", ") + entry.path().filename().string();
    return found;
  }

  bool verifies(const fs::path& dir, std::string& why) {
    auto err = dir / "verify.err";
    auto o = sweep_child();
    o.argv = {exe_, "ckpt", "verify", (dir / "cwd" / "ckpt").string()};
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

  // --- the sweep ---------------------------------------------------------

  int reference();
  std::vector<sweep_case> make_cases();
  outcome run_case(const sweep_case& c, std::string& note);
  void keep_failure(const sweep_case& c, const std::string& note);

  const sweep_options& opts_;
  fs::path work_;
  // The work directory is the sweep's own, removed when no case failed.
  bool temporary_;
  std::string exe_;
  std::string job_file_;
  std::vector<daemon> daemons_;
  std::string reference_out_;
  std::vector<hit> hits_;
  int failures_kept_ = 0;
};

int sweeper::reference() {
  auto dir = work_ / "reference";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "cwd", ec);
  if (ec) {
    print_error("sweep: cannot create " + (dir / "cwd").string() + ": "
                + ec.message());
    return exit_failure;
  }
  for (int phase = 1; phase <= 2; ++phase) {
    // The daemons restart between the two runs, as they do in a case.
    if (auto err = start_daemons(dir, {}, std::nullopt); !err.empty()) {
      print_error("sweep: " + err);
      return exit_failure;
    }
    auto suffix = ".trace." + std::to_string(phase);
    auto r = run_job(dir, phase, std::nullopt, dir / ("master" + suffix));
    stop_daemons();
    for (auto& d : daemons_)
      fs::rename(dir / (d.node + ".trace"), dir / (d.node + suffix), ec);
    if (!succeeded(r.status)) {
      auto line = error_line(r.err);
      print_error(std::string{"sweep: "}
                  + (phase == 1 ? "the fault-free run failed ("
                                : "rerunning the finished job failed (")
                  + describe(r.status) + ")" + (line.empty() ? "" : ": " + line)
                  + "; its output is in " + dir.string());
      return exit_failure;
    }
    if (phase == 2 && r.out != reference_out_) {
      print_error("sweep: rerunning the finished job did not give the same "
                  "result: the job is not deterministic, and a sweep cannot "
                  "judge it");
      return exit_failure;
    }
    reference_out_ = r.out;
    auto add = [&](std::vector<hit> more) {
      hits_.insert(hits_.end(), std::make_move_iterator(more.begin()),
                   std::make_move_iterator(more.end()));
    };
    add(read_trace(dir / ("master" + suffix), phase, master_process));
    for (auto& d : daemons_)
      add(read_trace(dir / (d.node + suffix), phase, d.node));
  }
  std::cout << "reference: " << one_line(reference_out_) << " (" << hits_.size()
            << " injection points reached)\n";
  return exit_ok;
}

std::vector<sweep_case> sweeper::make_cases() {
  auto wanted = [&](fault_kind kind) {
    if (opts_.faults.empty())
      return true;
    return std::find(opts_.faults.begin(), opts_.faults.end(),
                     std::string{fault_kind_name(kind)})
      != opts_.faults.end();
  };
  // The last three only at the exchange points: what a lost, doubled or
  // killed message does to tasks that wait for each other.
  const fault_kind kinds[] = {
    fault_kind::crash,       fault_kind::io_error,  fault_kind::corrupt_write,
    fault_kind::short_write, fault_kind::partition, fault_kind::drop,
    fault_kind::duplicate,   fault_kind::kill_node};
  auto exchange_only = [](fault_kind kind) {
    return kind == fault_kind::drop || kind == fault_kind::duplicate
      || kind == fault_kind::kill_node;
  };
  const int errors[] = {EIO, ENOSPC, EACCES};
  std::map<fault_kind, std::vector<sweep_case>> by_kind;
  size_t io_errors = 0;
  std::set<std::string> remote;
  for (auto& d : daemons_)
    remote.insert(d.node);
  for (auto& n : opts_.remote_nodes)
    remote.insert(n.substr(0, n.find('=')));
  for (size_t order = 0; order < hits_.size(); ++order) {
    auto& h = hits_[order];
    for (auto kind : kinds) {
      if (!wanted(kind) || (info(h.point).kinds & kind_bit(kind)) == 0)
        continue;
      if (kind == fault_kind::io_error && !is_persistence_point(h.point))
        continue;
      if (exchange_only(kind) && !is_exchange_point(h.point))
        continue;
      // A partition is between the master and a remote node.
      if (kind == fault_kind::partition
          && (h.process != master_process || remote.count(h.node) == 0))
        continue;
      sweep_case c;
      c.order = order;
      c.where = h;
      c.rule.point = h.point;
      c.rule.kind = kind;
      if (!h.node.empty())
        c.rule.node = h.node;
      c.rule.hit = h.n;
      if (kind == fault_kind::io_error)
        c.rule.error = errors[io_errors++ % 3];
      if (kind == fault_kind::partition)
        c.rule.ms = static_cast<uint64_t>(3 * opts_.connection_timeout_ms);
      by_kind[kind].push_back(std::move(c));
    }
  }
  size_t total = 0;
  for (auto& [kind, cases] : by_kind)
    total += cases.size();
  auto limit = static_cast<size_t>(opts_.max_runs);
  std::vector<sweep_case> chosen;
  if (total <= limit) {
    for (auto kind : kinds)
      for (auto& c : by_kind[kind])
        chosen.push_back(c);
  } else {
    // A seeded sample that keeps every kind: shuffle each kind's cases,
    // then take one of each kind in turn. Partitions last the longest:
    // at most a tenth of the runs.
    fault_draws draws{opts_.seed};
    for (auto& [kind, cases] : by_kind) {
      for (size_t i = cases.size(); i > 1; --i)
        std::swap(cases[i - 1], cases[draws.below(i)]);
      if (kind == fault_kind::partition)
        cases.resize(std::min(cases.size(), std::max<size_t>(limit / 10, 2)));
    }
    std::map<fault_kind, size_t> taken;
    while (chosen.size() < limit) {
      bool any = false;
      for (auto kind : kinds) {
        auto& cases = by_kind[kind];
        if (taken[kind] < cases.size() && chosen.size() < limit) {
          chosen.push_back(cases[taken[kind]++]);
          any = true;
        }
      }
      if (!any)
        break;
    }
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const sweep_case& x, const sweep_case& y) {
                     return x.order < y.order;
                   });
  for (size_t i = 0; i < chosen.size(); ++i)
    chosen[i].index = i + 1;
  std::cout << "cases: " << chosen.size() << " of " << total
            << (chosen.size() < total
                  ? " (sampled with seed " + std::to_string(opts_.seed) + ")"
                  : std::string{})
            << '\n';
  return chosen;
}

outcome sweeper::run_case(const sweep_case& c, std::string& note) {
  auto dir = work_ / ("case-" + std::to_string(c.index));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "cwd", ec);
  if (ec) {
    note = "cannot create " + (dir / "cwd").string() + ": " + ec.message();
    return outcome::wrong;
  }
  fault_plan plan;
  plan.seed = opts_.seed;
  plan.faults.push_back(c.rule);
  auto plan_path = dir / "plan.json";
  {
    std::ofstream out{plan_path};
    out << to_json(plan);
    if (!out.flush()) {
      note = "cannot write " + plan_path.string();
      return outcome::wrong;
    }
  }
  auto on_master = c.where.process == master_process;
  auto kind = c.rule.kind;
  auto silent
    = kind == fault_kind::corrupt_write || kind == fault_kind::short_write;
  int k = 0;
  // What the runs showed so far; set where a run breaks an invariant.
  outcome worst = outcome::recovered;
  // Only the plan's own crash may end a run by a signal: SIGKILL, in the
  // run that carries the plan, after the plan's line on stderr.
  auto planned_kill = [&](const run_result& r, bool injected) {
    return injected && on_master && kind == fault_kind::crash
      && r.status.signal == SIGKILL
      && r.err.find("epochrt: fault plan: crash at") != std::string::npos;
  };
  auto fail_on = [&](const run_result& r, bool injected) {
    if (r.status.timed_out) {
      note = "run " + std::to_string(k) + " outlived "
        + std::to_string(opts_.timeout_ms) + " ms";
      worst = outcome::hung;
      return true;
    }
    if (r.status.signal == 0 && r.status.exit_code == 0
        && r.out != reference_out_) {
      note = "run " + std::to_string(k) + " exit 0 with " + one_line(r.out);
      worst = outcome::wrong;
      return true;
    }
    if (r.status.signal != 0 && !planned_kill(r, injected)) {
      note = "run " + std::to_string(k) + " " + describe(r.status);
      worst = outcome::wrong;
      return true;
    }
    if (r.status.signal == 0 && r.status.exit_code != 0
        && error_line(r.err).empty()) {
      note = "run " + std::to_string(k) + " " + describe(r.status)
        + " without an error line";
      worst = outcome::wrong;
      return true;
    }
    // The command is the same every time and was fine for the reference:
    // bad input now means the plan was refused, and nothing was tested.
    if (r.status.signal == 0 && r.status.exit_code == 2) {
      note = "run " + std::to_string(k) + ": " + one_line(error_line(r.err));
      worst = outcome::wrong;
      return true;
    }
    return false;
  };
  auto one_run
    = [&](const std::optional<fs::path>& p) -> std::optional<run_result> {
    ++k;
    auto before = committed(dir);
    auto trace = dir / ("master.trace." + std::to_string(k));
    auto r = run_job(dir, k, on_master ? p : std::nullopt, trace);
    if (auto e
        = uncommitted_load(read_trace(trace, 0, master_process), before)) {
      note = "run " + std::to_string(k) + " loaded epoch " + std::to_string(*e)
        + ", which was not committed";
      worst = outcome::wrong;
      return std::nullopt;
    }
    if (fail_on(r, p.has_value()))
      return std::nullopt;
    return r;
  };
  auto finish = [&](outcome o) {
    stop_daemons();
    return o;
  };
  // Setup: the daemon with the plan, and for a loading point the run from
  // scratch that the resumed run loads.
  auto plan_for = on_master ? std::string{} : c.where.process;
  if (c.where.phase == 2) {
    if (auto err = start_daemons(dir, {}, std::nullopt); !err.empty()) {
      note = err;
      return finish(outcome::wrong);
    }
    auto r = one_run(std::nullopt);
    if (!r)
      return finish(worst);
  }
  if (auto err = start_daemons(dir, plan_for, plan_path); !err.empty()) {
    note = err;
    return finish(outcome::wrong);
  }
  auto deaths = [&] {
    int n = 0;
    for (auto& d : daemons_)
      if (d.node == plan_for)
        n += d.deaths;
    return n;
  };
  auto deaths_before = deaths();
  auto injected = one_run(plan_path);
  if (!injected)
    return finish(worst);
  auto struck
    = on_master ? injected->status.signal == SIGKILL : deaths() > deaths_before;
  // The reruns are fault-free: a daemon that still has the plan (its rule
  // may not have struck yet) is replaced by one without.
  for (auto& d : daemons_)
    if (d.node == plan_for && d.proc) {
      d.proc.reset();
      if (auto err
          = start_daemon(d, dir, std::nullopt, dir / (d.node + ".trace"));
          !err.empty()) {
        note = err;
        return finish(outcome::wrong);
      }
    }
  auto last = *injected;
  // The same command again, fault-free, until it ends (a crash needs one
  // rerun; a lost daemon may need another). After silent corruption the
  // job runs once more anyway: resuming must load what was written.
  auto ended = [](const run_result& r) {
    return succeeded(r.status);
  };
  for (int rerun = 0; rerun < 4 && (!ended(last) || (silent && rerun == 0));
       ++rerun) {
    auto r = one_run(std::nullopt);
    if (!r)
      return finish(worst);
    last = *r;
    if (!ended(last) && !error_line(last.err).empty()
        && kind != fault_kind::crash && kind != fault_kind::partition
        && rerun >= 1)
      break;
  }
  stop_daemons();
  if (auto stray = stray_files(dir); !stray.empty()) {
    note = "wrote outside the checkpoint directory: " + stray;
    return outcome::wrong;
  }
  // Silent corruption is there to be found, and may be found only by
  // verifying; the checkpoints of nodes on the user's own daemons are not
  // in this directory.
  std::string why;
  if (!silent && opts_.remote_nodes.empty() && !verifies(dir, why)) {
    note = "a committed epoch does not verify: " + why;
    return outcome::wrong;
  }
  if (!ended(last)) {
    note = one_line(error_line(last.err));
    // A crash or a partition must never keep a job from finishing.
    if (kind == fault_kind::crash || kind == fault_kind::partition)
      return outcome::wrong;
    return outcome::clear_error;
  }
  if (k > 1)
    note = std::to_string(k) + " runs";
  // The plan names a hit of the reference runs; a job whose hits come in
  // another order may not reach it.
  if (struck && !on_master)
    note += std::string{note.empty() ? "" : "; "} + "daemon restarted";
  if (!struck && kind == fault_kind::crash)
    note += std::string{note.empty() ? "" : "; "} + "the crash never struck";
  return outcome::recovered;
}

void sweeper::keep_failure(const sweep_case& c, const std::string& note) {
  auto dir = work_ / "failures";
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto base = dir / ("case-" + std::to_string(c.index));
  fs::copy_file(work_ / ("case-" + std::to_string(c.index)) / "plan.json",
                base.string() + ".json", fs::copy_options::overwrite_existing,
                ec);
  std::ofstream out{base.string() + ".txt"};
  auto on_master = c.where.process == master_process;
  out << "outcome: " << note << "\n"
      << "plan: " << base.string() << ".json, for "
      << (on_master ? "the master: epochrt run ... --fault-plan PLAN"
                    : "the daemon of node " + c.where.process
              + ": epochrt node ... --fault-plan PLAN")
      << "\n"
      << (c.where.phase == 2 ? "the plan applies to the second run of the job "
                               "(the first, fault-free, runs it from scratch)\n"
                             : "")
      << "case directory: "
      << (work_ / ("case-" + std::to_string(c.index))).string() << "\n";
  ++failures_kept_;
}

int sweeper::run() {
  // A work directory used before holds another sweep's cases: what is
  // judged here must be this sweep's alone.
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(work_, ec)) {
    auto name = entry.path().filename().string();
    if (name == "reference" || name == "failures"
        || name.rfind("case-", 0) == 0)
      fs::remove_all(entry.path(), ec);
  }
  job_file_ = fs::absolute(opts_.job_file).string();
  for (auto& name : opts_.daemon_nodes) {
    daemon d;
    d.node = name;
    daemons_.push_back(std::move(d));
  }
  if (!opts_.remote_nodes.empty())
    std::cout << "note: the nodes on your daemons (--node) keep their "
                 "checkpoints under those daemons' roots, the same for every "
                 "case; `ckpt verify` is not run\n";
  if (auto rc = reference(); rc != exit_ok)
    return rc;
  auto cases = make_cases();
  std::map<outcome, int> counts;
  std::cout << std::left << std::setw(5) << "case" << std::setw(22) << "point"
            << std::setw(12) << "where" << std::setw(7) << "epoch"
            << std::setw(6) << "hit" << std::setw(20) << "fault"
            << std::setw(12) << "outcome"
            << "note\n";
  for (auto& c : cases) {
    std::string note;
    auto result = run_case(c, note);
    ++counts[result];
    auto where = c.where.process == master_process
      ? (c.where.node.empty() ? "master" : c.where.node)
      : c.where.node + "@d";
    auto fault = std::string{fault_kind_name(c.rule.kind)};
    if (c.rule.kind == fault_kind::io_error)
      fault += " " + errno_name(c.rule.error);
    if (c.where.phase == 2)
      fault += " (r)";
    std::cout << std::left << std::setw(5) << c.index << std::setw(22)
              << info(c.rule.point).name << std::setw(12) << where
              << std::setw(7)
              << (c.where.epoch >= 0 ? std::to_string(c.where.epoch) : "-")
              << std::setw(6) << c.where.n << std::setw(20) << fault
              << std::setw(12) << outcome_name(result) << note << std::endl;
    if (result == outcome::wrong || result == outcome::hung)
      keep_failure(c, note);
    else
      fs::remove_all(work_ / ("case-" + std::to_string(c.index)), ec);
  }
  if (failures_kept_ > 0)
    std::cout << "failing cases: " << failures_kept_ << " plan files in "
              << (work_ / "failures").string() << '\n';
  if (!temporary_ || failures_kept_ > 0)
    std::cout << "work directory: " << work_.string() << '\n';
  std::cout << "sweep: " << cases.size() << " runs, "
            << counts[outcome::recovered] << " recovered, "
            << counts[outcome::clear_error] << " clear errors, "
            << counts[outcome::wrong] << " wrong, " << counts[outcome::hung]
            << " hung" << std::endl;
  return counts[outcome::wrong] + counts[outcome::hung] == 0 ? exit_ok
                                                             : exit_failure;
}

} // namespace

int run_sweep(const sweep_options& opts) {
  // The job is checked here, so that a bad one is bad input, not a failed
  // reference run.
  op_registry ops;
  if (auto err = add_builtin_ops(ops)) {
    print_error(describe(err));
    return exit_failure;
  }
  auto job = load_job_file(opts.job_file, ops);
  if (!job) {
    print_error(one_line(error_text(job.error())));
    return exit_bad_input;
  }
  auto nodes = job->nodes();
  std::set<std::string> placed;
  for (auto& name : opts.daemon_nodes) {
    if (std::find(nodes.begin(), nodes.end(), name) == nodes.end()) {
      print_error("--daemon " + name + ": the job has no node '" + name + "'");
      return exit_bad_input;
    }
    if (!placed.insert(name).second) {
      print_error("--daemon " + name + ": given twice");
      return exit_bad_input;
    }
  }
  for (auto& text : opts.remote_nodes)
    if (!placed.insert(text.substr(0, text.find('='))).second) {
      print_error("--node " + text + ": the node is placed twice");
      return exit_bad_input;
    }
  for (auto& kind : opts.faults) {
    auto k = fault_kind_from_name(kind);
    if (!k
        || (*k != fault_kind::crash && *k != fault_kind::io_error
            && *k != fault_kind::corrupt_write && *k != fault_kind::short_write
            && *k != fault_kind::partition && *k != fault_kind::drop
            && *k != fault_kind::duplicate && *k != fault_kind::kill_node)) {
      print_error("--faults " + kind
                  + ": expected crash, io_error, corrupt_write, short_write, "
                    "partition, drop, duplicate or kill_node");
      return exit_bad_input;
    }
  }
  fs::path work;
  bool temporary = !opts.work_dir;
  std::error_code ec;
  if (opts.work_dir) {
    work = fs::absolute(*opts.work_dir);
    fs::create_directories(work, ec);
    if (ec) {
      print_error("--work-dir " + *opts.work_dir + ": " + ec.message());
      return exit_bad_input;
    }
  } else {
    auto tmp = std::getenv("TMPDIR");
    auto pattern = (fs::path{tmp != nullptr && *tmp != '\0' ? tmp : "/tmp"}
                    / "epochrt-sweep-XXXXXX")
                     .string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      print_error("cannot create a work directory under $TMPDIR: "
                  + std::string{std::strerror(errno)});
      return exit_failure;
    }
    work = pattern;
  }
  sweep_options absolute = opts;
  if (absolute.secret_file)
    absolute.secret_file = fs::absolute(*absolute.secret_file).string();
  sweeper s{absolute, work, temporary, self_path()};
  auto rc = s.run();
  if (temporary && rc == exit_ok)
    fs::remove_all(work, ec);
  return rc;
}

} // namespace epochrt::cli
