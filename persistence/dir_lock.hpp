#pragma once

#include <string>

#include <caf/expected.hpp>

namespace epochrt {

/// One job per directory: an exclusive lock on `<dir>/LOCK`, as LevelDB's
/// LOCK file, held for the object's lifetime. Whoever writes a checkpoint
/// directory (a job's checkpoint manager, `epochrt ckpt gc`) or a daemon's
/// checkpoint root holds it; readers (listings, `ckpt ls/show/verify/diff`)
/// take none.
///
/// The lock is flock(2) on a descriptor opened with O_CLOEXEC: the kernel
/// drops it when the holder closes it or dies, SIGKILL included, so a
/// crashed job never leaves its directory locked; a program it execs does
/// not inherit it. Two `dir_lock`s of one process on one directory
/// conflict like those of two processes (each opens its own descriptor).
/// On NFS, where Linux emulates flock with fcntl locks, locks of one
/// process do not conflict: only other hosts' are refused.
///
/// The holder writes its pid into LOCK so that a refusal can name it; the
/// file is never trusted beyond that (any content, or none, is harmless)
/// and never removed: removing it would let a third locker lock a new file
/// while the second still waits on the old one.
///
/// Move-only; destruction (or being moved from and destroyed) releases the
/// lock. Not thread-safe: one object, one thread at a time.
class dir_lock {
public:
  /// The name of the lock file inside the directory.
  static constexpr const char* file_name = "LOCK";

  /// Creates `dir` when missing and takes its lock without waiting.
  /// Errors: persistence_errc::locked when another `dir_lock` (of this or
  /// another process) holds it, naming `dir` and the pid LOCK records
  /// ("<dir> is in use by process 1234"); persistence_errc::io_error when
  /// the directory or the file cannot be created, opened or locked.
  static caf::expected<dir_lock> acquire(const std::string& dir);

  dir_lock(dir_lock&& other) noexcept;
  dir_lock& operator=(dir_lock&& other) noexcept;
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;

  ~dir_lock();

  /// The directory locked, as given to `acquire`; empty once moved from.
  const std::string& dir() const noexcept {
    return dir_;
  }

private:
  dir_lock(std::string dir, int fd) noexcept;

  void release() noexcept;

  std::string dir_;
  int fd_ = -1;
};

} // namespace epochrt
