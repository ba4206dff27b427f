#pragma once

#include <string>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

// The renderer of an error's context, for the messages that wrap another
// error: the lowest layer's, so that every layer can use it. The line a
// person reads last (the CLI's, a log's) also names the error's code:
// coded_error_text in actors/api/error_codes.hpp, where every layer's codes
// are known.

namespace epochrt {

/// The context of `err` when it is one string (as every error made by a
/// `make_error` of epochrt is), CAF's rendering of the whole error
/// otherwise; empty for no error. Needs no actor system; thread-safe.
std::string error_text(const caf::error& err);

/// Whether `err` is an error (not none) of category `category`. With each
/// layer's `is_error(err, code)`, the only test of an error's category:
/// CAF 0.17's `category()` of no error reads through a null pointer.
bool in_category(const caf::error& err, caf::atom_value category) noexcept;

} // namespace epochrt
