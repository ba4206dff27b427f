#pragma once

// The command-line parsing the benchmarks share, with nothing of epochrt
// in it: collectives_mpi, a plain MPI program, uses it too.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace epochrt::bench {

/// `text` as a decimal integer within [min, max]; false, `out` unchanged,
/// for anything else. The int overload: [min, max] within int's range.
bool parse_count(std::string_view text, long min, long max, long& out);
bool parse_count(std::string_view text, long min, long max, int& out);

/// Calls `take` on each item of the comma-separated `list`, in order;
/// false as soon as `take` refuses one.
bool for_each_item(std::string_view list,
                   const std::function<bool(std::string_view)>& take);

/// A comma-separated list of counts from 1 to 4096 ("1,16,64") into
/// `out`; false for an empty list or any other item.
bool parse_int_list(std::string_view text, std::vector<int>& out);

/// A comma-separated list of sizes into `out`, in KiB: "4K" is 4 KiB,
/// "16M" and "16" are 16 MiB. From 1 KiB to 1 GiB; false for an empty
/// list or any other item.
bool parse_size_list(std::string_view text, std::vector<int>& out);

/// A size in KiB as its shortest name: 4 -> "4KiB", 1024 -> "1MiB".
std::string size_name(int kib);

} // namespace epochrt::bench
