#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace epochrt::cli {

/// One `--fetch NODE:BLOB` of `epochrt run`: a blob to print after the job.
struct fetch_spec {
  std::string node;
  std::string blob;

  /// "NODE:BLOB", as given on the command line.
  std::string str() const;

  /// Parses "NODE:BLOB". The node ends at the first ':' (node and blob
  /// names may both hold one: `resolve` settles it against the job). Both
  /// parts must be valid names (messages/names.hpp). On failure returns
  /// none and stores the reason in `*problem` when `problem` is not null.
  static std::optional<fetch_spec> parse(std::string_view text,
                                         std::string* problem = nullptr);

  /// The split of "NODE:BLOB" whose node is one of `nodes`, when the first
  /// ':' does not give one: "trainer:0:w" is node "trainer:0", blob "w",
  /// for a job with that node. False, `*this` unchanged, when no split or
  /// more than one does.
  bool resolve(const std::vector<std::string>& nodes);
};

} // namespace epochrt::cli
