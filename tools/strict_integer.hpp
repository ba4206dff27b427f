#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <CLI/CLI.hpp>

namespace epochrt::cli {

/// The value of `text` when all of it is a decimal integer within
/// [`min`, `max`]: digits, with a leading '-' only for a negative value. No
/// sign '+', no spaces, no base prefix, nothing empty, nothing out of range
/// (never clamped or wrapped).
std::optional<int64_t> parse_strict_integer(std::string_view text, int64_t min,
                                            int64_t max);

/// The same for unsigned values up to 2^64 - 1.
std::optional<uint64_t> parse_strict_unsigned(std::string_view text,
                                              uint64_t min, uint64_t max);

/// A CLI11 check that an option's text passes parse_strict_integer (CLI11's
/// own conversion accepts "0x1", "+1", and wraps "-1" into an unsigned).
/// Its message names what was expected and what was given.
CLI::Validator strict_integer(int64_t min, int64_t max);

/// The same for unsigned options.
CLI::Validator strict_unsigned(uint64_t min, uint64_t max);

} // namespace epochrt::cli
