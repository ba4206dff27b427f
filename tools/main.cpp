// The `epochrt` command: runs job files and inspects checkpoint directories.
//
//   epochrt [-v|-q] run JOB.json [--checkpoint-dir DIR] [--resume-from EPOCH]
//                   [--from-scratch] [--allow-job-change]
//                                [--upload-dir DIR] [--fetch NODE:BLOB]...
//                                [--node NAME=HOST:PORT]... [--secret-file F]
//                                [--max-failures K] [--spare HOST:PORT]...
//                                [--replicas R] [--tls-cert F --tls-key F
//                                --tls-ca F]
//   epochrt [-v|-q] node --listen HOST:PORT [--checkpoint-root DIR]
//                        [--secret-file FILE] [--max-tensor-bytes N]
//                        [--admission-timeout-ms MS]
//                        [--tls-cert F --tls-key F --tls-ca F]
//   epochrt [-v|-q] ckpt ls DIR [--json]
//   epochrt [-v|-q] ckpt show DIR NODE EPOCH [BLOB...] [--json]
//   epochrt [-v|-q] ckpt diff DIR NODE E1 E2 [--json]
//   epochrt [-v|-q] ckpt verify DIR [--node NAME=HOST:PORT]... [--replicas R]
//                        [--secret-file F] [--tls-cert F --tls-key F --tls-ca
//                        F]
//   epochrt [-v|-q] ckpt gc DIR --keep-last K [--node NAME=HOST:PORT]...
//                    [--replicas R] [--secret-file F] [--tls-cert F ...]
//
// Results go to stdout, logs and errors to stderr. Exit codes: 0 success,
// 1 failure (a job failed, a checkpoint is missing or corrupt), 2 bad input
// (bad arguments, an invalid job file). Other programs script this
// interface: change it only compatibly.

#include <unistd.h>

#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>

#include "tools/ckpt_commands.hpp"
#include "tools/cli_output.hpp"
#include "tools/fault_commands.hpp"
#include "tools/node_command.hpp"
#include "tools/run_command.hpp"
#include "tools/strict_integer.hpp"
#include "tools/sweep_command.hpp"
#include <epochrt/actors/api/logging.hpp>

#ifndef EPOCHRT_VERSION
#  define EPOCHRT_VERSION "unknown"
#endif

