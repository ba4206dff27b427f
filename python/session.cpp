#include "session.hpp"

#include <utility>

#include "errors.hpp"
#include "gil_release_if_held.hpp"
#include "op_registry.hpp"

namespace epochrt::python {

session::session(const char* python_name, std::shared_ptr<runtime> owner,
                 std::shared_ptr<const epochrt::op_registry> ops)
  : python_name_(python_name), runtime_(std::move(owner)),
    ops_(std::move(ops)) {}

session::~session() {
  gil_release_if_held release;
  session_.reset();
  ops_.reset();
  runtime_.reset();
}

tensor session::fetch(const std::string& node, const std::string& blob) {
  check_not_in_python_op((std::string{python_name_} + ".fetch").c_str());
  auto result = session_->fetch(node, blob);
  if (!result)
    throw error(result.error(), error_kind::error);
  return std::move(*result);
}

std::shared_ptr<const tensor> session::local_blob(const std::string& node,
                                                  const std::string& blob) {
  check_not_in_python_op((std::string{python_name_} + ".fetch").c_str());
  if (auto* local = dynamic_cast<epochrt::local_session*>(session_.get()))
    if (auto ws = local->workspace_of(node)) {
      if (auto value = ws->get(blob))
        return value;
      throw error(make_error(runtime_errc::missing_blob,
                             "node " + node + " has no blob '" + blob + "'"),
                  error_kind::error);
    }
  return nullptr;
}

void session::put(const std::string& node, const std::string& blob,
                  tensor value) {
  check_not_in_python_op((std::string{python_name_} + ".put").c_str());
  throw_if(session_->put(node, blob, std::move(value)));
}

} // namespace epochrt::python
