#include <epochrt/actors/api/actors_errc.hpp>

#include <caf/make_message.hpp>

#include <epochrt/messages/error_text.hpp>

namespace epochrt {

std::string to_string(actors_errc x) {
  switch (x) {
    case actors_errc::unknown_node:
      return "unknown_node";
    case actors_errc::node_lost:
      return "node_lost";
    case actors_errc::task_failed:
      return "task_failed";
    case actors_errc::checkpoint_failed:
      return "checkpoint_failed";
    case actors_errc::not_initialized:
      return "not_initialized";
    case actors_errc::invalid_argument:
      return "invalid_argument";
    case actors_errc::no_checkpoint_manager:
      return "no_checkpoint_manager";
    case actors_errc::auth_failed:
      return "auth_failed";
    case actors_errc::rejected:
      return "rejected";
    case actors_errc::unreachable:
      return "unreachable";
    case actors_errc::stopped:
      return "stopped";
    case actors_errc::job_changed:
      return "job_changed";
    case actors_errc::task_cancelled:
      return "task_cancelled";
  }
  return "unknown";
}

caf::error make_error(actors_errc code, std::string context) {
  return caf::error{static_cast<uint8_t>(code), actors_category,
                    caf::make_message(std::move(context))};
}

std::string lost_node(const caf::error& err) {
  if (!is_node_lost(err))
    return {};
  auto text = error_text(err);
  if (text.compare(0, 5, "node ") != 0)
    return {};
  auto end = text.find_first_of(" :", 5);
  return text.substr(5, end == std::string::npos ? end : end - 5);
}

bool is_error(const caf::error& err, actors_errc code) noexcept {
  return in_category(err, actors_category)
    && err.code() == static_cast<uint8_t>(code);
}

} // namespace epochrt
