#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace epochrt {

// Converts the value types of messages/ to and from the bytes of their Cap'n
// Proto structs in schema/epochrt.capnp (flat array encoding, unpacked).
//
// `encode<T>` and `decode<T>` exist for: tensor, op_def, step_def, task_def,
// task_group_def, stop_condition, channel_def, job_def, blob_value,
// run_tasks (but not the actor handles of its plan's peers, which only
// CAF's serialization carries), exchange_end, exchange_report,
// task_output, tasks_done, fetch_blobs, blob_values, put_blobs,
// init_checkpoint, blob_names, save_checkpoint, load_checkpoint,
// check_checkpoint, checkpoint_status, blob_entry, manifest, blob_chunk,
// checkpoint_stats, checkpoint_metadata.
//
// `decode` never throws: malformed bytes (Cap'n Proto exceptions) and values
// that break a type's invariants come back as a `codec_errc` error. Input
// need not be word-aligned. Both functions are thread-safe.

template <class T>
std::string encode(const T& value);

template <class T>
caf::expected<T> decode(std::string_view bytes);

} // namespace epochrt
