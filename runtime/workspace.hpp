#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

/// The GLOBAL blobs of one node: what lives across task groups and epochs
/// and what a checkpoint saves.
///
/// Thread safety: every member function may be called from any thread at
/// any time; one mutex guards the blob map. Ops do not call these functions:
/// a task runs each op while holding an `access` (the same mutex), so
/// concurrent tasks on one node interleave at op granularity and never race.
///
/// Copy-on-write: blobs are held by `std::shared_ptr`. `get` and `snapshot`
/// hand out shared pointers to the stored tensors, never copies, and a
/// tensor that anyone outside the map still holds is never written again:
/// `access::mutable_blob` clones it first and `set` replaces the pointer.
/// So a snapshot is a copy of pointers, stays unchanged forever, and can be
/// persisted in the background while the next epoch runs.
///
/// Not copyable or movable: the owner (a node) keeps it in place.
class workspace {
public:
  using blob_ptr = std::shared_ptr<const tensor>;

  /// A blob as a snapshot holds it: its name, its immutable value, and its
  /// version.
  ///
  /// Versions: every write of a blob (set, set_all, replace_all, and each
  /// `access::mutable_blob` or `access::put`) gives it a version never used
  /// before by this workspace. So two snapshots that hold one name at the
  /// same version hold the same value: a checkpoint need not write again a
  /// blob whose version it has saved or loaded before.
  struct named_blob {
    std::string name;
    blob_ptr value;
    uint64_t version = 0;
    /// The version was made by `access::expose`: code the runtime cannot
    /// watch may have written the tensor, or may not have. Its value may
    /// therefore equal an earlier version's, and only its content tells.
    bool exposed = false;
  };

  workspace() = default;
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;

  /// The current value of `name`, or null when absent. The tensor behind
  /// the pointer never changes.
  blob_ptr get(std::string_view name) const;

  bool has(std::string_view name) const;

  /// Stores `value` as `name`, replacing any previous blob (which stays
  /// intact for whoever still holds it). Fails with
  /// `runtime_errc::bad_argument` naming the blob, and stores nothing,
  /// when `name` is not a blob name (messages/names.hpp): a checkpoint
  /// could not save it.
  caf::error set(std::string name, tensor value);

  /// Stores every pair in one critical section: no reader sees a mix of old
  /// and new values. A later pair wins over an earlier one of the same name.
  /// Names are not checked: this stores what a checkpoint load read back,
  /// whose names were checked when they entered.
  ///
  /// Returns the version each pair was stored with, in the order of `values`.
  std::vector<uint64_t>
  set_all(std::vector<std::pair<std::string, tensor>> values);

  /// Makes the workspace hold exactly `values`, in one critical section:
  /// what a full checkpoint load does, so that no blob of an earlier state
  /// survives it.
  ///
  /// Returns the version each pair was stored with, in the order of `values`.
  std::vector<uint64_t>
  replace_all(std::vector<std::pair<std::string, tensor>> values);

  /// Removes `name`; no effect when absent.
  void erase(std::string_view name);

  /// The names of all blobs, sorted.
  std::vector<std::string> names() const;

  size_t blob_count() const;

  /// Consistent, immutable views of the named blobs, taken in one critical
  /// section, in the order of `names`. Fails with `missing_blob` naming the
  /// first absent blob.
  caf::expected<std::vector<named_blob>>
  snapshot(const std::vector<std::string>& names) const;

  /// A snapshot of every blob, sorted by name.
  std::vector<named_blob> snapshot_all() const;

  /// Exclusive access to the blobs for the duration of one op. Holds the
  /// workspace's mutex from construction to destruction, so keep it short
  /// and never call the workspace's own member functions while holding it
  /// (they would deadlock).
  ///
  /// Pointers and references it returns are valid only while the access
  /// lives and until the same blob is written again through it.
  class access {
  public:
    explicit access(workspace& ws);

    /// An access that holds no lock and must touch no blob (asserted): for
    /// ops with neither inputs nor outputs (Sleep, CopyDirectory), which
    /// would otherwise hold every other task of the node for their whole run.
    access(workspace& ws, std::defer_lock_t);

    access(const access&) = delete;
    access& operator=(const access&) = delete;

    /// The blob `name`, or null when absent.
    const tensor* find(std::string_view name) const;

    bool has(std::string_view name) const;

    /// A writable reference to `name`, created as a f32 scalar 0 when
    /// absent. When anyone outside the map holds the tensor (a snapshot, a
    /// `get`), it is cloned first, so their view never changes.
    tensor& mutable_blob(const std::string& name);

    /// Stores `value` as `name` without cloning the previous value.
    void put(const std::string& name, tensor value);

    /// The blob `name` as a shared, immutable value, or null when absent:
    /// for passing it to another task or node without a copy. It never
    /// changes for whoever holds it: this workspace clones a tensor that
    /// others hold before writing it.
    blob_ptr share(std::string_view name) const;

    /// Stores `value` as `name`, shared with whoever else holds it: the
    /// workspace writes it in place only once it is the sole owner, and
    /// clones it first otherwise.
    void put_shared(const std::string& name, blob_ptr value);

    /// The blob `name` for code that the runtime cannot watch (a Python
    /// op's arrays, which PyTorch writes whatever their read-only flag):
    /// the workspace's own tensor, cloned first when anyone else holds it,
    /// so that whatever that code writes changes no snapshot, no other
    /// node's blob and no earlier value. The blob gets a new version,
    /// marked `exposed`. Null when absent.
    ///
    /// The caller must make sure the code keeps no reference to the
    /// tensor past this access (see `disown`): a write after it would
    /// reach whoever holds the blob next, a snapshot included.
    std::shared_ptr<tensor> expose(const std::string& name);

    /// Makes `name` stop using the tensor at `value` when it still does,
    /// by holding a clone instead (same content, same version): for a
    /// tensor that exposed code kept a reference to.
    void disown(const std::string& name, const tensor* value);

  private:
    // The workspace's blobs and a new version: this access holds its mutex
    // (asserted by each caller), which the analysis cannot tie to ws_.
    auto& blobs() const EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
      return ws_->blobs_;
    }

    uint64_t next_version() const EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
      return ws_->next_version();
    }

    // Empty for an access that holds no lock.
    std::optional<annotated_mutex::guard> guard_;
    workspace* ws_;
  };

  /// Runs `f(access&)` with the workspace locked and returns its result.
  template <class F>
  decltype(auto) with_lock(F&& f) {
    access acc{*this};
    return std::forward<F>(f)(acc);
  }

private:
  // Mutable tensors inside; shared out only as pointers to const.
  struct slot {
    std::shared_ptr<tensor> value;
    uint64_t version = 0;
    bool exposed = false; // the version was made by access::expose
  };
  using map_type = std::map<std::string, slot, std::less<>>;

  uint64_t next_version() noexcept EPOCHRT_REQUIRES(mtx_) {
    return ++last_version_;
  }

  mutable annotated_mutex mtx_;
  map_type blobs_ EPOCHRT_GUARDED_BY(mtx_);
  uint64_t last_version_ EPOCHRT_GUARDED_BY(mtx_) = 0;
};

} // namespace epochrt
