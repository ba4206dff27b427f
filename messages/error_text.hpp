#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

// The one renderer of errors for people: the library's messages, the CLI's
// lines and the logs all go through `error_text`. It lives in the lowest
// layer so that every layer can use it; the layers above make their error
// codes nameable with `register_error_category`.

namespace epochrt {

/// How much of an error `error_text` renders.
enum class error_form {
  /// The context string alone, when the error's context is one string (as
  /// every error made by a `make_error` of epochrt is); CAF's rendering of
  /// the whole error otherwise. For messages that wrap another error.
  context,
  /// "<code>: <context>" for errors of a registered category (every layer
  /// of epochrt, and CAF's own `sec`), CAF's rendering otherwise. The code
  /// names the kind of failure ("corrupt", "not_found"), the context the
  /// details. For a line a person reads last: the CLI's, a log's.
  code_and_context,
};

/// Names the codes of one error category.
using error_code_namer = std::string (*)(uint8_t code);

/// Makes the codes of `category` nameable by `error_form::code_and_context`.
/// Each layer registers its category once, during static initialization of
/// the translation unit that defines its `make_error` (so a program that can
/// make such an error has it registered). Thread-safe; a second registration
/// of a category replaces the first. Returns true, for use in an
/// initializer.
bool register_error_category(caf::atom_value category, error_code_namer namer);

/// The human-readable text of `err` in `form`; empty for no error. Needs no
/// actor system.
std::string error_text(const caf::error& err,
                       error_form form = error_form::context);

} // namespace epochrt
