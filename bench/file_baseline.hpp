#pragma once

// A reference line, not a baseline to beat: the same bytes written to one
// flat file (write + fdatasync) and read back with pread into a reused
// buffer. It is what a checkpoint costs when nothing but the payload's own
// bytes go to disk once — the ceiling for a store that keeps large payloads
// beside its index (key/value separation).

#include <string>
#include <vector>

#include "bench/bench_util.hpp"

namespace epochrt::bench {

/// Writes every blob, back to back, into the new file `path`, then
/// fdatasyncs and closes it. Throws std::system_error.
timing file_write(const std::string& path,
                  const std::vector<blob_bytes>& blobs);

/// Reads back what `file_write` wrote, blob by blob, into one reused buffer,
/// checking sizes and edges. Throws on errors.
timing file_read(const std::string& path, const std::vector<blob_bytes>& blobs);

/// The same into a fresh std::vector<char> per blob, all kept until the
/// clock stops, as a program that loads tensors from a file must: it pays
/// for touching fresh memory, as a checkpoint load does. A reference line.
timing file_read_fresh(const std::string& path,
                       const std::vector<blob_bytes>& blobs);

} // namespace epochrt::bench
