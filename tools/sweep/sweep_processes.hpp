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
  };

  /// `exe`: the `epochrt` program; `job_file`: the job, an absolute path.
  sweep_processes(const sweep_options& opts, std::string exe,
                  std::string job_file);

  const std::vector<daemon>& daemons() const noexcept {
    return daemons_;
  }

  /// Starts the daemons of a case in `dir`, fresh (their root `dir`/cwd,
  /// their traces `dir`/NODE.trace), with `plan` for the one named
  /// `plan_for`. Returns an error text or empty.
  std::string start_daemons(const std::filesystem::path& dir,
                            const std::string& plan_for,
                            const std::optional<std::filesystem::path>& plan);

  void stop_daemons();

  /// Replaces the daemon of `node`, if it runs (it may still have a plan),
  /// by one without a plan, on its port. Returns an error text or empty.
  std::string restart_without_plan(const std::string& node,
                                   const std::filesystem::path& dir);

  /// How often the daemon of `node` died while a run was going on.
  int deaths(const std::string& node) const;

  /// Run `k` of the job in `dir`/cwd, its stdout and stderr in
  /// `dir`/runK.out and runK.err, with the plan and trace files when given;
  /// killed when it outlives opts.timeout_ms. Daemons that die meanwhile
  /// are restarted, fault-free, on their port.
  run_result run_job(const std::filesystem::path& dir, int k,
                     const std::optional<std::filesystem::path>& plan,
                     const std::optional<std::filesystem::path>& trace);

  /// Whether `epochrt ckpt verify` passes on `dir`/cwd/ckpt; `why` says
  /// why not.
  bool verifies(const std::filesystem::path& dir, std::string& why);

private:
  // Starts (or restarts, on its old port) the daemon of `d.node`, with the
  // plan and trace files when given. Returns an error text or empty.
  std::string start_daemon(daemon& d, const std::filesystem::path& dir,
                           const std::optional<std::filesystem::path>& plan,
                           const std::optional<std::filesystem::path>& trace);

  std::vector<std::string>
  run_argv(const std::optional<std::filesystem::path>& plan,
           const std::optional<std::filesystem::path>& trace);

  void revive_daemons(const std::filesystem::path& dir);

  const sweep_options& opts_;
  std::string exe_;
  std::string job_file_;
  std::vector<daemon> daemons_;
};

} // namespace epochrt::cli::sweep
