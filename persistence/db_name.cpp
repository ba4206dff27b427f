#include <epochrt/persistence/db_name.hpp>

#include <epochrt/messages/names.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt {

std::string db_name(int64_t epoch, std::string_view node,
                    std::string_view db_prefix, std::string_view path_prefix) {
  std::string leaf{node};
  leaf += '.';
  leaf += std::to_string(epoch);
  if (!path_prefix.empty())
    return std::string{path_prefix} + leaf;
  if (db_prefix.empty())
    return leaf;
  std::string result{db_prefix};
  if (result.back() != '/')
    result += '/';
  return result + leaf;
}

caf::expected<std::string> checked_db_name(int64_t epoch, std::string_view node,
                                           std::string_view db_prefix,
                                           std::string_view path_prefix) {
  if (auto problem = node_name_problem(node); !problem.empty())
    return make_error(persistence_errc::invalid_name,
                      "node '" + std::string{node} + "': " + problem);
  if (epoch < 0)
    return make_error(persistence_errc::invalid_name,
                      "negative epoch " + std::to_string(epoch));
  return db_name(epoch, node, db_prefix, path_prefix);
}

caf::expected<std::string> db_path_of_epoch(const std::string& db_path,
                                            int64_t own_epoch, int64_t epoch) {
  auto suffix = "." + std::to_string(own_epoch);
  if (db_path.size() <= suffix.size()
      || db_path.compare(db_path.size() - suffix.size(), suffix.size(), suffix)
        != 0)
    return make_error(
      persistence_errc::corrupt,
      db_path + " refers to the data of epoch " + std::to_string(epoch)
        + ", but its path does not end in its own epoch "
        + std::to_string(own_epoch) + ", so that database cannot be found");
  return db_path.substr(0, db_path.size() - suffix.size()) + "."
    + std::to_string(epoch);
}

caf::expected<int64_t> epoch_of_db_path(std::string_view db_path) {
  auto bad = [&] {
    return make_error(persistence_errc::invalid_name,
                      std::string{db_path.substr(0, 256)}
                        + " does not end in a database's epoch");
  };
  auto dot = db_path.find_last_of('.');
  if (dot == std::string_view::npos)
    return bad();
  auto digits = db_path.substr(dot + 1);
  if (digits.empty() || digits.size() > 18)
    return bad();
  int64_t epoch = 0;
  for (auto c : digits) {
    if (c < '0' || c > '9')
      return bad();
    epoch = epoch * 10 + (c - '0');
  }
  return epoch;
}

} // namespace epochrt
