#pragma once

#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

namespace epochrt {

/// The name of the code of `err` ("node_lost", "corrupt",
/// "request_timeout"), for the error categories of every layer of epochrt
/// (codec, fault, runtime, persistence, actors) and CAF's own `sec`: one
/// explicit list, in error_codes.cpp, where a new category is added. Empty
/// for no error and for another category. Thread-safe.
std::string error_code_name(const caf::error& err);

/// "<code>: <context>" ("corrupt: metadata file ... does not decode") for
/// an error whose code `error_code_name` names, "<code>" when it has no
/// context; CAF's rendering otherwise; empty for no error. The line a
/// person reads last: the CLI's, a log's. (`error_text` renders the context
/// alone, for a message that wraps another error.) Thread-safe.
std::string coded_error_text(const caf::error& err);

namespace detail {

/// The categories of epochrt's own errors, for `configure`.
const std::vector<caf::atom_value>& epochrt_error_categories();

} // namespace detail

} // namespace epochrt
