#include <epochrt/messages/names.hpp>

#include <epochrt/messages/printable.hpp>

namespace epochrt {

namespace {

// ':' for Caffe2's node names ("trainer:0"); none of these can leave a
// directory or start an option when a node name becomes a path.
bool node_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
    || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' || c == ':';
}

} // namespace

bool valid_node_name(std::string_view name) noexcept {
  return node_name_problem(name).empty();
}

std::string node_name_problem(std::string_view name) {
  if (name.empty())
    return "a node name must not be empty";
  if (name.size() > 128)
    return "a node name must be at most 128 characters";
  if (name.front() == '.' || name.front() == '-')
    return "a node name must not start with '.' or '-'";
  for (char c : name)
    if (!node_char(c))
      return "a node name may only contain letters, digits, '_', '.', '-' "
             "and ':'";
  return {};
}

bool valid_blob_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 256)
    return false;
  for (char c : name)
    if (c <= ' ' || c > '~')
      return false;
  return true;
}

std::string blob_name_problem(std::string_view name) {
  if (valid_blob_name(name))
    return {};
  // A name of any length, with any bytes, shown so that a log line stays
  // one line of readable length.
  std::string shown{name.substr(0, 64)};
  return "invalid blob name '" + printable(shown)
    + (name.size() > 64
         ? "...' of " + std::to_string(name.size()) + " characters"
         : "'")
    + " (1 to 256 printable characters, no spaces)";
}

} // namespace epochrt
