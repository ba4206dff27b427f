#include <epochrt/actors/core/checkpoint_manager_retention.hpp>

#include <string>
#include <utility>
#include <vector>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>

namespace epochrt {

namespace {

caf::error retention_failure(const std::string& what, const caf::error& err) {
  auto code = in_category(err, actors_category)
    ? static_cast<actors_errc>(err.code())
    : actors_errc::checkpoint_failed;
  return make_error(code, what + ": " + error_text(err));
}

// Retention's last step: every node removes the databases of the dropped
// epochs (`request`), and its holders the copies of them.
template <class MakeRequest>
void remove_dropped(manager_self self, MakeRequest request,
                    retention_result result, retention_done done) {
  auto& st = self->state;
  fan_out<pruned_checkpoints>(
    self, st.nodes, st.timeout, {"checkpoint retention", -1}, request,
    [result = std::move(result),
     done](caf::expected<std::vector<pruned_checkpoints>> pruned) mutable {
      if (!pruned) {
        done(retention_failure("old checkpoints were not all removed",
                               pruned.error()));
        return;
      }
      for (auto& node : *pruned) {
        result.removed.insert(result.removed.end(), node.removed.begin(),
                              node.removed.end());
        result.bytes += node.bytes;
      }
      done(std::move(result));
    });
}

} // namespace

void retain(manager_self self, int64_t epoch, size_t keep_last,
            retention_done done) {
  auto& st = self->state;
  if (keep_last == 0 || st.nodes.empty()) {
    done(retention_result{});
    return;
  }
  auto committed = st.metadata->committed_epochs();
  if (!committed) {
    done(retention_failure("the committed epochs cannot be read",
                           committed.error()));
    return;
  }
  // Named, not structured bindings: C++17 lambdas cannot capture those.
  auto plan = plan_retention(std::move(*committed), keep_last, epoch);
  auto dropped = std::move(plan.dropped);
  retention_result result;
  result.kept = std::move(plan.kept);
  if (dropped.empty()) {
    done(std::move(result));
    return;
  }
  std::vector<std::vector<std::string>> kept_dbs;
  for (auto& node : st.nodes) {
    std::vector<std::string> dbs;
    for (auto e : result.kept) {
      auto db = db_of(st, node.name, e, {});
      if (!db) {
        done(std::move(db.error()));
        return;
      }
      dbs.push_back(std::move(*db));
    }
    kept_dbs.push_back(std::move(dbs));
  }
  auto request = [kept_dbs](bool check_only) {
    return [kept_dbs, check_only, i = size_t{0}](const node_ref& node) mutable {
      return prune_checkpoints{node.name, kept_dbs[i++], check_only};
    };
  };
  auto prune = [self, request, dropped, result,
                done](caf::expected<std::vector<pruned_checkpoints>> checked) {
    if (!checked) {
      done(retention_failure("a kept checkpoint is not readable",
                             checked.error()));
      return;
    }
    auto& st = self->state;
    for (auto e : dropped)
      if (auto err = st.metadata->uncommit(e)) {
        done(retention_failure(
          "epoch " + std::to_string(e) + " could not be uncommitted", err));
        return;
      }
    detail::log(self->system())
      .info("keeping epochs {} to {}: removing older checkpoints",
            result.kept.front(), result.kept.back());
    // The daemons' copy of the record forgets the dropped epochs before
    // their databases go, as the master's own does.
    share_record(self, [self, request, result, done] {
      remove_dropped(self, request(false), result, done);
    });
  };
  fan_out<pruned_checkpoints>(self, st.nodes, st.timeout,
                              {"checkpoint retention check", -1}, request(true),
                              std::move(prune));
}

void apply_retention(manager_self self, int64_t epoch,
                     std::function<void()> done) {
  retain(self, epoch, self->state.keep_last,
         [self, done](caf::expected<retention_result> result) {
           if (!result)
             detail::log(self->system())
               .warn("retention skipped: {}", error_text(result.error()));
           else if (!result->removed.empty())
             detail::log(self->system())
               .info("removed {} old checkpoint databases ({} bytes)",
                     result->removed.size(), result->bytes);
           done();
         });
}

} // namespace epochrt
