#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tools/process/node_daemon.hpp"
#include "tools/sweep/run_result.hpp"
#include "tools/sweep_command.hpp"

namespace epochrt::cli::sweep {

/// The processes of a sweep: the daemons it runs for the nodes of
/// opts.daemon_nodes, the runs of the job and `ckpt verify`. Each of them
/// leads its own process group and dies with the sweep, however the sweep
/// ends (PR_SET_PDEATHSIG).
class sweep_processes {
public:
  /// A daemon the sweep runs for one node.
  struct daemon {
    std::string node;
    std::filesystem::path root;
    uint16_t port = 0;
    std::optional<process::node_daemon> proc;
    // How often it died while a run was going on.
    int deaths = 0;
    // Its host was lost: the node runs on what was the spare.
    bool moved = false;
  };

  /// `exe`: the `epochrt` program; `job_file`: the job, an absolute path.
  sweep_processes(const sweep_options& opts, std::string exe,
                  std::string job_file);

  const std::vector<daemon>& daemons() const noexcept {
    return daemons_;
  }

  /// Whether each daemon has a root of its own (a sweep that loses hosts):
  /// the checkpoints of the nodes on daemons are not in the case's
  /// directory then.
  bool own_hosts() const noexcept {
    return own_hosts_;
  }

  /// Starts the daemons of a case in `dir`, fresh (their root `dir`/cwd,
  /// their traces `dir`/NODE.trace), with `plan` for the one named
  /// `plan_for`. Returns an error text or empty.
  ///
  /// In a sweep that loses hosts (opts.faults has host_loss), each daemon
  /// runs on a host of its own (root `dir`/host-NODE) and every run keeps
  /// one copy of each checkpoint (--replicas 1), the reference runs too, so
  /// that the cases reach the copying points. `lost_host`: the case loses
  /// the host of that node: a spare stands by (`dir`/host-spare), the runs
  /// may move a node to it (--spare, --max-failures 1 at least), and when
  /// that node's daemon dies its root is deleted and the spare becomes its
  /// daemon.
  std::string start_daemons(const std::filesystem::path& dir,
                            const std::string& plan_for,
                            const std::optional<std::filesystem::path>& plan,
                            const std::string& lost_host = {});

  void stop_daemons();

  /// Replaces the daemon of `node`, if it runs (it may still have a plan),
  /// by one without a plan, on its port. Returns an error text or empty.
  std::string restart_without_plan(const std::string& node,
                                   const std::filesystem::path& dir);

  /// How often the daemon of `node` died while a run was going on.
  int deaths(const std::string& node) const;

  /// Run `k` of the job in `dir`/cwd, its stdout and stderr in
  /// `dir`/runK.out and runK.err, its --stats-json in runK.stats, with the
  /// plan and trace files when given;
  /// killed when it outlives opts.timeout_ms. Daemons that die meanwhile
  /// are restarted, fault-free, on their port.
  run_result run_job(const std::filesystem::path& dir, int k,
                     const std::optional<std::filesystem::path>& plan,
                     const std::optional<std::filesystem::path>& trace);

  /// Whether the lost host's node runs on the spare now (its daemon died
  /// since `start_daemons`).
  bool host_moved() const;

  /// Whether `epochrt ckpt verify` passes on `dir`/cwd/ckpt; `why` says
  /// why not.
  bool verifies(const std::filesystem::path& dir, std::string& why);

  /// In a sweep that loses hosts: whether `epochrt ckpt verify` passes on
  /// the daemons where the nodes run now, copies included (`--node` each,
  /// `--replicas 1`); `why` says why not. The daemons must run, without a
  /// plan.
  bool verifies_on_daemons(const std::filesystem::path& dir, std::string& why);

private:
  // Starts (or restarts, on its old port) the daemon of `d.node`, with the
  // plan and trace files when given. Returns an error text or empty.
  std::string start_daemon(daemon& d, const std::filesystem::path& dir,
                           const std::optional<std::filesystem::path>& plan,
                           const std::optional<std::filesystem::path>& trace);

  std::vector<std::string>
  run_argv(const std::filesystem::path& stats,
           const std::optional<std::filesystem::path>& plan,
           const std::optional<std::filesystem::path>& trace);

  void revive_daemons(const std::filesystem::path& dir);

  // Runs `argv`, a `ckpt verify`, in `dir`/cwd; its output in `dir`.
  bool run_verify(const std::filesystem::path& dir,
                  std::vector<std::string> argv, std::string& why);

  // The daemon of `lost_host_` died: its host is gone, its node now runs
  // on the spare.
  void lose_host(daemon& d);

  const sweep_options& opts_;
  std::string exe_;
  std::string job_file_;
  std::vector<daemon> daemons_;
  // The sweep loses hosts: each daemon has a root of its own.
  bool own_hosts_;
  // Set by start_daemons for a case that loses a host.
  std::string lost_host_;
  std::optional<daemon> spare_;
};

} // namespace epochrt::cli::sweep