namespace {

using namespace epochrt::cli;

// --tls-cert, --tls-key and --tls-ca of `run` and `node`; `peers` names
// the other side.
void add_tls_flags(CLI::App& app, tls_flags& tls, const std::string& peers) {
  app
    .add_option("--tls-cert", tls.cert,
                "Talk to " + peers
                  + " over mutual TLS, presenting this "
                    "certificate (PEM)")
    ->type_name("FILE");
  app
    .add_option("--tls-key", tls.key,
                "The certificate's private key (PEM, not encrypted, chmod 600)")
    ->type_name("FILE");
  app
    .add_option("--tls-ca", tls.ca,
                "Accept only " + peers + " whose certificate this CA signed")
    ->type_name("FILE");
}

// The flags of `ckpt verify` and `ckpt gc` that reach a distributed job's
// daemons; `what` says what the command does with a node's daemon.
void add_daemon_flags(CLI::App& app, daemon_flags& flags,
                      const std::string& what) {
  app
    .add_option("--node", flags.remote_nodes,
                "Node NAME ran on the daemon at HOST:PORT: " + what
                  + " (repeatable)")
    ->type_name("NAME=HOST:PORT")
    ->allow_extra_args(false);
  app
    .add_option("--replicas", flags.replicas,
                "With --node: the copies of each database the run made "
                "(default 0)")
    ->type_name("R")
    ->check(strict_integer(0, 1000));
  app
    .add_option("--secret-file", flags.secret_file,
                "The secret shared with the daemons")
    ->type_name("FILE");
  app
    .add_option("--connection-timeout-ms", flags.connection_timeout_ms,
                "A daemon silent this long is lost (default 5000)")
    ->type_name("MS")
    ->check(strict_integer(250, 3600000));
  add_tls_flags(app, flags.tls, "the daemons");
}

// --worker-threads of `run` and `node`: the pool the tasks of `whose` run on.
void add_worker_threads_flag(CLI::App& app, size_t& threads,
                             const std::string& whose) {
  app
    .add_option("--worker-threads", threads,
                "Threads that run the tasks of " + whose
                  + "; at most N tasks run at once (default: the hardware "
                    "threads, at least 4)")
    ->type_name("N")
    ->check(strict_unsigned(1, 4096));
}

/// Every option of every subcommand, filled in by CLI11.
struct arguments {
  int verbose = 0;
  bool quiet = false;
  run_options run;
  node_options node;
  sweep_options sweep;
  std::string ls_dir;
  bool ls_json = false;
  ckpt_show_options show;
  ckpt_diff_options diff;
  ckpt_verify_options verify;
  ckpt_gc_options gc;
};

/// -q: errors only; default: info; -v: debug; -vv: trace.
epochrt::log_level log_level_of(const arguments& args) {
  if (args.quiet)
    return epochrt::log_level::error;
  if (args.verbose >= 2)
    return epochrt::log_level::trace;
  if (args.verbose == 1)
    return epochrt::log_level::debug;
  return epochrt::log_level::info;
}

/// CLI11's message, except for a missing or unknown command, which is named
/// with the commands that exist.
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* deepest = &app;
  for (auto subs = deepest->get_subcommands(); !subs.empty();
       subs = deepest->get_subcommands())
    deepest = subs.front();
  auto commands = deepest->get_subcommands({});
  if (e.get_name() != "RequiredError" || commands.empty())
    return e.what();
  auto path = deepest == &app ? std::string{"epochrt"}
                              : "epochrt " + deepest->get_name();
  std::string names;
  for (auto* cmd : commands)
    names += (names.empty() ? "" : ", ") + cmd->get_name();
  auto rest = app.remaining(true);
  if (!rest.empty())
    return "unknown command '" + rest.front() + "' for '" + path
      + "' (commands: " + names + ")";
  return "'" + path + "' needs a command: " + names;
}

