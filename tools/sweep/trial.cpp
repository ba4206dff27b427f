#include "tools/sweep/trial.hpp"

#include <csignal>
#include <fstream>

#include "tools/cli_output.hpp"
#include "tools/sweep/trial_judge.hpp"
#include <epochrt/faults/fault_plan.hpp>

namespace epochrt::cli::sweep {

namespace fs = std::filesystem;

outcome run_trial(const sweep_case& c, const fs::path& work,
                  const sweep_options& opts, const std::string& reference_out,
                  sweep_processes& procs, std::string& note) {
  auto dir = work / ("case-" + std::to_string(c.index));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "cwd", ec);
  if (ec) {
    note = "cannot create " + (dir / "cwd").string() + ": " + ec.message();
    return outcome::wrong;
  }
  fault_plan plan;
  plan.seed = opts.seed;
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
  trial_judge judge{c, reference_out, opts.timeout_ms};
  // Keeps how run k broke an invariant, if it did.
  auto broke = [&](const std::optional<verdict>& v) {
    if (!v)
      return false;
    worst = v->result;
    note = v->note;
    return true;
  };
  // Whether the lost host's node had moved when the latest run started.
  auto moved_at_start = false;
  auto one_run
    = [&](const std::optional<fs::path>& p) -> std::optional<run_result> {
    ++k;
    moved_at_start = procs.host_moved();
    auto before = committed(dir);
    auto trace = dir / ("master.trace." + std::to_string(k));
    auto r = procs.run_job(dir, k, on_master ? p : std::nullopt, trace);
    if (broke(
          judge.judge_loads(read_trace(trace, 0, master_process), before, k))
        || broke(judge.judge(r, k, p.has_value()))
        || broke(judge.judge_lost_work(r, k)))
      return std::nullopt;
    return r;
  };
  auto finish = [&](outcome o) {
    procs.stop_daemons();
    return o;
  };
  // Setup: the daemon with the plan, and for a loading point the run from
  // scratch that the resumed run loads.
  auto plan_for = on_master ? std::string{} : c.where.process;
  auto lost_host = c.host_loss ? plan_for : std::string{};
  if (c.where.phase == 2) {
    if (auto err = procs.start_daemons(dir, {}, std::nullopt, lost_host);
        !err.empty()) {
      note = err;
      return finish(outcome::wrong);
    }
    auto r = one_run(std::nullopt);
    if (!r)
      return finish(worst);
  }
  if (auto err = procs.start_daemons(dir, plan_for, plan_path, lost_host);
      !err.empty()) {
    note = err;
    return finish(outcome::wrong);
  }
  auto deaths_before = procs.deaths(plan_for);
  auto injected = one_run(plan_path);
  if (!injected)
    return finish(worst);
  auto struck = on_master ? injected->status.signal == SIGKILL
                          : procs.deaths(plan_for) > deaths_before;
  // The reruns are fault-free: a daemon that still has the plan (its rule
  // may not have struck yet) is replaced by one without.
  if (auto err = procs.restart_without_plan(plan_for, dir); !err.empty()) {
    note = err;
    return finish(outcome::wrong);
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
  // A host lost as the last run ended (its daemon died after the job's
  // work was done) leaves its copies short, and only a run rebuilds them:
  // the user's next run, which names the new address, does. So does the
  // sweep, fault-free, before it verifies.
  if (ended(last) && procs.host_moved() && !moved_at_start
      && last.moved_nodes.empty()) {
    auto r = one_run(std::nullopt);
    if (!r)
      return finish(worst);
    last = *r;
  }
  // Silent corruption is there to be found, and may be found only by
  // verifying; the checkpoints of nodes on the user's own daemons are out
  // of reach, those on hosts of their own are verified there, copies too,
  // while their daemons still run.
  std::string why;
  auto verified = silent || !opts.remote_nodes.empty()
    || (procs.own_hosts() ? procs.verifies_on_daemons(dir, why)
                          : procs.verifies(dir, why));
  procs.stop_daemons();
  if (auto stray = stray_files(dir); !stray.empty()) {
    note = "wrote outside the checkpoint directory: " + stray;
    return outcome::wrong;
  }
  if (!verified) {
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
    note += std::string{note.empty() ? "" : "; "}
      + (c.host_loss ? "host lost, node moved to the spare"
                     : "daemon restarted");
  if (!struck && kind == fault_kind::crash)
    note += std::string{note.empty() ? "" : "; "} + "the crash never struck";
  return outcome::recovered;
}

} // namespace epochrt::cli::sweep
