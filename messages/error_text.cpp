#include <epochrt/messages/error_text.hpp>

#include <map>
#include <mutex>

#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace epochrt {

namespace {

struct namer_registry {
  std::mutex mtx;
  std::map<caf::atom_value, error_code_namer> namers;
};

// A function-local static: registrations run during static initialization
// of other translation units, in no defined order.
namer_registry& registry() {
  static namer_registry instance;
  return instance;
}

error_code_namer namer_of(caf::atom_value category) {
  auto& reg = registry();
  std::lock_guard<std::mutex> guard{reg.mtx};
  auto i = reg.namers.find(category);
  return i == reg.namers.end() ? nullptr : i->second;
}

std::string context_text(const caf::message& ctx) {
  if (ctx.match_elements<std::string>())
    return ctx.get_as<std::string>(0);
  return ctx.empty() ? std::string{} : caf::to_string(ctx);
}

std::string sec_name(uint8_t code) {
  return caf::to_string(static_cast<caf::sec>(code));
}

[[maybe_unused]] const bool sec_registered
  = register_error_category(caf::atom("system"), sec_name);

} // namespace

bool register_error_category(caf::atom_value category, error_code_namer namer) {
  auto& reg = registry();
  std::lock_guard<std::mutex> guard{reg.mtx};
  reg.namers[category] = namer;
  return true;
}

std::string error_text(const caf::error& err, error_form form) {
  if (!err)
    return {};
  const auto& ctx = err.context();
  if (form == error_form::context) {
    if (ctx.match_elements<std::string>())
      return ctx.get_as<std::string>(0);
    return caf::to_string(err);
  }
  auto namer = namer_of(err.category());
  if (namer == nullptr)
    return caf::to_string(err);
  auto text = namer(err.code());
  auto detail = context_text(ctx);
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  return text;
}

} // namespace epochrt
