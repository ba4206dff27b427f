#include "tools/run_command.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "tools/cli_output.hpp"
#include "tools/fault_commands.hpp"
#include "tools/fetch_spec.hpp"
#include "tools/job_event_fanout.hpp"
#include "tools/network_flags.hpp"
#include "tools/progress_view.hpp"
#include "tools/trace_writer.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/stats_json_writer.hpp>
#include <epochrt/actors/api/stop_signals.hpp>
#include <epochrt/actors/api/upload_task_group_builder.hpp>
#include <epochrt/messages/printable.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/job_definition.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::cli {

namespace {

/// Scheduler threads: the machine's cores, at least 2 (CAF's default of 4
/// is no faster on small machines).
/// The arguments' own consistency, before anything is read or run.
bool check_arguments(const run_options& opts, std::vector<fetch_spec>& out) {
  if (opts.checkpoint_dir && opts.checkpoint_dir->empty()) {
    print_error("--checkpoint-dir must not be empty");
    return false;
  }
  if (opts.upload_dir && opts.upload_dir->empty()) {
    print_error("--upload-dir must not be empty");
    return false;
  }
  if (opts.resume_from && !opts.checkpoint_dir) {
    print_error("--resume-from needs --checkpoint-dir");
    return false;
  }
  if (opts.from_scratch && !opts.checkpoint_dir) {
    print_error("--from-scratch needs --checkpoint-dir");
    return false;
  }
  if (opts.from_scratch && opts.resume_from) {
    print_error("--from-scratch and --resume-from exclude each other");
    return false;
  }
  if (opts.upload_dir && !opts.checkpoint_dir) {
    print_error("--upload-dir needs --checkpoint-dir");
    return false;
  }
  if (opts.resume_from && *opts.resume_from < 0) {
    print_error("--resume-from: an epoch is a non-negative integer, got "
                + std::to_string(*opts.resume_from));
    return false;
  }
  if (opts.max_failures < 0) {
    print_error("--max-failures must not be negative");
    return false;
  }
  if (opts.max_failures > 0 && opts.remote_nodes.empty()) {
    print_error("--max-failures needs --node: only remote nodes can be lost");
    return false;
  }
  if (!opts.metrics.empty() && !opts.stats_json) {
    print_error("--metric needs --stats-json");
    return false;
  }
  if (opts.reconnect_timeout_ms < 0) {
    print_error("--reconnect-timeout-ms must not be negative");
    return false;
  }
  for (auto& text : opts.fetches) {
    std::string problem;
    auto spec = fetch_spec::parse(text, &problem);
    if (!spec) {
      print_error(problem);
      return false;
    }
    out.push_back(std::move(*spec));
  }
  return true;
}

/// Every --metric is an output of an epoch task: a misspelt one would
/// otherwise be silently missing from every line.
bool check_metrics(const run_options& opts, const job& the_job) {
  auto problem = metrics_problem(the_job, opts.metrics);
  if (!problem.empty())
    print_error("--metric: " + problem);
  return problem.empty();
}

/// The job file's error, on one line that names the file.
std::string job_file_error(const std::string& path, const caf::error& err) {
  // load_job_file's messages start with the file name already; the code
  // name ("invalid_job: ") adds nothing for a person reading them.
  auto text = one_line(error_text(err)); // the context only
  if (text.find(path) == std::string::npos)
    text = path + ": " + text;
  return text;
}

/// Checks, without writing anything, that `epoch` is committed in `dir`
/// (whose metadata `check_metadata` read): an explicit --resume-from must
/// fail before the job starts, leaving the directory exactly as it was.
bool check_resume_epoch(const std::string& dir,
                        const checkpoint_metadata& metadata, int64_t epoch) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    print_error("--resume-from " + std::to_string(epoch) + ": " + dir
                + " is not a checkpoint directory");
    return false;
  }
  auto& committed = metadata.committed_epochs;
  if (std::find(committed.begin(), committed.end(), epoch) == committed.end()) {
    auto last = committed.empty() ? std::string{"none"}
                                  : std::to_string(committed.back());
    print_error("--resume-from " + std::to_string(epoch)
                + ": epoch is not committed in " + dir
                + " (last committed: " + last + ")");
    return false;
  }
  return true;
}

