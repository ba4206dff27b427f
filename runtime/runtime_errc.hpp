#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

#include <epochrt/messages/error_text.hpp>

namespace epochrt {

/// Errors of the runtime: building, validating and running jobs.
enum class runtime_errc : uint8_t {
  /// An op type that the registry does not know.
  unknown_op = 1,
  /// An op argument or a definition field that is missing, unknown, of the
  /// wrong kind or out of range.
  bad_argument,
  /// A blob that an op, a step or a task output needs does not exist.
  missing_blob,
  /// A blob of the wrong dtype for what reads it.
  type_mismatch,
  /// A blob of the wrong shape for what reads it.
  shape_mismatch,
  /// A job or task definition that breaks the job model's rules.
  invalid_job,
  /// A job file that cannot be read.
  unreadable_file,
  /// An op failed for another reason (threw, was cancelled, ...).
  op_failed,
  /// A channel or collective op waited for a node that was lost (killed,
  /// gone, frozen past the connection timeout). The actors layer reports
  /// the task's group as a lost node, so that a job with failures left
  /// recovers.
  peer_lost,
  /// A channel or collective op that the job uses wrongly: a put into a
  /// closed channel, a take no task will ever answer, blobs that do not
  /// match the other participants' or the channel's.
  exchange_failed,
  /// A task stopped because its group was cancelled: another task failed,
  /// the group timed out or the node is stopping. Never the cause of a
  /// failure: the group reports the failure that cancelled it.
  cancelled,
};

/// The category of `runtime_errc` in a `caf::error`.
constexpr caf::atom_value runtime_category = caf::atom("ert_rt");

std::string to_string(runtime_errc x);

/// An error of `runtime_category` whose context is the one string `context`.
caf::error make_error(runtime_errc code, std::string context = {});

/// Whether `err` is `code` of `runtime_category`.
bool is_error(const caf::error& err, runtime_errc code) noexcept;

} // namespace epochrt
