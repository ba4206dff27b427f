#pragma once

#include <stdexcept>
#include <string>

#include <caf/error.hpp>

namespace pybind11 {
class module_;
} // namespace pybind11

namespace epochrt::python {

/// The Python exception classes an epochrt error becomes, all subclasses
/// of `epochrt.Error`. An error's code picks the class when the code says
/// what went wrong whatever the call (`stopped`, `node_lost`, the codes of
/// bad input); for every other code the call picks it: `fallback`.
enum class error_kind {
  /// epochrt.Error: an error that is none of the below.
  error,
  /// epochrt.BadInput: an unreadable or invalid job, a bad argument, a
  /// name the job or the session lacks, an epoch never committed, a
  /// checkpoint directory another job holds; nothing ran.
  bad_input,
  /// epochrt.JobFailed: a job ran and failed (a task, a checkpoint that
  /// cannot be loaded).
  job_failed,
  /// epochrt.Stopped: `request_stop` ended the job; a rerun resumes.
  stopped,
  /// epochrt.NodeLost: a node stopped answering or its daemon is gone; a
  /// rerun resumes from the last committed epoch.
  node_lost,
};

/// The class of `err`: see `error_kind`.
error_kind classify(const caf::error& err, error_kind fallback);

/// An epochrt error on its way to Python, where the translator that
/// `register_errors` installs raises it as its kind's class, with the
/// message `coded_error_text(err)` ("invalid_job: job.json: ...") and the
/// attribute `code`, the code's name ("invalid_job"; "" when unnamed).
/// Thrown by the bindings only, never inside epochrt's calls (where errors
/// are values); may be thrown without the GIL.
class error : public std::runtime_error {
public:
  error(const caf::error& err, error_kind fallback);

  error_kind kind() const noexcept {
    return kind_;
  }

  const std::string& code() const noexcept {
    return code_;
  }

  /// The node a node_lost error says was lost (`lost_node`); empty else.
  const std::string& node() const noexcept {
    return node_;
  }

private:
  error_kind kind_;
  std::string code_;
  std::string node_;
};

/// Throws `error(err, fallback)` when `err` is an error.
void throw_if(const caf::error& err, error_kind fallback = error_kind::error);

/// Caffe2's answer to a load of blobs from checkpoints: true when `err` is
/// none, false when it says a checkpoint of the epoch does not exist or is
/// incomplete (persistence_errc::not_found, incomplete); throws any other
/// error.
bool loaded_or_missing(const caf::error& err);

/// Defines epochrt.Error and its subclasses in `m` and translates `error`
/// into them. Call once, from the module's initialization.
void register_errors(pybind11::module_& m);

} // namespace epochrt::python
