#include <epochrt/runtime/op_context.hpp>

#include <cassert>

namespace epochrt {

int64_t element_as_int(const tensor& x, size_t i) noexcept {
  switch (x.type) {
    case dtype::i64:
      return x.values<int64_t>()[i];
    case dtype::i32:
      return x.values<int32_t>()[i];
    case dtype::u8:
      return x.values<uint8_t>()[i];
    case dtype::boolean:
      return x.data[i] != 0 ? 1 : 0;
    default:
      return static_cast<int64_t>(element_as_double(x, i));
  }
}

op_context::op_context(workspace::access& ws, scratch_map* scratch,
                       const op_def& def, const std::string& node,
                       const std::atomic<bool>* cancel, task_port* port,
                       call_state* calls)
  : ws_(ws), scratch_(scratch), def_(def), node_(node), cancel_(cancel),
    port_(port), calls_(calls) {
  // nop
}

const tensor* op_context::find(std::string_view name) const {
  if (scratch_ != nullptr) {
    auto i = scratch_->find(name);
    if (i != scratch_->end())
      return &i->second;
  }
  return ws_.find(name);
}

bool op_context::has_output(size_t i) const {
  assert(i < def_.outputs.size());
  return find(def_.outputs[i]) != nullptr;
}

tensor& op_context::writable(const std::string& name) {
  if (scratch_ != nullptr) {
    auto i = scratch_->find(name);
    if (i != scratch_->end())
      return i->second;
    if (!ws_.has(name))
      return scratch_->emplace(name, make_scalar<float>(0)).first->second;
  }
  return ws_.mutable_blob(name);
}

const tensor& op_context::input(size_t i) const {
  assert(i < def_.inputs.size());
  auto* result = find(def_.inputs[i]);
  assert(result != nullptr); // the runner checks inputs before the op runs
  return *result;
}

tensor& op_context::mutable_input(size_t i) {
  assert(i < def_.inputs.size());
  return writable(def_.inputs[i]);
}

tensor& op_context::output(size_t i) {
  assert(i < def_.outputs.size());
  return writable(def_.outputs[i]);
}

void op_context::set_output(size_t i, tensor value) {
  assert(i < def_.outputs.size());
  auto& name = def_.outputs[i];
  if (scratch_ != nullptr) {
    auto j = scratch_->find(name);
    if (j != scratch_->end()) {
      j->second = std::move(value);
      return;
    }
    if (!ws_.has(name)) {
      scratch_->emplace(name, std::move(value));
      return;
    }
  }
  ws_.put(name, std::move(value));
}

const tensor* op_context::scratch_blob(std::string_view name) const {
  if (scratch_ == nullptr)
    return nullptr;
  auto j = scratch_->find(name);
  return j != scratch_->end() ? &j->second : nullptr;
}

tensor_ptr op_context::share_input(size_t i) const {
  assert(i < def_.inputs.size());
  auto& name = def_.inputs[i];
  if (auto* scratch = scratch_blob(name))
    return std::make_shared<tensor>(*scratch);
  auto result = ws_.share(name);
  assert(result != nullptr); // the runner checks inputs before the op runs
  return result;
}

void op_context::set_output_shared(size_t i, tensor_ptr value) {
  assert(i < def_.outputs.size());
  auto& name = def_.outputs[i];
  if (scratch_ != nullptr) {
    auto j = scratch_->find(name);
    if (j != scratch_->end()) {
      j->second = *value;
      return;
    }
    if (!ws_.has(name)) {
      scratch_->emplace(name, *value);
      return;
    }
  }
  ws_.put_shared(name, std::move(value));
}

std::shared_ptr<tensor> op_context::expose_input(size_t i) {
  assert(i < def_.inputs.size());
  auto& name = def_.inputs[i];
  if (auto* scratch = scratch_blob(name))
    return std::make_shared<tensor>(*scratch);
  auto result = ws_.expose(name);
  assert(result != nullptr); // the runner checks inputs before the op runs
  return result;
}

void op_context::settle_input(size_t i,
                              const std::shared_ptr<tensor>& exposed) {
  assert(i < def_.inputs.size());
  if (scratch_ == nullptr)
    return; // the workspace's own tensor: written in place already
  auto j = scratch_->find(def_.inputs[i]);
  if (j != scratch_->end() && !(j->second == *exposed))
    j->second = *exposed;
}

void op_context::disown_input(size_t i, const tensor* exposed) {
  assert(i < def_.inputs.size());
  ws_.disown(def_.inputs[i], exposed);
}

caf::error op_context::wait_for(std::shared_ptr<exchange_wait> wait) {
  assert(wait != nullptr);
  if (calls_ == nullptr)
    return fail(runtime_errc::op_failed,
                "this op waits for other tasks, which its runner cannot do");
  assert(calls_->resumed == nullptr);
  calls_->requested = std::move(wait);
  return caf::none;
}

const tensor* op_context::arg(const std::string& name) const {
  auto i = def_.args.find(name);
  if (i == def_.args.end() || !i->second.consistent())
    return nullptr;
  return &i->second;
}

int64_t op_context::int_arg(const std::string& name, int64_t fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->type == dtype::string || x->element_count() != 1)
    return fallback;
  return element_as_int(*x, 0);
}

double op_context::number_arg(const std::string& name, double fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->type == dtype::string || x->element_count() != 1)
    return fallback;
  return element_as_double(*x, 0);
}

bool op_context::bool_arg(const std::string& name, bool fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->type == dtype::string || x->element_count() != 1)
    return fallback;
  return element_as_double(*x, 0) != 0;
}

std::string op_context::string_arg(const std::string& name,
                                   std::string fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->type != dtype::string || x->strings.size() != 1)
    return fallback;
  return x->strings[0];
}

std::vector<int64_t>
op_context::int_list_arg(const std::string& name,
                         std::vector<int64_t> fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->shape.size() != 1)
    return fallback;
  std::vector<int64_t> result;
  if (x->type == dtype::string)
    return x->strings.empty() ? result : fallback;
  auto n = x->element_count();
  result.reserve(n);
  for (size_t i = 0; i < n; ++i)
    result.push_back(element_as_int(*x, i));
  return result;
}

std::vector<double>
op_context::number_list_arg(const std::string& name,
                            std::vector<double> fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->shape.size() != 1)
    return fallback;
  std::vector<double> result;
  if (x->type == dtype::string)
    return x->strings.empty() ? result : fallback;
  auto n = x->element_count();
  result.reserve(n);
  for (size_t i = 0; i < n; ++i)
    result.push_back(element_as_double(*x, i));
  return result;
}

std::vector<std::string>
op_context::string_list_arg(const std::string& name,
                            std::vector<std::string> fallback) const {
  auto* x = arg(name);
  if (x == nullptr || x->shape.size() != 1)
    return fallback;
  if (x->type != dtype::string)
    return x->element_count() == 0 ? std::vector<std::string>{} : fallback;
  return x->strings;
}

caf::error op_context::fail(runtime_errc code, const std::string& what) const {
  return make_error(code, what);
}

} // namespace epochrt
