#pragma once

#include <string>
#include <string_view>

namespace caf {
class error;
} // namespace caf

// What the `epochrt` command prints besides its results: exit codes and
// error lines. Results go to stdout; errors and logs go to stderr only, so
// that scripts can parse stdout.

namespace epochrt::cli {

/// The command's exit codes; other programs script them.
enum exit_code : int {
  /// Everything asked for was done.
  exit_ok = 0,
  /// The input was fine but the work failed: a job failed, a fetched blob
  /// does not exist, a checkpoint is missing or corrupt.
  exit_failure = 1,
  /// Bad input: bad arguments, an unreadable or invalid job file, a missing
  /// directory, an epoch that cannot be resumed from. Nothing was run.
  exit_bad_input = 2,
  /// `run` stopped gracefully after SIGINT (128 + 2): what ran is
  /// committed, and a rerun resumes from it.
  exit_stopped_sigint = 130,
  /// `run` stopped gracefully after SIGTERM (128 + 15).
  exit_stopped_sigterm = 143,
};

/// `text` on one line: line breaks become spaces, trailing blanks go.
std::string one_line(std::string_view text);

/// Writes "epochrt: error: <text>" as one line to stderr.
void print_error(std::string_view text);

/// Writes "epochrt: warning: <text>" as one line to stderr.
void print_warning(std::string_view text);

/// `coded_error_text(err)` on one line.
std::string describe(const caf::error& err);

} // namespace epochrt::cli
