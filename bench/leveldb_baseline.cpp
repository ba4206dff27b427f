#include "bench/leveldb_baseline.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

namespace epochrt::bench {

namespace {

// What a fair user sets for bulk float data: no compression (Snappy gains
// nothing on floats and costs CPU) and a 64 MiB memtable, so that a 64 MiB
// value does not force a flush per value. Everything else stays default.
leveldb::Options db_options() {
  leveldb::Options opts;
  opts.compression = leveldb::kNoCompression;
  opts.write_buffer_size = 64u << 20;
  return opts;
}

void check(const leveldb::Status& st, const char* what,
           const std::string& path) {
  if (!st.ok())
    throw std::runtime_error(std::string{what} + " " + path + ": "
                             + st.ToString());
}

// The values a blob is stored as: (key, offset, size).
struct piece {
  std::string key;
  size_t offset;
  size_t size;
};

std::vector<piece> pieces_of(const blob_bytes& b, size_t chunk_bytes) {
  std::vector<piece> result;
  if (chunk_bytes == 0 || b.size <= chunk_bytes) {
    auto key = chunk_bytes == 0 ? std::string{b.name}
                                : std::string{b.name} + "#00000000";
    result.push_back(piece{std::move(key), 0, b.size});
    return result;
  }
  char suffix[16];
  for (size_t off = 0, i = 0; off < b.size; off += chunk_bytes, ++i) {
    std::snprintf(suffix, sizeof(suffix), "#%08zu", i);
    result.push_back(piece{std::string{b.name} + suffix, off,
                           std::min(chunk_bytes, b.size - off)});
  }
  return result;
}

std::unique_ptr<leveldb::DB> open_db(const leveldb::Options& opts,
                                     const std::string& path) {
  leveldb::DB* raw = nullptr;
  check(leveldb::DB::Open(opts, path, &raw), "open", path);
  return std::unique_ptr<leveldb::DB>{raw};
}

} // namespace

leveldb_write_result leveldb_write(const std::string& path,
                                   const std::vector<blob_bytes>& blobs,
                                   size_t batch_bytes, size_t chunk_bytes) {
  auto opts = db_options();
  opts.create_if_missing = true;
  opts.error_if_exists = true;
  leveldb::WriteOptions sync;
  sync.sync = true;
  leveldb_write_result result;
  stopwatch watch;
  {
    auto db = open_db(opts, path);
    leveldb::WriteBatch batch;
    size_t in_batch = 0;
    auto flush = [&] {
      check(db->Write(sync, &batch), "write", path);
      batch.Clear();
      in_batch = 0;
      ++result.batches;
    };
    for (auto& b : blobs) {
      for (auto& p : pieces_of(b, chunk_bytes)) {
        if (in_batch > 0 && in_batch + p.size > batch_bytes)
          flush();
        batch.Put(p.key, leveldb::Slice{b.data + p.offset, p.size});
        in_batch += p.size;
        result.bytes += p.size;
      }
    }
    if (in_batch > 0)
      flush();
  } // closing the database is part of a save
  result.time = watch.elapsed();
  return result;
}

leveldb_read_result leveldb_read(const std::string& path,
                                 const std::vector<blob_bytes>& blobs,
                                 size_t chunk_bytes) {
  auto opts = db_options();
  leveldb_read_result result;
  {
    auto start = clock_type::now();
    auto db = open_db(opts, path);
    db.reset();
    result.first_open_seconds = seconds_since(start);
  }
  size_t largest = 0;
  std::vector<std::vector<piece>> keys; // built untimed
  for (auto& b : blobs) {
    largest = std::max(largest, b.size);
    keys.push_back(pieces_of(b, chunk_bytes));
  }
  if (chunk_bytes != 0)
    largest = std::min(largest, chunk_bytes);
  std::string value;
  value.reserve(largest); // reused: Get assigns into its capacity
  leveldb::ReadOptions ropts;
  // A bulk read-once: do not churn the block cache (LevelDB's advice).
  ropts.fill_cache = false;
  stopwatch watch;
  {
    auto db = open_db(opts, path);
    for (size_t i = 0; i < blobs.size(); ++i) {
      auto& b = blobs[i];
      for (auto& p : keys[i]) {
        check(db->Get(ropts, p.key, &value), "get", path);
        // Cheap checks that keep the copy observable: size and both edges.
        auto src = b.data + p.offset;
        auto edge = std::min<size_t>(8, p.size);
        if (value.size() != p.size || std::memcmp(value.data(), src, edge) != 0
            || std::memcmp(value.data() + p.size - edge, src + p.size - edge,
                           edge)
              != 0)
          throw std::runtime_error("value " + p.key + " in " + path
                                   + " differs from what was written");
        result.bytes += value.size();
      }
    }
  }
  result.time = watch.elapsed();
  return result;
}

} // namespace epochrt::bench
