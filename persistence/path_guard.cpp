#include <epochrt/persistence/path_guard.hpp>

#include <filesystem>
#include <system_error>

#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

// Normal form without a trailing separator ("a/b/" -> "a/b").
fs::path normal(const fs::path& x) {
  auto result = x.lexically_normal();
  if (!result.has_filename() && result.has_relative_path())
    result = result.parent_path();
  return result;
}

bool inside(const fs::path& root, const fs::path& x) {
  auto rel = x.lexically_relative(root);
  if (rel.empty())
    return false; // different roots, or a relative/absolute mix
  auto first = *rel.begin();
  return first != "..";
}

} // namespace

caf::expected<std::string> resolve_inside(const std::string& root,
                                          const std::string& path) {
  auto reject = [&](const char* why) {
    return make_error(persistence_errc::invalid_name,
                      "path '" + path + "' " + why + " '" + root + "'");
  };
  if (path.empty() || root.empty())
    return reject("is empty or has no root");
  if (path.find('\0') != std::string::npos)
    return reject("holds a NUL, so it is not inside");
  std::error_code ec;
  auto abs_root = normal(fs::absolute(root, ec));
  if (ec)
    return reject("cannot be checked against");
  fs::path candidate{path};
  if (candidate.is_relative())
    candidate = abs_root / candidate;
  candidate = normal(candidate);
  if (!inside(abs_root, candidate))
    return reject("leaves");
  auto real_root = fs::weakly_canonical(abs_root, ec);
  if (ec)
    return reject("cannot be resolved against");
  auto real_candidate = fs::weakly_canonical(candidate, ec);
  if (ec || !inside(normal(real_root), normal(real_candidate)))
    return reject("leaves (through a symlink)");
  return candidate.string();
}

caf::expected<std::string> resolve_under(const std::string& root,
                                         const std::string& path) {
  auto first = path.find_first_not_of('/');
  if (first == std::string::npos)
    return make_error(persistence_errc::invalid_name,
                      "path '" + path + "' names no file under '" + root + "'");
  return resolve_inside(root, path.substr(first));
}

} // namespace epochrt
