#pragma once

// The baseline of collectives_bench's channel figure: items of a fixed size
// sent from one process to another with bare CAF request/response over its
// middleman, one request in flight at a time, nothing of epochrt on the
// path. collectives_bench starts two copies of itself: a sink and a client.

#include <cstdint>

namespace epochrt::bench {

/// The sink: an actor that answers (item, bytes) with the byte count,
/// published with CAF's middleman on a free port of 127.0.0.1, printed as
/// "listening on 127.0.0.1:PORT"; runs until SIGTERM or SIGINT. Returns the
/// exit code.
int serve_caf_item_sink();

/// The client: connects to the sink at `port`, sends `items` / 10 untimed
/// items, then for each of `reps` repetitions sends `items` items of
/// `item_bytes` bytes one after the other (each after the previous reply,
/// every request with a timeout as epochrt's have one), timed inside an
/// event-based actor, and prints "SECONDS" per repetition. Returns the exit
/// code.
int run_caf_item_client(uint16_t port, int items, int reps, int item_bytes);

} // namespace epochrt::bench
