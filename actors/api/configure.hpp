#pragma once

#include <cstddef>
#include <string>

#include <epochrt/actors/api/logging.hpp>
#include <epochrt/messages/error_text.hpp>

namespace caf {
class actor_system_config;
} // namespace caf

namespace epochrt {

/// Prepares a host's actor_system_config for epochrt: registers every message
/// type and the error categories of all layers, and gives the system its
/// own epochrt logger, made from `logging`. Call once, before the
/// actor_system is built from `cfg`. Leaves the scheduler, CAF's logging
/// and signal handling of the host untouched.
void configure(caf::actor_system_config& cfg, const log_options& logging = {});

/// Sets `cfg`'s scheduler up the way epochrt is measured and tuned
/// (bench/epoch_bench): `threads` scheduler threads (0: the hardware
/// threads, at least 2; CAF's default is 4 even on 2 cores), and threads
/// that run out of work spin briefly and then sleep until work is queued
/// for them. CAF 0.17's default in between is to poll every 50 µs, which
/// on a virtual machine's timer slack adds about 200 µs to every epoch
/// whose messages come from another thread. Optional: a host that tunes
/// CAF's scheduler itself may skip it. Call before the actor_system is
/// built from `cfg`.
void configure_scheduler(caf::actor_system_config& cfg, size_t threads = 0);

} // namespace epochrt
