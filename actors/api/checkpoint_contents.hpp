#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
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

/// One committed epoch as `verify_committed` found it: each node's
/// database with its problem (none: intact). No node at all when the
/// directory holds no database of any node.
struct epoch_verification {
  int64_t epoch = -1;
  std::vector<std::pair<std::string, caf::error>> nodes;
};

/// `verify_checkpoint` for every node's database of every epoch that
/// `metadata`, the record of `dir`, commits, in its order. The nodes are
/// those the record names, else those with a database in `dir`. What
/// `epochrt ckpt verify DIR` checks. Errors: those of `list_checkpoints`
/// (the directory cannot be listed). Same I/O and thread-safety contract.
caf::expected<std::vector<epoch_verification>>
verify_committed(const std::string& dir, const checkpoint_metadata& metadata);

} // namespace epochrt
