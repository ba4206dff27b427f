#include "tools/daemon_checkpoints.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "tools/cli_output.hpp"
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/runtime/op_registry.hpp>

namespace epochrt::cli {

namespace {

// A checkpoint manager bound to a distributed job's nodes where the --node
// arguments place them, as `run` reaches them: the actor system, the
// session and the manager, destroyed in the reverse order.
class daemon_checkpoints {
public:
  // Connects and binds; on failure prints why and returns null with the
  // exit code in `exit_code`.
  static std::unique_ptr<daemon_checkpoints>
  open(const std::string& dir, const daemon_flags& flags,
       const std::vector<std::string>& nodes, checkpoint_options ckpt,
       int& exit_code) {
    auto remote = nodes_from_flags(flags.remote_nodes, nodes, "the checkpoint");
    if (!remote) {
      print_error(one_line(error_text(remote.error())));
      exit_code = exit_bad_input;
      return nullptr;
    }
    auto network = network_from_flags(flags.connection_timeout_ms, flags.tls);
    if (!network) {
      print_error(describe(network.error()));
      exit_code = exit_bad_input;
      return nullptr;
    }
    distributed_session_options session_opts;
    session_opts.handshake_timeout = network->connection_timeout;
    auto secret = secret_from_flag(flags.secret_file);
    if (!secret) {
      print_error(describe(secret.error()));
      exit_code = exit_bad_input;
      return nullptr;
    }
    session_opts.secret = std::move(*secret);
    std::unique_ptr<daemon_checkpoints> result{new daemon_checkpoints};
    log_options logging;
    logging.level = log_level::warn;
    if (auto err = configure_network(result->cfg_, *network, logging)) {
      print_error(describe(err));
      exit_code = exit_bad_input;
      return nullptr;
    }
    configure_scheduler(result->cfg_);
    result->sys_ = std::make_unique<caf::actor_system>(result->cfg_);
    // No task runs: the session needs a registry, not ops.
    result->session_ = std::make_unique<distributed_session>(
      *result->sys_, std::make_shared<op_registry>(), std::move(*remote),
      std::move(session_opts));
    if (auto err = result->session_->connect_all()) {
      print_error(describe(err));
      exit_code = exit_failure;
      return nullptr;
    }
    ckpt.replicas = static_cast<size_t>(flags.replicas);
    result->manager_ = std::make_unique<multi_node_checkpoint_manager>(
      *result->sys_, dir, std::move(ckpt));
    // Binding without an epoch restores nothing and writes nothing.
    if (auto err = result->manager_->init(*result->session_, nodes)) {
      print_error(describe(err));
      exit_code = exit_failure;
      return nullptr;
    }
    return result;
  }

  multi_node_checkpoint_manager& manager() {
    return *manager_;
  }

private:
  daemon_checkpoints() = default;

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<distributed_session> session_;
  std::unique_ptr<multi_node_checkpoint_manager> manager_;
};

// Where a report's database lies, for a person.
std::string place_of(const database_report& report) {
  return report.daemon.empty() ? std::string{"here"} : report.daemon;
}

// Judges one epoch's reports: prints a line per problem and returns true
// when there is none; counts the databases and intact copies checked.
bool judge_epoch(int64_t epoch, const std::vector<database_report>& reports,
                 int64_t replicas, size_t& databases, size_t& copies) {
  auto prefix = "epoch " + std::to_string(epoch) + ": ";
  auto intact = true;
  std::map<std::string, int64_t> intact_copies;
  std::map<std::string, bool> on_daemon;
  for (auto& report : reports) {
    if (report.own) {
      ++databases;
      on_daemon[report.node] = !report.daemon.empty();
      intact_copies.emplace(report.node, 0);
      if (!report.intact) {
        print_error(prefix + report.node + " at " + place_of(report) + ": "
                    + one_line(report.problem));
        intact = false;
      }
      continue;
    }
    // A daemon that holds no copy is no problem by itself: the count below
    // says whether enough of them do.
    if (!report.exists)
      continue;
    if (!report.intact) {
      print_error(prefix + report.node + ": copy at " + report.daemon + ": "
                  + one_line(report.problem));
      intact = false;
      continue;
    }
    ++copies;
    ++intact_copies[report.node];
  }
  if (replicas > 0)
    for (auto& [node, count] : intact_copies)
      if (on_daemon[node] && count < replicas) {
        print_error(prefix + node + ": " + std::to_string(count)
                    + " intact copies, --replicas " + std::to_string(replicas)
                    + " wants " + std::to_string(replicas));
        intact = false;
      }
  return intact;
}

// The nodes --node may place: those of the record. An empty record names
// none, so there is nothing to ask the daemons about.
bool has_nodes(const std::string& dir, const checkpoint_metadata& metadata) {
  if (!metadata.node_names.empty())
    return true;
  print_error(dir + ": the record names no nodes, so --node has none to place");
  return false;
}

} // namespace

int verify_on_daemons(const ckpt_verify_options& opts,
                      const checkpoint_metadata& metadata, bool fell_back) {
  if (!has_nodes(opts.dir, metadata))
    return exit_failure;
  if (metadata.committed_epochs.empty()) {
    std::cout << "no committed epochs" << std::endl;
    return fell_back ? exit_failure : exit_ok;
  }
  int exit_code = exit_ok;
  auto daemons = daemon_checkpoints::open(opts.dir, opts.daemons,
                                          metadata.node_names, {}, exit_code);
  if (!daemons)
    return exit_code;
  auto result = fell_back ? exit_failure : exit_ok;
  for (auto epoch : metadata.committed_epochs) {
    auto reports = daemons->manager().verify_copies(epoch);
    if (!reports) {
      print_error("epoch " + std::to_string(epoch) + ": "
                  + describe(reports.error()));
      result = exit_failure;
      continue;
    }
    size_t databases = 0;
    size_t copies = 0;
    if (judge_epoch(epoch, *reports, opts.daemons.replicas, databases, copies))
      std::cout << "epoch " << epoch << " ok (" << databases << " databases, "
                << copies << " copies)\n";
    else
      result = exit_failure;
  }
  std::cout.flush();
  return result;
}

int gc_on_daemons(const ckpt_gc_options& opts,
                  const checkpoint_metadata& metadata,
                  std::shared_ptr<dir_lock> lock) {
  if (!has_nodes(opts.dir, metadata))
    return exit_failure;
  checkpoint_options ckpt;
  ckpt.lock = std::move(lock);
  int exit_code = exit_ok;
  auto daemons = daemon_checkpoints::open(
    opts.dir, opts.daemons, metadata.node_names, std::move(ckpt), exit_code);
  if (!daemons)
    return exit_code;
  auto report = daemons->manager().remove_old_checkpoints(opts.keep_last);
  if (!report) {
    print_error("gc: " + describe(report.error()));
    return exit_failure;
  }
  if (report->kept.empty()) {
    std::cout << "gc: no committed epochs" << std::endl;
    return exit_ok;
  }
  for (auto& path : report->removed)
    std::cout << "removed " << path << "\n";
  std::cout << "gc: kept epochs " << report->kept.front() << ".."
            << report->kept.back() << ", removed " << report->removed.size()
            << " databases, freed " << report->bytes << " bytes" << std::endl;
  return exit_ok;
}

} // namespace epochrt::cli
