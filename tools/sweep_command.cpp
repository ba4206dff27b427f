#include "tools/sweep_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include <unistd.h>

#include "tools/cli_output.hpp"
#include "tools/sweep/case_plan.hpp"
#include "tools/sweep/reference.hpp"
#include "tools/sweep/sweep_processes.hpp"
#include "tools/sweep/sweep_report.hpp"
#include "tools/sweep/trial.hpp"
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::cli {

namespace fs = std::filesystem;

namespace {

std::string self_path() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string{"epochrt"} : path.string();
}

// The sweep itself, its arguments checked: the reference runs, then every
// case, reported as it ends.
int sweep_cases(const sweep_options& opts, const fs::path& work,
                bool temporary) {
  // A work directory used before holds another sweep's cases: what is
  // judged here must be this sweep's alone.
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(work, ec)) {
    auto name = entry.path().filename().string();
    if (name == "reference" || name == "failures"
        || name.rfind("case-", 0) == 0)
      fs::remove_all(entry.path(), ec);
  }
  sweep::sweep_processes procs{opts, self_path(),
                               fs::absolute(opts.job_file).string()};
  if (!opts.remote_nodes.empty())
    std::cout << "note: the nodes on your daemons (--node) keep their "
                 "checkpoints under those daemons' roots, the same for every "
                 "case; `ckpt verify` is not run\n";
  std::string reference_out;
  std::vector<sweep::hit> hits;
  if (auto rc = sweep::run_reference(work, procs, reference_out, hits);
      rc != exit_ok)
    return rc;
  auto plan = sweep::plan_cases(hits, opts);
  sweep::sweep_report report{work, temporary};
  report.cases(plan, opts.seed);
  report.header();
  for (auto& c : plan.cases) {
    std::string note;
    auto result = sweep::run_trial(c, work, opts, reference_out, procs, note);
    report.row(c, result, note);
  }
  return report.finish();
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
    if (kind == "host_loss") {
      // One copy of each checkpoint needs a second daemon to hold it.
      if (opts.daemon_nodes.size() < 2) {
        print_error("--faults host_loss needs at least two --daemon nodes: "
                    "a lost host's checkpoints come back from a copy on "
                    "another");
        return exit_bad_input;
      }
      continue;
    }
    auto k = fault_kind_from_name(kind);
    if (!k
        || (*k != fault_kind::crash && *k != fault_kind::io_error
            && *k != fault_kind::corrupt_write && *k != fault_kind::short_write
            && *k != fault_kind::partition && *k != fault_kind::drop
            && *k != fault_kind::duplicate && *k != fault_kind::kill_node)) {
      print_error("--faults " + kind
                  + ": expected crash, io_error, corrupt_write, short_write, "
                    "partition, drop, duplicate, kill_node or host_loss");
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
  auto rc = sweep_cases(absolute, work, temporary);
  if (temporary && rc == exit_ok)
    fs::remove_all(work, ec);
  return rc;
}

} // namespace epochrt::cli
