#pragma once

// --probe: the persistence layer without the actors, to see where a save's
// and a load's time goes. Drives checkpoint_writer and checkpoint_reader
// directly (as the persistence actor does), with the default writer_options
// and with a write buffer larger than the checkpoint, and times the parts
// on their own: encoding the chunk records, hashing, each reader open.

#include <string>
#include <vector>

#include "bench/bench_util.hpp"

namespace epochrt::bench {

/// Runs the probe once in the existing directory `dir`; progress on stderr,
/// figures on stdout as `probe_<name>=value unit`. Throws on errors.
void run_probe(const std::vector<blob>& blobs, const std::string& dir);

} // namespace epochrt::bench
