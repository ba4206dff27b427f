#pragma once

namespace caf {
class actor_system_config;
} // namespace caf

namespace epochrt {

/// Registers every message type of `messages/` with `cfg`, under the same
/// names on every process. Call once per config, before the actor_system is
/// built; a type left unregistered crosses the wire as an empty message.
void add_message_types(caf::actor_system_config& cfg);

} // namespace epochrt