/// Before anything runs: the metadata of `dir`, which can be trusted, or
/// which --from-scratch replaced by an empty one (empty too for a
/// directory the first save creates). None, with the error printed, when
/// it is corrupt, or missing beside checkpoint databases: never taken for a
/// fresh start.
std::optional<checkpoint_metadata> check_metadata(const std::string& dir,
                                                  const run_options& opts) {
  file_metadata_handler handler{dir};
  if (opts.from_scratch) {
    if (auto err = handler.reset()) {
      print_error("--from-scratch: " + describe(err));
      return std::nullopt;
    }
    return checkpoint_metadata{};
  }
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec))
    return checkpoint_metadata{};
  std::string damage;
  auto metadata = handler.load(&damage);
  if (!metadata) {
    auto text = describe(metadata.error());
    if (text.find("--from-scratch") == std::string::npos)
      text += "; run with --from-scratch to start over";
    print_error(text);
    return std::nullopt;
  }
  if (!damage.empty())
    print_warning(damage + "; resuming from the previous generation ("
                  + file_metadata_handler::previous_file_name
                  + "), which lacks the last commit");
  return std::move(*metadata);
}

/// Before anything runs: the checkpoints of `dir` were committed by this
/// job (the definition `metadata` records), or --allow-job-change says to
/// resume them anyway. Metadata that records no definition (written before
/// definitions were recorded) is taken as this job's.
bool check_same_job(const std::string& dir, const checkpoint_metadata& metadata,
                    const run_options& opts, const std::string& definition) {
  if (opts.allow_job_change || metadata.committed_epochs.empty()
      || metadata.job_definition.empty())
    return true;
  auto difference = first_difference(metadata.job_definition, definition);
  if (difference.empty())
    return true;
  print_error("the checkpoints in " + dir
              + " were committed by another definition of the job ("
              + difference
              + "); give --allow-job-change to resume them anyway, or "
                "--from-scratch to start over");
  return false;
}

/// One job per directory: takes the lock of --checkpoint-dir (see
/// dir_lock) for the checkpoint manager to keep. False, with one line
/// naming the holder's pid, when another process holds it. A directory
/// that does not exist yet is left to the manager, which creates and locks
/// it before its first write (a bad daemon address then creates nothing);
/// one that cannot be made or locked too: its saves warn, as before.
bool lock_checkpoint_dir(const run_options& opts,
                         std::shared_ptr<dir_lock>& lock) {
  std::error_code ec;
  if (!opts.checkpoint_dir
      || (!opts.from_scratch
          && !std::filesystem::exists(*opts.checkpoint_dir, ec)))
    return true;
  auto locked = dir_lock::acquire(*opts.checkpoint_dir);
  if (!locked && is_error(locked.error(), persistence_errc::locked)) {
    print_error(describe(locked.error()));
    return false;
  }
  if (locked)
    lock = std::make_shared<dir_lock>(std::move(*locked));
  return true;
}

/// The --spare arguments: HOST:PORT of daemons that run none of the
/// job's nodes, each given once; only nodes a job survives losing move.
bool parse_spares(const run_options& opts,
                  const std::map<std::string, node_address>& remote,
                  std::vector<node_address>& out) {
  if (!opts.spares.empty() && opts.max_failures == 0) {
    print_error("--spare needs --max-failures: a node moves to a spare only "
                "when the job survives its loss");
    return false;
  }
  std::set<std::string> seen;
  for (auto& [name, address] : remote)
    seen.insert(address.str());
  for (auto& text : opts.spares) {
    auto address = node_address::parse(text);
    if (!address) {
      print_error("--spare " + text + ": "
                  + one_line(error_text(address.error())));
      return false;
    }
    if (!seen.insert(address->str()).second) {
      print_error("--spare " + text
                  + ": given twice, or the daemon of a --node");
      return false;
    }
    out.push_back(std::move(*address));
  }
  return true;
}

