#include "tools/node_command.hpp"

#include <csignal>
#include <iostream>
#include <memory>
#include <pthread.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "tools/cli_output.hpp"
#include "tools/fault_commands.hpp"
#include "tools/network_flags.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/node_server.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::cli {

namespace {

// Blocks SIGINT and SIGTERM in this thread and in every thread started
// after it (CAF's), so that sigwait below receives them.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

} // namespace

int run_node(const node_options& opts) {
  auto address = node_address::parse(opts.listen, true);
  if (!address) {
    print_error("--listen: " + describe(address.error()));
    return exit_bad_input;
  }
  auto network = network_from_flags(opts.connection_timeout_ms, opts.tls);
  if (!network) {
    print_error(describe(network.error()));
    return exit_bad_input;
  }
  node_server_options options;
  options.host = address->host;
  options.port = address->port;
  options.checkpoint_root = opts.checkpoint_root;
  options.lock_root = !opts.shared_root;
  options.max_tensor_bytes = opts.max_tensor_bytes;
  auto secret = secret_from_flag(opts.secret_file);
  if (!secret) {
    print_error(describe(secret.error()));
    return exit_bad_input;
  }
  options.secret = std::move(*secret);
  if (opts.admission_timeout_ms <= 0) {
    print_error("--admission-timeout-ms must be positive");
    return exit_bad_input;
  }
  options.admission_timeout
    = std::chrono::milliseconds{opts.admission_timeout_ms};
  if (opts.max_tensor_bytes == 0) {
    print_error("--max-tensor-bytes must be positive");
    return exit_bad_input;
  }
  auto faults = make_fault_injector(opts.fault_plan, opts.fault_trace);
  if (!faults) {
    // Like a job file's errors: the file and the field, not the code.
    print_error(one_line(error_text(faults.error())));
    return exit_bad_input;
  }
  options.faults = std::move(*faults);
  options.worker_threads = opts.worker_threads;
  auto signals = block_stop_signals();
  auto ops = std::make_shared<op_registry>();
  if (auto err = add_builtin_ops(*ops)) {
    print_error(describe(err));
    return exit_failure;
  }
  caf::actor_system_config cfg;
  if (auto err = configure_network(cfg, *network, log_options{opts.log, {}})) {
    print_error(describe(err));
    return exit_bad_input;
  }
  configure_scheduler(cfg);
  caf::actor_system sys{cfg};
  auto server = node_server::start(sys, ops, std::move(options));
  if (!server) {
    print_error(describe(server.error()));
    return is_error(server.error(), actors_errc::invalid_argument)
        || is_error(server.error(), persistence_errc::locked)
      ? exit_bad_input
      : exit_failure;
  }
  auto where = node_address{address->host, (*server)->port()}.str();
  std::cout << "listening on " << where << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  (*server)->stop();
  return exit_ok;
}

} // namespace epochrt::cli
