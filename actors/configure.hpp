#pragma once

namespace caf {
class actor_system_config;
} // namespace caf

namespace epochrt {

/// Prepares a host's actor_system_config for epochrt: registers every message
/// type and the error categories of all layers. Call once, before the
/// actor_system is built from `cfg`. Leaves the scheduler, logging and
/// signal handling of the host untouched.
void configure(caf::actor_system_config& cfg);

} // namespace epochrt
