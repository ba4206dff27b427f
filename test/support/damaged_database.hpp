#pragma once

#include <filesystem>

namespace epochrt::test {

/// Flips three bytes (at a third, half and two thirds) of every LevelDB
/// table and log file of 16 bytes or more in the database directory `db`:
/// damage that opening or reading the database must find.
void corrupt_database(const std::filesystem::path& db);

} // namespace epochrt::test
