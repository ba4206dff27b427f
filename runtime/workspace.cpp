#include <epochrt/runtime/workspace.hpp>

#include <cassert>

#include <atomic>

#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// True when the map's pointer is the only owner of its tensor, so that the
// tensor may be written in place. Precondition: the workspace is locked.
//
// Why use_count() is safe here: every new owner of a stored tensor is made
// under the workspace's lock (get, snapshot), and an outside owner can only
// copy its pointer, never create one from nothing. So while we hold the
// lock the count can only go down, never from 1 up: reading 1 proves no one
// else holds it. Reading a stale higher count only costs a needless clone.
//
// An outside owner that dropped its pointer may have read the tensor just
// before; its decrement is a release, and our write must happen after its
// reads. use_count() is a relaxed load, so we pair it with an acquire
// fence. ThreadSanitizer does not model fences, so under TSan we copy the
// pointer instead: that increment is an acquire-release read-modify-write
// on the same counter in libstdc++, which TSan does see.
bool sole_owner(std::shared_ptr<tensor>& ptr) {
#if defined(__SANITIZE_THREAD__)
  auto probe = ptr;
  bool result = probe.use_count() == 2;
  probe.reset();
  return result;
#else
  if (ptr.use_count() != 1)
    return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
#endif
}

} // namespace

workspace::blob_ptr workspace::get(std::string_view name) const {
  annotated_mutex::guard guard{mtx_};
  auto i = blobs_.find(name);
  if (i == blobs_.end())
    return nullptr;
  return i->second.value;
}

bool workspace::has(std::string_view name) const {
  annotated_mutex::guard guard{mtx_};
  return blobs_.count(name) > 0;
}

caf::error workspace::set(std::string name, tensor value) {
  if (auto problem = blob_name_problem(name); !problem.empty())
    return make_error(runtime_errc::bad_argument, problem);
  auto ptr = std::make_shared<tensor>(std::move(value));
  annotated_mutex::guard guard{mtx_};
  blobs_.insert_or_assign(std::move(name),
                          slot{std::move(ptr), next_version()});
  return {};
}

std::vector<uint64_t>
workspace::set_all(std::vector<std::pair<std::string, tensor>> values) {
  // Allocate outside the lock; only pointer swaps happen inside it.
  std::vector<std::pair<std::string, std::shared_ptr<tensor>>> ptrs;
  ptrs.reserve(values.size());
  for (auto& [name, value] : values)
    ptrs.emplace_back(std::move(name),
                      std::make_shared<tensor>(std::move(value)));
  std::vector<uint64_t> versions;
  versions.reserve(ptrs.size());
  annotated_mutex::guard guard{mtx_};
  for (auto& [name, ptr] : ptrs) {
    versions.push_back(next_version());
    blobs_.insert_or_assign(std::move(name),
                            slot{std::move(ptr), versions.back()});
  }
  return versions;
}

std::vector<uint64_t>
workspace::replace_all(std::vector<std::pair<std::string, tensor>> values) {
  map_type fresh;
  std::vector<slot*> slots;
  slots.reserve(values.size());
  for (auto& [name, value] : values) {
    auto& entry = fresh[std::move(name)];
    entry.value = std::make_shared<tensor>(std::move(value));
    slots.push_back(&entry);
  }
  std::vector<uint64_t> versions;
  versions.reserve(slots.size());
  annotated_mutex::guard guard{mtx_};
  // A later pair of the same name wins: it gets the newer version.
  for (auto* entry : slots) {
    entry->version = next_version();
    versions.push_back(entry->version);
  }
  // The old map is destroyed after unlocking, when `fresh` goes.
  blobs_.swap(fresh);
  return versions;
}

void workspace::erase(std::string_view name) {
  std::shared_ptr<tensor> dropped; // freed after unlocking
  annotated_mutex::guard guard{mtx_};
  auto i = blobs_.find(name);
  if (i != blobs_.end()) {
    dropped = std::move(i->second.value);
    blobs_.erase(i);
  }
}

std::vector<std::string> workspace::names() const {
  annotated_mutex::guard guard{mtx_};
  std::vector<std::string> result;
  result.reserve(blobs_.size());
  for (auto& kvp : blobs_)
    result.push_back(kvp.first);
  return result;
}

