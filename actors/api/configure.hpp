#pragma once

#include <string>

namespace caf {
class actor_system_config;
class error;
} // namespace caf

namespace epochrt {

/// Prepares a host's actor_system_config for epochrt: registers every message
/// type and the error categories of all layers. Call once, before the
/// actor_system is built from `cfg`. Leaves the scheduler, logging and
/// signal handling of the host untouched.
void configure(caf::actor_system_config& cfg);

/// One line for a person: "<code>: <context>" for the errors of epochrt's
/// layers and CAF's own (`sec`), CAF's rendering otherwise; empty for no
/// error. The code names the kind of failure ("corrupt", "not_found"), the
/// context the details. Needs no actor system.
std::string describe_error(const caf::error& err);

} // namespace epochrt