/// --replicas R: copies go to other daemons, R of them besides each node's
/// own, and need a checkpoint directory to commit them in.
bool check_replicas(const run_options& opts,
                    const std::map<std::string, node_address>& remote) {
  if (opts.replicas == 0)
    return true;
  if (!opts.checkpoint_dir) {
    print_error("--replicas needs --checkpoint-dir");
    return false;
  }
  std::set<std::string> daemons;
  for (auto& [name, address] : remote)
    daemons.insert(address.str());
  if (daemons.size() < opts.replicas + 1) {
    print_error("--replicas " + std::to_string(opts.replicas) + " needs at "
                + "least " + std::to_string(opts.replicas + 1)
                + " node daemons (--node), since a copy never stays on its "
                  "node's own daemon; the job's nodes run on "
                + std::to_string(daemons.size()));
    return false;
  }
  return true;
}

/// The last committed epoch of --checkpoint-dir; none without one, or when
/// nothing is committed (a rerun starts from scratch).
std::optional<int64_t> last_committed(const run_options& opts) {
  if (!opts.checkpoint_dir)
    return std::nullopt;
  file_metadata_handler handler{*opts.checkpoint_dir};
  auto metadata = handler.load();
  if (!metadata || metadata->committed_epochs.empty())
    return std::nullopt;
  return metadata->committed_epochs.back();
}

/// What to do after a node was lost: the epoch a rerun resumes from.
std::string rerun_hint(const run_options& opts) {
  if (!opts.checkpoint_dir)
    return "; without --checkpoint-dir a rerun starts from scratch";
  auto last = last_committed(opts);
  if (!last)
    return "; no epoch is committed yet: running the same command again "
           "starts from scratch";
  auto text = "; the last committed epoch is " + std::to_string(*last)
    + ": running the same command again resumes from it";
  if (opts.replicas > 0)
    text += " (a node whose host is gone resumes on a new daemon: "
            "--node NAME=HOST:PORT; its checkpoints come from their copies)";
  return text;
}

/// A note for each node that moved to a spare: a rerun must place it there
/// (its old host is gone).
void print_moves(const std::map<std::string, node_address>& placed,
                 const distributed_session& session) {
  for (auto& [name, address] : placed) {
    auto now = session.address_of(name);
    if (now != address.str())
      std::cerr << "epochrt: note: node " << name << " moved from "
                << address.str() << " to the spare daemon at " << now
                << "; a rerun places it there: --node " << name << '=' << now
                << std::endl;
  }
}

/// One stderr line after a graceful stop: why, and where a rerun resumes.
void print_stop(const std::string& job, int signo,
                std::optional<int64_t> resume, const std::string& what) {
  std::string where;
  if (resume)
    where = "running the same command again resumes from epoch "
      + std::to_string(*resume);
  else
    where = "nothing is committed: running the same command again starts "
            "from scratch";
  std::cout.flush();
  std::cerr << "epochrt: job '" << printable(job) << "' " << what << " ("
            << signal_name(signo) << "); " << where << std::endl;
}

bool is_stopped(const caf::error& err) {
  return is_error(err, actors_errc::stopped);
}

/// The observers of --stats-json, --trace and the progress line; false
/// (one error line printed) when a file cannot be written.
struct observers {
  std::shared_ptr<job_event_fanout> fanout
    = std::make_shared<job_event_fanout>();
  std::shared_ptr<stats_json_writer> stats;
  std::shared_ptr<trace_writer> trace;
  std::shared_ptr<progress_view> progress;

  bool open(const run_options& opts, const job& the_job) {
    std::string problem;
    if (opts.stats_json) {
      stats = stats_json_writer::open(*opts.stats_json,
                                      opts.checkpoint_dir.has_value(), problem);
      if (!stats) {
        print_error(problem);
        return false;
      }
      stats->set_metrics(opts.metrics);
      fanout->add(stats);
    }
    if (opts.trace) {
      trace = trace_writer::open(*opts.trace, problem);
      if (!trace) {
        print_error(problem);
        return false;
      }
      fanout->add(trace);
    }
    if (opts.progress) {
      progress
        = std::make_shared<progress_view>(the_job.name(), epoch_limit(the_job));
      fanout->add(progress);
    }
    return true;
  }

