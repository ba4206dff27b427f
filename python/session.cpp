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

void session::put(const std::string& node, const std::string& blob,
                  tensor value) {
  check_not_in_python_op((std::string{python_name_} + ".put").c_str());
  throw_if(session_->put(node, blob, std::move(value)));
}

} // namespace epochrt::python
