#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/tensor.hpp>

namespace epochrt {

/// The blobs of `node`'s checkpoint database of `epoch` in the checkpoint
/// directory `dir` (`<dir>/<node>.<epoch>`), each read back with every
/// digest checked: those named in `blobs`, in that order, or every blob in
/// manifest order when `blobs` is empty. What `epochrt ckpt show` prints.
///
/// Errors (persistence_errc): invalid_name when `node` is not a valid node
/// name or `epoch` is negative; not_found when there is no such database,
/// or it lacks a blob named (the error names it); incomplete when its save
/// never finished; corrupt when a digest, a size or LevelDB's own
/// structures do not check out; io_error. All or nothing: no blob is
/// returned unless every one reads back intact.
///
/// Leaves every byte of the directory as it was (the database is read
/// through a private view in $TMPDIR), so it may run beside a job that
/// writes other epochs. Blocks on disk I/O: call it from a host thread,
/// never from an actor. Thread-safe: calls share nothing.
caf::expected<std::vector<std::pair<std::string, tensor>>>
read_checkpoint_blobs(const std::string& dir, const std::string& node,
                      int64_t epoch,
                      const std::vector<std::string>& blobs = {});

/// Checks `node`'s checkpoint database of `epoch` in `dir` as `epochrt
/// ckpt verify` checks each one: it exists, is complete, and every blob
/// reads back with its digests. No error when it does; otherwise the first
/// problem, with the errors of `read_checkpoint_blobs`. Same I/O and
/// thread-safety contract.
caf::error verify_checkpoint(const std::string& dir, const std::string& node,
                             int64_t epoch);

} // namespace epochrt
