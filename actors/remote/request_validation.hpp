#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

#include <epochrt/messages/protocol.hpp>

namespace epochrt {

class op_registry;

/// What a node daemon accepts from its master. Every check is made before
/// anything runs or is stored, and a failure is actors_errc::rejected with
/// what was wrong and where.
struct request_limits {
  /// Largest payload of one tensor, in bytes (for strings: the sum of their
  /// lengths). Default: 1 GiB.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
};

/// A tensor that is well formed (shape, type and payload agree, without
/// overflow) and within `limits`. `what` names it in the error.
caf::error check_tensor(const tensor& x, const std::string& what,
                        const request_limits& limits);

/// Checks the tasks of `msg` for node `node`: every task addressed to
/// `node`; task, blob and output names valid; every op known to `ops` and
/// called as its schema says; every argument tensor within `limits`; the
/// group's exchange plan well formed (valid names and channel
/// declarations, an exchange for every node it names). With a
/// non-empty `file_root`, path arguments are rewritten in place to lie under
/// it (`resolve_under`), or refused when they cannot.
caf::error check_tasks(run_tasks& msg, const std::string& node,
                       const op_registry& ops, const request_limits& limits,
                       const std::string& file_root);

/// Valid blob names, each value within `limits`.
caf::error check_put(const put_blobs& msg, const request_limits& limits);

/// Valid blob names.
caf::error check_fetch(const fetch_blobs& msg);

/// Valid op type names.
caf::error check_op_types(const check_ops& msg);

} // namespace epochrt
