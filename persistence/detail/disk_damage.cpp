#include <epochrt/persistence/detail/disk_damage.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <leveldb/write_batch.h>

#include <epochrt/faults/fault_draws.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt::detail {

namespace {

// The records of a write batch, copied out: only when a fault strikes.
struct batch_records : leveldb::WriteBatch::Handler {
  std::vector<std::pair<std::string, std::string>> puts;

  void Put(const leveldb::Slice& key, const leveldb::Slice& value) override {
    puts.emplace_back(key.ToString(), value.ToString());
  }

  void Delete(const leveldb::Slice&) override {
    // A checkpoint writer never deletes.
  }
};

// What a bad disk does to a batch it reports as written: corrupt_write
// flips one bit in one record's value; short_write cuts the batch's values,
// taken end to end, at one byte: records past the cut are lost, the one it
// falls in keeps its head only. Only values are touched: a chunk's bytes
// are what a checkpoint is made of, and a chunk that landed under another
// key would fail the reader's name and index check all the same.
void damage_batch(leveldb::WriteBatch& batch, const fault_action& action) {
  batch_records records;
  if (!batch.Iterate(&records).ok() || records.puts.empty())
    return;
  fault_draws pick{action.draw};
  auto& puts = records.puts;
  if (action.kind == fault_kind::corrupt_write) {
    auto& value = puts[pick.below(puts.size())].second;
    if (value.empty())
      return;
    value[pick.below(value.size())] ^= static_cast<char>(1 << pick.below(8));
  } else if (action.kind == fault_kind::short_write) {
    uint64_t total = 0;
    for (auto& put : puts)
      total += put.second.size();
    if (total == 0)
      return;
    auto cut = pick.below(total);
    size_t kept = 0;
    for (; kept < puts.size() && cut > 0; ++kept) {
      auto& value = puts[kept].second;
      if (cut < value.size())
        value.resize(cut);
      cut -= value.size();
    }
    puts.resize(kept);
  } else {
    return;
  }
  batch.Clear();
  for (auto& [key, value] : puts)
    batch.Put(key, value);
}

// What a bad disk does to a file's bytes it reports as written:
// short_write cuts them, corrupt_write flips one bit of one byte, both from
// the draw.
void damage_bytes(std::string& bytes, const fault_action& action) {
  if (bytes.empty())
    return;
  if (action.kind == fault_kind::short_write) {
    bytes.resize(action.draw % bytes.size());
  } else if (action.kind == fault_kind::corrupt_write) {
    auto pos = action.draw % bytes.size();
    bytes[pos] ^= static_cast<char>(1 << ((action.draw / bytes.size()) % 8));
  }
}

// What a bad disk does to a payload it reports as written to the data
// file, at [offset, offset + size): corrupt_write flips one bit of it;
// short_write loses its tail from a byte on (the file is cut there, and
// the next payload lands after a hole, as after a lost write).
caf::error damage_payload(int fd, uint64_t offset, uint64_t size,
                          const fault_action& action, const std::string& file) {
  if (size == 0)
    return {};
  fault_draws pick{action.draw};
  auto at = offset + pick.below(size);
  if (action.kind == fault_kind::corrupt_write) {
    char byte = 0;
    if (::pread(fd, &byte, 1, static_cast<off_t>(at)) != 1)
      return io_error("read " + file, errno);
    byte ^= static_cast<char>(1 << pick.below(8));
    return pwrite_all(fd, &byte, 1, at, file);
  }
  if (action.kind == fault_kind::short_write
      && ::ftruncate(fd, static_cast<off_t>(at)) != 0)
    return io_error("truncate " + file, errno);
  return {};
}

// What a bad disk does to a closed database's files after reporting them
// synced: corrupt_write flips one bit of one .log, .ldb or data file,
// short_write cuts one at a byte. The file is chosen among the non-empty ones
// in name order, so a plan's draw picks the same file every run.
caf::error damage_files(const std::string& dir, const fault_action& action) {
  std::vector<std::pair<std::string, uint64_t>> files;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator{dir, ec};
       !ec && it != std::filesystem::end(it); it.increment(ec)) {
    auto ext = it->path().extension();
    std::error_code file_ec;
    if ((ext != ".log" && ext != ".ldb" && ext != ".data")
        || !it->is_regular_file(file_ec))
      continue;
    auto size = it->file_size(file_ec);
    if (!file_ec && size > 0)
      files.emplace_back(it->path().string(), size);
  }
  if (ec)
    return make_error(persistence_errc::io_error,
                      "list " + dir + ": " + ec.message());
  if (files.empty())
    return {};
  std::sort(files.begin(), files.end());
  fault_draws pick{action.draw};
  auto& [file, size] = files[pick.below(files.size())];
  auto offset = pick.below(size);
  int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return io_error("open " + file, errno);
  caf::error err;
  if (action.kind == fault_kind::corrupt_write) {
    char byte = 0;
    auto pos = static_cast<off_t>(offset);
    if (::pread(fd, &byte, 1, pos) != 1)
      err = io_error("read " + file, errno);
    byte ^= static_cast<char>(1 << pick.below(8));
    if (!err && ::pwrite(fd, &byte, 1, pos) != 1)
      err = io_error("write " + file, errno);
  } else if (action.kind == fault_kind::short_write) {
    if (::ftruncate(fd, static_cast<off_t>(offset)) != 0)
      err = io_error("truncate " + file, errno);
  }
  if (!err && ::fsync(fd) != 0)
    err = io_error("fsync " + file, errno);
  ::close(fd);
  return err;
}

} // namespace

disk_damage::disk_damage(fault_injector& faults, std::string node,
                         int64_t epoch, std::string detail)
  : faults_(faults), node_(std::move(node)), epoch_(epoch),
    detail_(std::move(detail)) {
  // nop
}

caf::error disk_damage::strike(fault_point point) {
  return strike_blocking(&faults_, point, fault_site{node_, epoch_, detail_},
                         action_);
}

caf::error disk_damage::at(fault_point point) {
  return strike(point);
}

caf::error disk_damage::before_batch(fault_point point,
                                     leveldb::WriteBatch& batch) {
  if (auto err = strike(point))
    return err;
  if (action_)
    damage_batch(batch, action_);
  return {};
}

caf::error disk_damage::before_bytes(fault_point point, std::string& bytes) {
  if (auto err = strike(point))
    return err;
  if (action_)
    damage_bytes(bytes, action_);
  return {};
}

caf::error disk_damage::before_payload(fault_point point) {
  return strike(point);
}

caf::error disk_damage::payload_written(int fd, uint64_t offset, uint64_t size,
                                        const std::string& file) {
  auto action = std::exchange(action_, fault_action{});
  if (!action)
    return {};
  return damage_payload(fd, offset, size, action, file);
}

caf::error disk_damage::after_sync(fault_point point, const std::string& dir) {
  if (auto err = strike(point))
    return err;
  if (action_)
    return damage_files(dir, action_);
  return {};
}

} // namespace epochrt::detail
