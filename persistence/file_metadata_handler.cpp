#include "persistence/file_metadata_handler.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "messages/codec.hpp"
#include "persistence/detail/fs_util.hpp"
#include "persistence/persistence_errc.hpp"

namespace fs = std::filesystem;

namespace epochrt {

namespace {

std::string epochs_text(const std::vector<int64_t>& xs) {
  if (xs.empty())
    return "none";
  std::string result;
  for (auto x : xs) {
    if (!result.empty())
      result += ", ";
    result += std::to_string(x);
  }
  return result;
}

} // namespace

file_metadata_handler::file_metadata_handler(std::string dir)
  : dir_(std::move(dir)) {
  file_ = (fs::path{dir_} / file_name).string();
}

caf::error
file_metadata_handler::set_params(const std::string& db_prefix,
                                  const std::vector<std::string>& node_names,
                                  const std::string&) {
  // Kept in memory and stored with the next change: setting parameters must
  // not fail on a directory that does not exist yet.
  db_prefix_ = db_prefix;
  node_names_ = node_names;
  return {};
}

caf::expected<checkpoint_metadata> file_metadata_handler::load() const {
  auto bytes = detail::read_file(file_);
  if (!bytes) {
    auto& err = bytes.error();
    if (err.category() == persistence_category
        && err.code() == static_cast<uint8_t>(persistence_errc::not_found))
      return checkpoint_metadata{};
    return std::move(bytes.error());
  }
  auto result = decode<checkpoint_metadata>(*bytes);
  if (!result)
    return make_error(persistence_errc::corrupt,
                      "metadata file " + file_ + " does not decode");
  return result;
}

caf::error file_metadata_handler::store(checkpoint_metadata& x) {
  if (!db_prefix_.empty())
    x.db_prefix = db_prefix_;
  if (!node_names_.empty())
    x.node_names = node_names_;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return make_error(persistence_errc::io_error,
                      "create " + dir_ + ": " + ec.message());
  return detail::write_file_durably(file_, encode(x));
}

namespace {

// Adds `epoch` to the ascending list unless it is there already.
void insert_sorted(std::vector<int64_t>& epochs, int64_t epoch) {
  auto pos = std::lower_bound(epochs.begin(), epochs.end(), epoch);
  if (pos == epochs.end() || *pos != epoch)
    epochs.insert(pos, epoch);
}

} // namespace

caf::expected<std::optional<int64_t>>
file_metadata_handler::last_epoch(std::optional<int64_t> user_epoch) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  auto& epochs = state->committed_epochs;
  if (user_epoch) {
    if (std::binary_search(epochs.begin(), epochs.end(), *user_epoch))
      return user_epoch;
    return make_error(persistence_errc::not_committed,
                      "epoch " + std::to_string(*user_epoch)
                        + " is not committed (committed: " + epochs_text(epochs)
                        + ")");
  }
  if (epochs.empty())
    return std::optional<int64_t>{};
  return std::optional<int64_t>{epochs.back()};
}

caf::error file_metadata_handler::write(int64_t epoch) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  insert_sorted(state->committed_epochs, epoch);
  return store(*state);
}

caf::error file_metadata_handler::uncommit(int64_t epoch) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  auto& epochs = state->committed_epochs;
  auto pos = std::lower_bound(epochs.begin(), epochs.end(), epoch);
  if (pos == epochs.end() || *pos != epoch)
    return {}; // nothing to forget
  epochs.erase(pos);
  if (state->final_epoch == epoch)
    state->final_epoch = -1;
  return store(*state);
}

caf::error file_metadata_handler::write_final(int64_t epoch) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  insert_sorted(state->committed_epochs, epoch);
  state->final_epoch = epoch;
  return store(*state);
}

caf::error file_metadata_handler::mark_final(int64_t epoch) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  if (!std::binary_search(state->committed_epochs.begin(),
                          state->committed_epochs.end(), epoch))
    return make_error(persistence_errc::not_committed,
                      "epoch " + std::to_string(epoch)
                        + " cannot be final: it is not committed");
  state->final_epoch = epoch;
  return store(*state);
}

std::optional<int64_t> file_metadata_handler::final_epoch() {
  auto state = load();
  if (!state || state->final_epoch < 0
      || !std::binary_search(state->committed_epochs.begin(),
                             state->committed_epochs.end(), state->final_epoch))
    return std::nullopt;
  return state->final_epoch;
}

std::vector<int64_t> file_metadata_handler::committed_epochs() {
  auto state = load();
  if (!state)
    return {};
  return std::move(state->committed_epochs);
}

caf::error
file_metadata_handler::report(const std::string& action,
                              const std::vector<checkpoint_stats>& stats) {
  auto state = load();
  if (!state)
    return std::move(state.error());
  state->last_action = action;
  state->last_stats = stats;
  return store(*state);
}

bool file_metadata_handler::cp_accessible(std::optional<int64_t> epoch) {
  if (epoch) {
    auto state = load();
    return state
      && std::binary_search(state->committed_epochs.begin(),
                            state->committed_epochs.end(), *epoch);
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_, ec))
    return false;
  // Permission bits do not tell (root ignores them, ACLs, read-only
  // mounts): try it.
  auto probe
    = (fs::path{dir_} / (".epochrt.probe." + std::to_string(::getpid())))
        .string();
  if (detail::write_file_durably(probe, "probe"))
    return false;
  fs::remove(probe, ec);
  return true;
}

} // namespace epochrt
