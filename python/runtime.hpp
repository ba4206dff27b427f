#pragma once

#include <memory>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// What every object of the module shares: one actor system, configured
/// for epochrt, and the registry of the ops jobs may use.
///
/// A session, a checkpoint manager and the job runner that uses both must
/// live in one actor system: each holds the runtime (`get`) and so keeps
/// it alive, and the runtime lives as long as any of them. When the last
/// goes the actor system shuts down, so a process that is done with
/// epochrt keeps no threads of it. The registry is made once per process
/// and never changes: jobs loaded with it stay valid in every runtime.
///
/// Thread-safety: `get`, `ops` and `set_log_level` may be called from any
/// thread, with or without the GIL. Nothing here calls Python.
class runtime {
public:
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// The runtime alive now, or a new one when none is. Its destruction
  /// waits for the actor system's actors to end: the holder of the last
  /// reference must not hold the GIL if an actor might wait for it (no
  /// actor does yet; Python ops will).
  static std::shared_ptr<runtime> get();

  /// The registry of every op jobs of this module may use: epochrt's
  /// builtin ops. Made on first use; never changes afterwards, so that
  /// sessions may share it read-only.
  static std::shared_ptr<const op_registry> ops();

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
  explicit runtime(token);

private:
  static caf::actor_system_config& configured(caf::actor_system_config& cfg);

  caf::actor_system_config cfg_;
  caf::actor_system sys_;
};

} // namespace epochrt::python
