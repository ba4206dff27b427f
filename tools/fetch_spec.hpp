#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace epochrt::cli {

/// One `--fetch NODE:BLOB` of `epochrt run`: a blob to print after the job.
struct fetch_spec {
  std::string node;
  std::string blob;

  /// "NODE:BLOB", as given on the command line.
  std::string str() const;

  /// Parses "NODE:BLOB". The node ends at the first ':' (node names never
  /// contain one; blob names may). Both parts must be valid names
  /// (messages/names.hpp). On failure returns none and stores the reason in
  /// `*problem` when `problem` is not null.
  static std::optional<fetch_spec> parse(std::string_view text,
                                         std::string* problem = nullptr);
};

} // namespace epochrt::cli