int run_main(int argc, char** argv) {
  constexpr auto max_int64 = std::numeric_limits<int64_t>::max();
  arguments args;
  CLI::App app{"Runs jobs in epochs with checkpoints at every epoch boundary, "
               "on this machine or across node daemons, and inspects "
               "checkpoint directories.",
               "epochrt"};
  app.set_version_flag("--version", "epochrt " EPOCHRT_VERSION);
  app.footer("Exit codes: 0 success; 1 failure (the job failed, a fetched "
             "blob or a checkpoint is missing or corrupt); 2 bad input (bad "
             "arguments, an invalid job file, an epoch that is not "
             "committed). Results go to stdout, logs and errors to stderr.");
  app.require_subcommand(1);
  // Global flags are accepted after the subcommand too.
  app.fallthrough();
  auto verbose = app.add_flag("-v,--verbose", args.verbose,
                              "Log more (repeat for even more)");
  app.add_flag("-q,--quiet", args.quiet, "Log errors only")->excludes(verbose);

  auto run = app.add_subcommand("run", "Run a job file");
  run->add_option("job", args.run.job_file, "The job file (JSON)")->required();
  run
    ->add_option("--checkpoint-dir", args.run.checkpoint_dir,
                 "Checkpoint every epoch into DIR and resume from it")
    ->type_name("DIR");
  run
    ->add_option("--resume-from", args.run.resume_from,
                 "Resume from this committed epoch (default: the last one)")
    ->type_name("EPOCH")
    ->check(strict_integer(0, max_int64));
  run->add_flag("--from-scratch", args.run.from_scratch,
                "Start over in the checkpoint directory, forgetting what it "
                "holds (needed when its metadata is missing or corrupt)");
  run->add_flag("--allow-job-change", args.run.allow_job_change,
                "Resume checkpoints that a different definition of the job "
                "committed (the job file was edited since)");
  run
    ->add_option("--keep-last", args.run.keep_last,
                 "Keep the checkpoints of the last K committed epochs, "
                 "remove older ones after each commit (default 0: keep all)")
    ->type_name("K")
    ->check(strict_integer(0, 1000000000));
  run
    ->add_option("--replicas", args.run.replicas,
                 "Copy each node's checkpoints to R other node daemons, so "
                 "that a committed epoch survives the loss of R hosts "
                 "(default 0: no copies)")
    ->type_name("R")
    ->check(strict_integer(0, 1000));
  run
    ->add_option("--full-every", args.run.full_every,
                 "Write every blob at epochs divisible by N; other epochs "
                 "write only the blobs that changed (default 0: never)")
    ->type_name("N")
    ->check(strict_integer(0, max_int64));
  run
    ->add_option("--upload-dir", args.run.upload_dir,
                 "Copy the last epoch's checkpoints into DIR after the loop")
    ->type_name("DIR");
  run
    ->add_option("--fetch", args.run.fetches,
                 "Print blob BLOB of node NODE after the job (repeatable)")
    ->type_name("NODE:BLOB")
    ->allow_extra_args(false);
  run
    ->add_option("--node", args.run.remote_nodes,
                 "Run node NAME on the daemon at HOST:PORT (repeatable; "
                 "other nodes run in this process)")
    ->type_name("NAME=HOST:PORT")
    ->allow_extra_args(false);
  run
    ->add_option("--secret-file", args.run.secret_file,
                 "The secret shared with the daemons (a file only its owner "
                 "can read)")
    ->type_name("FILE");
  run
    ->add_option("--max-failures", args.run.max_failures,
                 "Survive up to K lost nodes: reconnect, reload the last "
                 "committed epoch everywhere, go on (default 0)")
    ->type_name("K")
    ->check(strict_integer(0, 1000000));
  run
    ->add_option("--connection-timeout-ms", args.run.connection_timeout_ms,
                 "A daemon silent this long is lost (default 5000)")
    ->type_name("MS")
    ->check(strict_integer(250, 3600000));
  run
    ->add_option("--reconnect-timeout-ms", args.run.reconnect_timeout_ms,
                 "How long a lost node's address is retried (default 30000)")
    ->type_name("MS")
    ->check(strict_integer(0, 24 * 3600000));
  run
    ->add_option("--spare", args.run.spares,
                 "A daemon that takes over a lost node whose own daemon "
                 "does not come back (repeatable; needs --max-failures; "
                 "with --replicas the node restores from a copy)")
    ->type_name("HOST:PORT")
    ->allow_extra_args(false);
  add_tls_flags(*run, args.run.tls, "the daemons");
  run
    ->add_option("--fault-plan", args.run.fault_plan,
                 "Inject the faults of PLAN in this process "
                 "(docs/fault-plans.md)")
    ->type_name("PLAN");
  run
    ->add_option("--fault-trace", args.run.fault_trace,
                 "Append every injection point this process reaches to FILE")
    ->type_name("FILE");
  add_worker_threads_flag(*run, args.run.worker_threads,
                          "the nodes in this process");
  run
    ->add_option("--stats-json", args.run.stats_json,
                 "Append what every epoch cost (per node: snapshot, write, "
                 "fsync, commit times, bytes, blobs) to FILE as JSON lines")
    ->type_name("FILE");
  run
    ->add_option("--metric", args.run.metrics,
                 "With --stats-json: the epoch tasks' output BLOB, one "
                 "number (a loss), goes into each epoch's line under "
                 "\"metrics\" (repeatable)")
    ->type_name("BLOB");
  run
    ->add_option("--trace", args.run.trace,
                 "Write the job's timeline to FILE (Chrome trace-event "
                 "JSON: open it in ui.perfetto.dev or chrome://tracing)")
    ->type_name("FILE");

  auto node = app.add_subcommand(
    "node",
    "Serve as a node daemon: host the nodes a master sends here, until "
    "SIGINT or SIGTERM");
  node
    ->add_option("--listen", args.node.listen,
                 "Address to listen on (default 127.0.0.1:0, a free port; "
                 "other than loopback only with --secret-file or TLS)")
    ->type_name("HOST:PORT");
  node
    ->add_option("--checkpoint-root", args.node.checkpoint_root,
                 "Every checkpoint and file of the nodes goes under DIR "
                 "(default: the working directory)")
    ->type_name("DIR");
  node->add_flag("--shared-root", args.node.shared_root,
                 "Do not lock DIR: daemons of one job, each with other "
                 "nodes, share it (as epochrt sweep's do on one machine)");
  node
    ->add_option("--secret-file", args.node.secret_file,
                 "Obey only masters that prove they know this secret")
    ->type_name("FILE");
  node
    ->add_option("--max-tensor-bytes", args.node.max_tensor_bytes,
                 "Refuse larger tensors (default 1073741824)")
    ->type_name("N")
    ->check(strict_unsigned(1, uint64_t{1} << 40));
  node
    ->add_option("--connection-timeout-ms", args.node.connection_timeout_ms,
                 "A master silent this long is dropped (default 5000)")
    ->type_name("MS")
    ->check(strict_integer(250, 3600000));
  node
    ->add_option("--admission-timeout-ms", args.node.admission_timeout_ms,
                 "A connection that has not proven itself this long after "
                 "it connected is closed (default 5000)")
    ->type_name("MS")
    ->check(strict_integer(1, 3600000));
  add_tls_flags(*node, args.node.tls, "masters");
  node
    ->add_option("--fault-plan", args.node.fault_plan,
                 "Inject the faults of PLAN in this daemon "
                 "(docs/fault-plans.md)")
    ->type_name("PLAN");
  node
    ->add_option("--fault-trace", args.node.fault_trace,
                 "Append every injection point this daemon reaches to FILE")
    ->type_name("FILE");
  add_worker_threads_flag(*node, args.node.worker_threads,
                          "the daemon's nodes");

  auto faults = app.add_subcommand("faults", "Fault injection");
  faults->require_subcommand(1);
  auto faults_list_cmd = faults->add_subcommand(
    "list", "List the injection points and the faults each takes");

  auto sweep = app.add_subcommand(
    "sweep",
    "Run a job with a crash (and disk errors, corruption, partitions) at "
    "every injection point it reaches, and check that it recovers");
  sweep->add_option("job", args.sweep.job_file, "The job file (JSON)")
    ->required();
  sweep
    ->add_option("--fetch", args.sweep.fetches,
                 "Blob BLOB of node NODE is part of the result (repeatable)")
    ->type_name("NODE:BLOB")
    ->allow_extra_args(false);
  sweep
    ->add_option("--node", args.sweep.remote_nodes,
                 "Node NAME runs on your daemon at HOST:PORT (repeatable; "
                 "only the master's faults reach it)")
    ->type_name("NAME=HOST:PORT")
    ->allow_extra_args(false);
  sweep
    ->add_option("--daemon", args.sweep.daemon_nodes,
                 "Run node NAME on a daemon the sweep starts on 127.0.0.1, "
                 "scripts and restarts (repeatable)")
    ->type_name("NAME")
    ->allow_extra_args(false);
  sweep
    ->add_option("--secret-file", args.sweep.secret_file,
                 "The secret shared with the daemons")
    ->type_name("FILE");
  sweep
    ->add_option("--max-failures", args.sweep.max_failures,
                 "Passed to every run (default 0)")
    ->type_name("K")
    ->check(strict_integer(0, 1000000));
  sweep
    ->add_option("--connection-timeout-ms", args.sweep.connection_timeout_ms,
                 "Passed to every run and daemon (default 1000)")
    ->type_name("MS")
    ->check(strict_integer(250, 3600000));
  sweep
    ->add_option("--max-runs", args.sweep.max_runs,
                 "Cases at most; more are sampled (default 200)")
    ->type_name("N")
    ->check(strict_integer(1, 1000000));
  sweep
    ->add_option("--seed", args.sweep.seed,
                 "Seeds the sample and the plans (default 1)")
    ->type_name("S")
    ->check(strict_unsigned(0, std::numeric_limits<uint64_t>::max()));
  sweep
    ->add_option("--timeout-ms", args.sweep.timeout_ms,
                 "A run longer than this is hung (default 60000)")
    ->type_name("MS")
    ->check(strict_integer(100, 24 * 3600000));
  sweep
    ->add_option("--keep-last", args.sweep.keep_last,
                 "Passed to every run (default 0: keep all)")
    ->type_name("K")
    ->check(strict_integer(0, 1000000000));
  sweep
    ->add_option("--full-every", args.sweep.full_every,
                 "Passed to every run (default 0)")
    ->type_name("N")
    ->check(strict_integer(0, max_int64));
  sweep
    ->add_option("--work-dir", args.sweep.work_dir,
                 "Run the cases in DIR (default: a temporary directory)")
    ->type_name("DIR");
  sweep
    ->add_option("--faults", args.sweep.faults,
                 "Sweep only these kinds: crash, io_error, corrupt_write, "
                 "short_write, partition, and at the channel and collective "
                 "points drop, duplicate, kill_node (repeatable; default "
                 "all); host_loss only when named: a --daemon's host lost "
                 "with its disk, the node moved to a spare")
    ->type_name("KIND")
    ->allow_extra_args(false);

  auto ckpt = app.add_subcommand("ckpt", "Inspect a checkpoint directory");
  ckpt->require_subcommand(1);
  auto ls = ckpt->add_subcommand("ls", "List the checkpoint databases");
  ls->add_option("dir", args.ls_dir, "The checkpoint directory")->required();
  ls->add_flag("--json", args.ls_json, "One JSON document, for scripts");
  auto show = ckpt->add_subcommand("show", "Print blobs of a checkpoint");
  show->add_option("dir", args.show.dir, "The checkpoint directory")
    ->required();
  show->add_option("node", args.show.node, "The node")->required();
  show->add_option("epoch", args.show.epoch, "The epoch")
    ->required()
    ->check(strict_integer(0, max_int64));
  show->add_option("blobs", args.show.blobs,
                   "Blobs to print (default: all, in manifest order)");
  show->add_flag("--json", args.show.json, "One JSON document, for scripts");
  auto diff = ckpt->add_subcommand(
    "diff", "List the blobs added, removed and changed from E1 to E2");
  diff->add_option("dir", args.diff.dir, "The checkpoint directory")
    ->required();
  diff->add_option("node", args.diff.node, "The node")->required();
  diff->add_option("e1", args.diff.from_epoch, "The earlier epoch")
    ->required()
    ->check(strict_integer(0, max_int64));
  diff->add_option("e2", args.diff.to_epoch, "The later epoch")
    ->required()
    ->check(strict_integer(0, max_int64));
  diff->add_flag("--json", args.diff.json, "One JSON document, for scripts");
  auto verify = ckpt->add_subcommand(
    "verify", "Check every committed epoch's checkpoints and digests");
  verify->add_option("dir", args.verify.dir, "The checkpoint directory")
    ->required();
  add_daemon_flags(*verify, args.verify.daemons,
                   "check its databases there, "
                   "and the copies on every "
                   "daemon named");
  auto gc = ckpt->add_subcommand(
    "gc", "Remove the checkpoints of all but the last K committed epochs");
  gc->add_option("dir", args.gc.dir, "The checkpoint directory")->required();
  gc->add_option("--keep-last", args.gc.keep_last,
                 "How many of the last committed epochs to keep")
    ->type_name("K")
    ->required()
    ->check(strict_integer(1, 1000000000));
  add_daemon_flags(*gc, args.gc.daemons,
                   "remove its databases there, and their copies");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);
    print_error(parse_error_text(app, e));
    return exit_bad_input;
  }
  args.run.log = args.node.log = log_level_of(args);
  if (run->parsed()) {
    // On a terminal, a live line replaces the info logs; -q silences it.
    args.run.progress = !args.quiet && args.verbose == 0 && ::isatty(2) == 1;
    return run_job(args.run);
  }
  if (node->parsed())
    return run_node(args.node);
  if (faults_list_cmd->parsed())
    return faults_list();
  if (sweep->parsed())
    return run_sweep(args.sweep);
  if (ls->parsed())
    return ckpt_ls(args.ls_dir, args.ls_json);
  if (show->parsed())
    return ckpt_show(args.show);
  if (diff->parsed())
    return ckpt_diff(args.diff);
  if (verify->parsed())
    return ckpt_verify(args.verify);
  if (gc->parsed())
    return ckpt_gc(args.gc);
  // require_subcommand makes this unreachable; keep a defined answer.
  print_error("no command given (see --help)");
  return exit_bad_input;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    // Nothing below is meant to throw; an exception here is a bug, reported
    // as a failure rather than an abort.
    print_error(std::string{"internal error: "} + e.what());
    return exit_failure;
  }
}
