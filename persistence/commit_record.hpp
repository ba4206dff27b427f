#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

// What each change of the commit record does, as pure functions of the
// record: no I/O, no clock, no faults. A metadata handler reads its record,
// applies one of these and stores the result in one durable write
// (file_metadata_handler), so that every change is all or nothing and each
// can be tested on its own, in any order.

/// Whether `epoch` is among the record's committed epochs.
bool is_committed(const checkpoint_metadata& record, int64_t epoch);

/// The record with `epoch` committed and, when `final`, recorded as the
/// epoch after which the job stopped. Committing an epoch twice is one
/// commit.
checkpoint_metadata with_commit(checkpoint_metadata record, int64_t epoch,
                                bool final);

/// The record without `epoch`, which is then no longer final either.
/// Unchanged when `epoch` is not committed.
checkpoint_metadata without_commit(checkpoint_metadata record, int64_t epoch);

/// The record with committed `epoch` as the job's last;
/// persistence_errc::not_committed when `epoch` is not committed.
caf::expected<checkpoint_metadata> with_final(checkpoint_metadata record,
                                              int64_t epoch);

/// The record with `stats` as the outcome of `action`.
checkpoint_metadata with_stats(checkpoint_metadata record, std::string action,
                               std::vector<checkpoint_stats> stats);

/// The epoch a job resumes from: `user_epoch` when it is committed (else
/// persistence_errc::not_committed, naming the committed ones), or without
/// one the last committed epoch; nullopt when none is.
caf::expected<std::optional<int64_t>>
resume_epoch(const checkpoint_metadata& record,
             std::optional<int64_t> user_epoch);

/// The epoch after which the job stopped, while it is still committed.
std::optional<int64_t> final_epoch(const checkpoint_metadata& record);

} // namespace epochrt
