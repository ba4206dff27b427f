#pragma once

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// What every object of the module shares: one actor system, configured
/// for epochrt, and the registry of the builtin ops (an OpRegistry,
/// `op_registry.hpp`, holds a session's own).
///
/// A session, a checkpoint manager and the job runner that uses both must
/// live in one actor system: each holds the runtime (`get`) and so keeps
/// it alive, and the runtime lives as long as any of them. When the last
/// goes the actor system shuts down, so a process that is done with
/// epochrt keeps no threads of it. The builtins' registry is made once per
/// process and never changes: jobs loaded with it stay valid in every
/// runtime.
///
/// Every runtime is configured with `configure_network` (CAF's middleman
/// loaded), so that a DistributedSession and a checkpoint manager made in
/// either order share one. What the network options fix for the system's
/// life (TLS, the connection timeout) is the first holder's: `get` without
/// options takes the defaults, or those of the runtime alive.
///
/// Thread-safety: `get`, `make_private`, `ops` and `set_log_level` may be
/// called from any thread, with or without the GIL. Nothing here calls
/// Python.
class runtime {
public:
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// The runtime alive now, or a new one when none is. Its destruction
  /// waits for the actor system's actors to end: the holder of the last
  /// reference must not hold the GIL, which a Python op running on a
  /// node's worker thread may wait for.
  static std::shared_ptr<runtime> get();

  /// As `get`, for an object that needs `network`: the runtime alive now
  /// when it was made with the same options, else a new one when none is
  /// alive. Throws `error` (BadInput) when the runtime alive has other
  /// network options, or (BadInput) when `network`'s TLS files are not
  /// usable.
  static std::shared_ptr<runtime> get(const network_options& network);

  /// The network options with `connection_timeout` (default 5 s) and
  /// heartbeats every fifth of it (at least 50 ms), as `epochrt`'s
  /// --connection-timeout-ms makes them: `get` without options uses the
  /// default, so that a DistributedSession with the default timeout
  /// shares the runtime of objects made before it.
  static network_options
  network_with(std::chrono::milliseconds connection_timeout
               = std::chrono::milliseconds{5000});

  /// A runtime of its own for one holder (a node daemon, whose actor
  /// system must not be a master's), not handed out by `get`. Throws
  /// `error` (BadInput) when `network`'s TLS files are not usable.
  static std::shared_ptr<runtime> make_private(const network_options& network);

  /// The registry of epochrt's builtin ops, for the sessions and jobs given
  /// no OpRegistry. Made on first use; never changes afterwards, so that
  /// sessions may share it read-only.
  static std::shared_ptr<const epochrt::op_registry> ops();

  /// The level of the log lines the actor system writes to stderr, for the
  /// runtime alive now and every later one. Default: warn (a Python
  /// program prints what it wants; the CLI's info lines are noise there).
  static void set_log_level(log_level level);

  caf::actor_system& system() noexcept {
    return sys_;
  }

private:
  struct token {};

public:
  // Public for make_shared only: use `get`.
  runtime(token, network_options network);

  const network_options& network() const noexcept {
    return network_;
  }

private:
  static caf::actor_system_config& configured(caf::actor_system_config& cfg,
                                              const network_options& network);

  network_options network_;
  caf::actor_system_config cfg_;
  caf::actor_system sys_;
};

} // namespace epochrt::python