  /// The job is over: the last figures out, the trace's array ended, the
  /// progress line left on screen.
  void close() {
    if (stats)
      stats->close();
    if (trace)
      trace->close();
    if (progress)
      progress->finish();
  }

  std::shared_ptr<job_events> events() const {
    return fanout->empty() ? nullptr : fanout;
  }
};

} // namespace

int run_job(const run_options& opts) {
  std::vector<fetch_spec> fetches;
  if (!check_arguments(opts, fetches))
    return exit_bad_input;
  auto faults = make_fault_injector(opts.fault_plan, opts.fault_trace);
  if (!faults) {
    // Like a job file's errors: the file and the field, not the code.
    print_error(one_line(error_text(faults.error())));
    return exit_bad_input;
  }
  auto ops = std::make_shared<op_registry>();
  if (auto err = add_builtin_ops(*ops)) {
    print_error(describe(err));
    return exit_failure;
  }
  auto loaded = load_job_file(opts.job_file, *ops);
  if (!loaded) {
    print_error(job_file_error(opts.job_file, loaded.error()));
    return exit_bad_input;
  }
  if (!check_metrics(opts, *loaded))
    return exit_bad_input;
  // One job per directory: --from-scratch writes the metadata at once, so
  // it locks first.
  std::shared_ptr<dir_lock> lock;
  if (opts.from_scratch && !lock_checkpoint_dir(opts, lock))
    return exit_bad_input;
  auto definition = job_definition(*loaded);
  if (opts.checkpoint_dir) {
    // Untrusted metadata is exit 1 whatever else was asked.
    auto metadata = check_metadata(*opts.checkpoint_dir, opts);
    if (!metadata)
      return exit_failure;
    if (!check_same_job(*opts.checkpoint_dir, *metadata, opts, definition))
      return exit_bad_input;
    if (opts.resume_from
        && !check_resume_epoch(*opts.checkpoint_dir, *metadata,
                               *opts.resume_from))
      return exit_bad_input;
  }
  auto job_nodes = loaded->nodes();
  // A --fetch of a node the job does not have can never succeed: bad input,
  // refused before anything runs.
  for (auto& spec : fetches) {
    if (!spec.resolve(job_nodes)) {
      print_error("--fetch " + spec.str() + ": the job has no node '"
                  + spec.node + "'");
      return exit_bad_input;
    }
  }
  auto placed_nodes = nodes_from_flags(opts.remote_nodes, job_nodes, "the job");
  if (!placed_nodes) {
    print_error(one_line(error_text(placed_nodes.error())));
    return exit_bad_input;
  }
  auto remote = std::move(*placed_nodes);
  if (!check_replicas(opts, remote))
    return exit_bad_input;
  std::vector<node_address> spares;
  if (!parse_spares(opts, remote, spares))
    return exit_bad_input;
  auto placed = remote; // where each remote node runs at the start
  auto network = network_from_flags(opts.connection_timeout_ms, opts.tls);
  if (!network) {
    print_error(describe(network.error()));
    return exit_bad_input;
  }
  distributed_session_options session_opts;
  session_opts.timeouts.faults = *faults;
  session_opts.timeouts.worker_threads = opts.worker_threads;
  // A daemon that accepts a connection but stays silent this long is as
  // good as lost.
  session_opts.handshake_timeout = network->connection_timeout;
  session_opts.reconnect_timeout
    = std::chrono::milliseconds{opts.reconnect_timeout_ms};
  session_opts.spares = std::move(spares);
  auto secret = secret_from_flag(opts.secret_file);
  if (!secret) {
    print_error(describe(secret.error()));
    return exit_bad_input;
  }
  session_opts.secret = std::move(*secret);
  // Past the checks of bad input, which leave the directory alone, before
  // anything is written or any daemon contacted.
  if (!lock && !lock_checkpoint_dir(opts, lock))
    return exit_bad_input;
  observers watch;
  if (!watch.open(opts, *loaded))
    return exit_bad_input;
  log_options logging;
  logging.level = opts.log;
  if (opts.progress && logging.level < log_level::warn)
    logging.level = log_level::warn; // the live line replaces the info lines
  // Before the actor system: its threads must start with the signals
  // blocked, so that only the watcher takes them.
  stop_signals signals;
  // Declaration order matters: everything that owns actors is declared
  // after the system, so that it is destroyed (and its actors stopped)
  // before the system shuts down.
  caf::actor_system_config cfg;
  if (remote.empty()) {
    configure(cfg, logging);
  } else if (auto err = configure_network(cfg, *network, logging)) {
    print_error(describe(err));
    return exit_bad_input;
  }
  configure_scheduler(cfg);
  caf::actor_system sys{cfg};
  distributed_session session{sys, ops, std::move(remote), session_opts};
  // A wrong address or secret is reported before anything runs.
  if (auto err = session.connect_all()) {
    print_error("job '" + loaded->name() + "': " + describe(err));
    return exit_failure;
  }
  std::unique_ptr<multi_node_checkpoint_manager> manager;
  if (opts.checkpoint_dir) {
    checkpoint_options ckpt_opts;
    ckpt_opts.faults = *faults;
    ckpt_opts.metadata
      = std::make_shared<file_metadata_handler>(*opts.checkpoint_dir, *faults);
    ckpt_opts.full_every = opts.full_every;
    ckpt_opts.keep_last = opts.keep_last;
    ckpt_opts.replicas = opts.replicas;
    ckpt_opts.events = watch.events();
    ckpt_opts.lock = std::move(lock);
    manager = std::make_unique<multi_node_checkpoint_manager>(
      sys, *opts.checkpoint_dir, std::move(ckpt_opts));
  }
  std::unique_ptr<directory_upload_builder> upload;
  if (opts.upload_dir)
    upload = std::make_unique<directory_upload_builder>(*opts.upload_dir);
  job_runner_options runner_opts;
  runner_opts.max_node_failures = opts.max_failures;
  runner_opts.allow_job_change = opts.allow_job_change;
  runner_opts.events = watch.events();
  if (watch.stats && !opts.metrics.empty())
    runner_opts.on_epoch
      = [stats = watch.stats](int64_t epoch,
                              const std::vector<task_output>& outputs) {
          stats->on_epoch_outputs(epoch, outputs);
        };
  job_runner runner{std::move(*loaded), manager.get(), opts.resume_from,
                    upload.get(), runner_opts};
  signals.watch(
    [&runner, &watch](int signo) {
      runner.request_stop();
      if (watch.progress) // the notice goes on a line of its own
        watch.progress->clear_line();
      stop_signals::print_notice(signo, false);
    },
    [&signals](int signo) {
      // At once: whatever is committed stays committed; the epoch running
      // now is lost and runs again on the rerun.
      stop_signals::print_notice(signo, true);
      std::_Exit(128 + signals.received());
    });
  auto epochs = runner.train(session);
  watch.close();
  print_moves(placed, session);
  if (!epochs && is_stopped(epochs.error()) && signals.received() != 0) {
    // A scripted rerun needs the epoch it resumes from: on stdout too.
    auto resume = last_committed(opts);
    print_stop(runner.get_job().name(), signals.received(), resume,
               one_line(error_text(epochs.error())));
    std::cout << "resume_from=" << (resume ? std::to_string(*resume) : "none")
              << std::endl;
    return signals.received() == SIGINT ? exit_stopped_sigint
                                        : exit_stopped_sigterm;
  }
  if (!epochs && is_error(epochs.error(), persistence_errc::locked)) {
    // Another run made and locked the directory after our look: refused by
    // the manager's set_params, before anything ran.
    print_error(describe(epochs.error()));
    return exit_bad_input;
  }
  if (!epochs) {
    auto text = "job '" + runner.get_job().name()
      + "' failed: " + describe(epochs.error());
    if (is_node_lost(epochs.error()))
      text += rerun_hint(opts);
    print_error(text);
    return exit_failure;
  }
  for (auto& spec : fetches) {
    auto value = session.fetch(spec.node, spec.blob);
    if (!value) {
      print_error("--fetch " + spec.str() + ": " + describe(value.error()));
      return exit_failure;
    }
    std::cout << spec.str() << '=' << format_values(*value) << '\n';
  }
  std::cout << "epochs=" << *epochs << std::endl;
  return exit_ok;
}

} // namespace epochrt::cli
