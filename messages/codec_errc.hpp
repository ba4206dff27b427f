#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace epochrt {

/// Errors of decoding stored or received bytes.
enum class codec_errc : uint8_t {
  /// Bytes that are not a valid message of the expected schema (truncated,
  /// misaligned, over the traversal limit, or otherwise malformed).
  malformed = 1,
  /// A well-formed message whose contents break the value type's invariants
  /// (a tensor whose payload does not match its shape, an unknown enum).
  invalid_value,
};

/// The category of `codec_errc` in a `caf::error`.
constexpr caf::atom_value codec_category = caf::atom("ert_codec");

std::string to_string(codec_errc x);

caf::error make_error(codec_errc code, std::string context = {});

/// Whether `err` is the error `code` (false for no error).
bool is_error(const caf::error& err, codec_errc code) noexcept;

} // namespace epochrt
