#include <epochrt/persistence/commit_record.hpp>

#include <algorithm>

#include <epochrt/persistence/persistence_errc.hpp>

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

bool is_committed(const checkpoint_metadata& record, int64_t epoch) {
  return std::binary_search(record.committed_epochs.begin(),
                            record.committed_epochs.end(), epoch);
}

checkpoint_metadata with_commit(checkpoint_metadata record, int64_t epoch,
                                bool final) {
  auto& epochs = record.committed_epochs;
  auto pos = std::lower_bound(epochs.begin(), epochs.end(), epoch);
  if (pos == epochs.end() || *pos != epoch)
    epochs.insert(pos, epoch);
  if (final)
    record.final_epoch = epoch;
  return record;
}

checkpoint_metadata without_commit(checkpoint_metadata record, int64_t epoch) {
  auto& epochs = record.committed_epochs;
  auto pos = std::lower_bound(epochs.begin(), epochs.end(), epoch);
  if (pos == epochs.end() || *pos != epoch)
    return record;
  epochs.erase(pos);
  if (record.final_epoch == epoch)
    record.final_epoch = -1;
  return record;
}

caf::expected<checkpoint_metadata> with_final(checkpoint_metadata record,
                                              int64_t epoch) {
  if (!is_committed(record, epoch))
    return make_error(persistence_errc::not_committed,
                      "epoch " + std::to_string(epoch)
                        + " cannot be final: it is not committed");
  record.final_epoch = epoch;
  return record;
}

checkpoint_metadata with_stats(checkpoint_metadata record, std::string action,
                               std::vector<checkpoint_stats> stats) {
  record.last_action = std::move(action);
  record.last_stats = std::move(stats);
  return record;
}

caf::expected<std::optional<int64_t>>
resume_epoch(const checkpoint_metadata& record,
             std::optional<int64_t> user_epoch) {
  auto& epochs = record.committed_epochs;
  if (user_epoch) {
    if (is_committed(record, *user_epoch))
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

std::optional<int64_t> final_epoch(const checkpoint_metadata& record) {
  if (record.final_epoch < 0 || !is_committed(record, record.final_epoch))
    return std::nullopt;
  return record.final_epoch;
}

} // namespace epochrt
