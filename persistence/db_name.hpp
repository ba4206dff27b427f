#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace epochrt {

/// The path of the checkpoint database of `node` at `epoch`, by Caffe2's
/// rule: with a non-empty `path_prefix`, `path_prefix + node + "." + epoch`
/// (plain concatenation, so a prefix may end in a partial file name);
/// otherwise `db_prefix` and `node + "." + epoch` joined with one "/" (no
/// prefix when `db_prefix` is empty). Does not validate: see
/// `checked_db_name`.
std::string db_name(int64_t epoch, std::string_view node,
                    std::string_view db_prefix,
                    std::string_view path_prefix = {});

/// `db_name`, or persistence_errc::invalid_name when `node` is not a valid
/// node name (messages/names.hpp: it could escape the directory) or `epoch`
/// is negative.
caf::expected<std::string> checked_db_name(int64_t epoch, std::string_view node,
                                           std::string_view db_prefix,
                                           std::string_view path_prefix = {});

/// The path of the same node's database of `epoch`, given the path of its
/// database of `own_epoch` (`db_name`: the epoch is the last dot-separated
/// part), as an incremental checkpoint names the earlier one whose data it
/// refers to. Errors: persistence_errc::corrupt when `db_path` does not end
/// in "." + own_epoch, so that the reference cannot be followed.
caf::expected<std::string> db_path_of_epoch(const std::string& db_path,
                                            int64_t own_epoch, int64_t epoch);

/// The epoch a database path names (`db_name`: the part after its last
/// dot). Errors: persistence_errc::invalid_name when that part is not a
/// non-negative decimal number.
caf::expected<int64_t> epoch_of_db_path(std::string_view db_path);

} // namespace epochrt
