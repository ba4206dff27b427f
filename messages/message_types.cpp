#include <epochrt/messages/message_types.hpp>

#include <caf/actor_system_config.hpp>

#include <epochrt/messages/message_list.hpp>

namespace epochrt {

// Names are part of the wire protocol: never rename a listed type.
#define EPOCHRT_REGISTER_MESSAGE(...) \
  EPOCHRT_REGISTER_MESSAGE_I(EPOCHRT_PP_FIRST(__VA_ARGS__))
#define EPOCHRT_REGISTER_MESSAGE_I(T) \
  cfg.add_message_type<T>(message_fields<T>::name);

void add_message_types(caf::actor_system_config& cfg) {
  EPOCHRT_ALL_MESSAGES(EPOCHRT_REGISTER_MESSAGE)
}

} // namespace epochrt