size_t workspace::blob_count() const {
  annotated_mutex::guard guard{mtx_};
  return blobs_.size();
}

caf::expected<std::vector<workspace::named_blob>>
workspace::snapshot(const std::vector<std::string>& names) const {
  std::vector<named_blob> result;
  result.reserve(names.size());
  annotated_mutex::guard guard{mtx_};
  for (auto& name : names) {
    auto i = blobs_.find(name);
    if (i == blobs_.end())
      return make_error(runtime_errc::missing_blob,
                        "snapshot: blob '" + name + "' does not exist");
    result.push_back(
      named_blob{name, i->second.value, i->second.version, i->second.exposed});
  }
  return result;
}

std::vector<workspace::named_blob> workspace::snapshot_all() const {
  annotated_mutex::guard guard{mtx_};
  std::vector<named_blob> result;
  result.reserve(blobs_.size());
  for (auto& [name, entry] : blobs_)
    result.push_back(
      named_blob{name, entry.value, entry.version, entry.exposed});
  return result;
}

// -- access -------------------------------------------------------------------

workspace::access::access(workspace& ws)
  : guard_(std::in_place, ws.mtx_), ws_(&ws) {
  // nop
}

workspace::access::access(workspace& ws, std::defer_lock_t) : ws_(&ws) {
  // nop
}

const tensor* workspace::access::find(std::string_view name) const {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  return i != blobs().end() ? i->second.value.get() : nullptr;
}

bool workspace::access::has(std::string_view name) const {
  assert(guard_.has_value());
  return blobs().count(name) > 0;
}

tensor& workspace::access::mutable_blob(const std::string& name) {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  if (i == blobs().end()) {
    auto ptr = std::make_shared<tensor>(make_scalar<float>(0));
    i = blobs().emplace(name, slot{std::move(ptr), 0}).first;
  } else if (!sole_owner(i->second.value)) {
    // Replacing our pointer leaves the shared tensor to its other owners.
    i->second.value = std::make_shared<tensor>(*i->second.value);
  }
  // The caller may write through the reference until the access ends, and
  // no snapshot can be taken before that: one new version covers it all.
  i->second.version = next_version();
  i->second.exposed = false;
  return *i->second.value;
}

void workspace::access::put(const std::string& name, tensor value) {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  auto version = next_version();
  if (i == blobs().end()) {
    blobs().emplace(name,
                    slot{std::make_shared<tensor>(std::move(value)), version});
    return;
  }
  if (sole_owner(i->second.value))
    *i->second.value = std::move(value); // reuses the control block
  else
    i->second.value = std::make_shared<tensor>(std::move(value));
  i->second.version = version;
  i->second.exposed = false;
}

workspace::blob_ptr workspace::access::share(std::string_view name) const {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  if (i == blobs().end())
    return nullptr;
  return i->second.value;
}

void workspace::access::put_shared(const std::string& name, blob_ptr value) {
  assert(guard_.has_value());
  assert(value != nullptr);
  // Every tensor is created mutable (make_shared<tensor>) and written only
  // by a sole owner, so dropping the const here never writes under a
  // reader: mutable_blob and put clone a tensor that others hold.
  auto ptr = std::const_pointer_cast<tensor>(std::move(value));
  auto version = next_version();
  auto i = blobs().find(name);
  if (i == blobs().end())
    blobs().emplace(name, slot{std::move(ptr), version});
  else
    i->second = slot{std::move(ptr), version};
}

std::shared_ptr<tensor> workspace::access::expose(const std::string& name) {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  if (i == blobs().end())
    return nullptr;
  if (!sole_owner(i->second.value))
    i->second.value = std::make_shared<tensor>(*i->second.value);
  i->second.version = next_version();
  i->second.exposed = true;
  return i->second.value;
}

void workspace::access::disown(const std::string& name, const tensor* value) {
  assert(guard_.has_value());
  auto i = blobs().find(name);
  if (i != blobs().end() && i->second.value.get() == value)
    i->second.value = std::make_shared<tensor>(*i->second.value);
}

} // namespace epochrt
