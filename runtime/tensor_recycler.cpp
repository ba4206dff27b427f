#include <epochrt/runtime/tensor_recycler.hpp>

#include <utility>

namespace epochrt {

std::shared_ptr<tensor_recycler> tensor_recycler::make(size_t max_bytes) {
  return std::shared_ptr<tensor_recycler>{new tensor_recycler(max_bytes)};
}

tensor_recycler::tensor_recycler(size_t max_bytes) : max_bytes_(max_bytes) {
  // nop
}

std::shared_ptr<tensor> tensor_recycler::make_tensor(dtype type,
                                                     std::vector<int64_t> shape,
                                                     size_t bytes) {
  auto* x = new tensor;
  x->type = type;
  x->shape = std::move(shape);
  x->data = take(bytes);
  if (x->data.size() != bytes)
    x->data.resize(bytes);
  std::weak_ptr<tensor_recycler> weak = weak_from_this();
  return std::shared_ptr<tensor>{x, [weak](tensor* t) {
                                   if (auto self = weak.lock())
                                     self->give_back(std::move(t->data));
                                   delete t;
                                 }};
}

size_t tensor_recycler::kept_bytes() const {
  annotated_mutex::guard guard{mtx_};
  return kept_bytes_;
}

std::vector<char> tensor_recycler::take(size_t bytes) {
  if (bytes < min_bytes)
    return {};
  annotated_mutex::guard guard{mtx_};
  // The newest first: the one most likely still in the cache.
  for (auto i = kept_.rbegin(); i != kept_.rend(); ++i) {
    if (i->size() != bytes)
      continue;
    auto payload = std::move(*i);
    kept_.erase(std::next(i).base());
    kept_bytes_ -= payload.size();
    return payload;
  }
  return {};
}

void tensor_recycler::give_back(std::vector<char> payload) {
  if (payload.size() < min_bytes || payload.size() > max_bytes_)
    return;
  std::vector<std::vector<char>> freed; // freed outside the lock
  {
    annotated_mutex::guard guard{mtx_};
    while (kept_bytes_ + payload.size() > max_bytes_ && !kept_.empty()) {
      kept_bytes_ -= kept_.front().size();
      freed.push_back(std::move(kept_.front()));
      kept_.erase(kept_.begin());
    }
    kept_bytes_ += payload.size();
    kept_.push_back(std::move(payload));
  }
}

} // namespace epochrt
