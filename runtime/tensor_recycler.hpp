#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

/// Keeps the payload buffers of tensors that are made again and again at
/// the same size, so that a new one takes the pages of an old one instead
/// of faulting in fresh ones. An all-reduce makes a result of the same size
/// every step of a training loop; without this, allocating and first
/// touching a 64 MiB result cost more than reducing into it.
///
/// A tensor from `make` gives its payload back here when its last owner
/// drops it, on that owner's thread; the recycler keeps at most
/// `max_bytes` of payloads (the oldest go first) and frees the rest.
/// Payloads smaller than `min_bytes` are never kept: allocating them is
/// cheap. The recycler may be destroyed before the tensors it made: their
/// payloads are then simply freed.
///
/// Thread-safe.
class tensor_recycler : public std::enable_shared_from_this<tensor_recycler> {
public:
  static constexpr size_t min_bytes = 64 * 1024;

  static std::shared_ptr<tensor_recycler> make(size_t max_bytes);

  /// A tensor of `type` and `shape` with a payload of `bytes` bytes. The
  /// payload holds whatever its previous tensor held when it is reused (the
  /// caller overwrites every byte), zeros when new.
  std::shared_ptr<tensor> make_tensor(dtype type, std::vector<int64_t> shape,
                                      size_t bytes);

  /// Bytes of payloads kept for reuse now.
  size_t kept_bytes() const;

private:
  explicit tensor_recycler(size_t max_bytes);

  std::vector<char> take(size_t bytes);
  void give_back(std::vector<char> payload);

  const size_t max_bytes_;
  mutable annotated_mutex mtx_;
  // Oldest first.
  std::vector<std::vector<char>> kept_ EPOCHRT_GUARDED_BY(mtx_);
  size_t kept_bytes_ EPOCHRT_GUARDED_BY(mtx_) = 0;
};

} // namespace epochrt
