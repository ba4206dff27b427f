#pragma once

// Field-by-field comparison of message values, written out by hand for
// every type. It deliberately does not go through CAF's inspectors: a field
// missing from an `inspect` is neither serialized nor printed by
// `deep_to_string`, so an inspector-based comparison could not see it lost.

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/message.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt::test {

/// Compares two values of one type field by field and records where they
/// differ ("job_def.init_group.tasks[1].steps[0].num_iter: 7 != 8").
class field_diff {
public:
  template <class T>
  void compare(const std::string& root, const T& x, const T& y) {
    visit(root, x, y);
  }

  /// Every path that differs, with both values.
  const std::vector<std::string>& differences() const noexcept {
    return differences_;
  }

  /// The names of the top-level fields the comparison visited.
  const std::vector<std::string>& top_fields() const noexcept {
    return top_fields_;
  }

  /// True when some difference lies in top-level field `name`.
  bool differs_in(const std::string& name) const {
    return differing_top_fields_.count(name) > 0;
  }

  /// The differences as one text, at most `max` of them.
  std::string report(size_t max = 20) const;

private:
  void differ(const std::string& path, const std::string& x,
              const std::string& y);

  // Compares member `name` of a struct at `path`.
  template <class T>
  void
  field(const std::string& path, const char* name, const T& x, const T& y) {
    if (depth_ == 0) {
      top_fields_.emplace_back(name);
      current_top_field_ = name;
    }
    ++depth_;
    visit(path + "." + name, x, y);
    --depth_;
  }

  // Leaves: numbers, strings, enums and actor handles.
  template <class T>
  void visit(const std::string& path, const T& x, const T& y) {
    static_assert(std::is_arithmetic<T>::value || std::is_enum<T>::value
                    || std::is_same<T, std::string>::value
                    || std::is_same<T, caf::actor>::value,
                  "field_diff needs an overload that lists this type's "
                  "fields");
    if (x == y)
      return;
    if constexpr (std::is_enum<T>::value)
      differ(path, std::to_string(static_cast<int>(x)),
             std::to_string(static_cast<int>(y)));
    else
      differ(path, caf::deep_to_string(x), caf::deep_to_string(y));
  }

  template <class T>
  void visit(const std::string& path, const std::vector<T>& x,
             const std::vector<T>& y) {
    if (x.size() != y.size())
      differ(path + ".size()", std::to_string(x.size()),
             std::to_string(y.size()));
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      visit(path + "[" + std::to_string(i) + "]", x[i], y[i]);
  }

  template <class V>
  void visit(const std::string& path, const std::map<std::string, V>& x,
             const std::map<std::string, V>& y) {
    for (auto& [key, value] : x) {
      auto i = y.find(key);
      if (i == y.end())
        differ(path + "[\"" + key + "\"]", "present", "missing");
      else
        visit(path + "[\"" + key + "\"]", value, i->second);
    }
    for (auto& kvp : y)
      if (x.count(kvp.first) == 0)
        differ(path + "[\"" + kvp.first + "\"]", "missing", "present");
  }

  // Payloads: one entry for the whole buffer, not one per byte.
  void visit(const std::string& path, const std::vector<char>& x,
             const std::vector<char>& y);

  // A message inside a message (exchange_forward, exchange_relayed): the
  // types of its elements, then the fields of the exchange message it holds.
  // One of a type not listed in field_diff.cpp always differs.
  void visit(const std::string& path, const caf::message& x,
             const caf::message& y);

  // Compares `x` and `y` as holding one T, when `x` does; false otherwise.
  template <class T>
  bool visit_payload_as(const std::string& path, const char* name,
                        const caf::message& x, const caf::message& y);

  void visit(const std::string& path, const tensor& x, const tensor& y);
  void visit(const std::string& path, const op_def& x, const op_def& y);
  void visit(const std::string& path, const step_def& x, const step_def& y);
  void visit(const std::string& path, const task_def& x, const task_def& y);
  void visit(const std::string& path, const task_group_def& x,
             const task_group_def& y);
  void visit(const std::string& path, const channel_def& x,
             const channel_def& y);
  void visit(const std::string& path, const stop_condition& x,
             const stop_condition& y);
  void visit(const std::string& path, const job_def& x, const job_def& y);
  void visit(const std::string& path, const blob_entry& x, const blob_entry& y);
  void visit(const std::string& path, const manifest& x, const manifest& y);
  void visit(const std::string& path, const blob_chunk& x, const blob_chunk& y);
  void visit(const std::string& path, const checkpoint_stats& x,
             const checkpoint_stats& y);
  void visit(const std::string& path, const checkpoint_metadata& x,
             const checkpoint_metadata& y);
  void visit(const std::string& path, const blob_value& x, const blob_value& y);
  void visit(const std::string& path, const run_tasks& x, const run_tasks& y);
  void visit(const std::string& path, const cancel_tasks& x,
             const cancel_tasks& y);
  void visit(const std::string& path, const task_output& x,
             const task_output& y);
  void visit(const std::string& path, const op_timing& x, const op_timing& y);
  void visit(const std::string& path, const task_timing& x,
             const task_timing& y);
  void visit(const std::string& path, const tasks_done& x, const tasks_done& y);
  void visit(const std::string& path, const fetch_blobs& x,
             const fetch_blobs& y);
  void visit(const std::string& path, const blob_values& x,
             const blob_values& y);
  void visit(const std::string& path, const put_blobs& x, const put_blobs& y);
  void visit(const std::string& path, const check_ops& x, const check_ops& y);
  void visit(const std::string& path, const init_checkpoint& x,
             const init_checkpoint& y);
  void visit(const std::string& path, const blob_names& x, const blob_names& y);
  void visit(const std::string& path, const save_checkpoint& x,
             const save_checkpoint& y);
  void visit(const std::string& path, const load_checkpoint& x,
             const load_checkpoint& y);
  void visit(const std::string& path, const check_checkpoint& x,
             const check_checkpoint& y);
  void visit(const std::string& path, const checkpoint_status& x,
             const checkpoint_status& y);
  void visit(const std::string& path, const node_ref& x, const node_ref& y);
  void visit(const std::string& path, const ckpt_set_params& x,
             const ckpt_set_params& y);
  void visit(const std::string& path, const ckpt_init& x, const ckpt_init& y);
  void visit(const std::string& path, const ckpt_save& x, const ckpt_save& y);
  void visit(const std::string& path, const ckpt_load& x, const ckpt_load& y);
  void visit(const std::string& path, const ckpt_exists& x,
             const ckpt_exists& y);
  void visit(const std::string& path, const ckpt_verify_copies& x,
             const ckpt_verify_copies& y);
  void visit(const std::string& path, const database_check& x,
             const database_check& y);
  void visit(const std::string& path, const database_checks& x,
             const database_checks& y);
  void visit(const std::string& path, const ckpt_retain& x,
             const ckpt_retain& y);
  void visit(const std::string& path, const retention_result& x,
             const retention_result& y);
  void visit(const std::string& path, const ckpt_resume_epoch& x,
             const ckpt_resume_epoch& y);
  void visit(const std::string& path, const resume_point& x,
             const resume_point& y);
  void visit(const std::string& path, const ckpt_write_metadata& x,
             const ckpt_write_metadata& y);
  void visit(const std::string& path, const ckpt_report& x,
             const ckpt_report& y);
  void visit(const std::string& path, const ckpt_accessible& x,
             const ckpt_accessible& y);
  void visit(const std::string& path, const run_job& x, const run_job& y);
  void visit(const std::string& path, const run_attempt& x,
             const run_attempt& y);
  void visit(const std::string& path, const job_result& x, const job_result& y);
  void visit(const std::string& path, const snapshot_taken& x,
             const snapshot_taken& y);
  void visit(const std::string& path, const reset_workspace& x,
             const reset_workspace& y);
  void visit(const std::string& path, const begin_save& x, const begin_save& y);
  void visit(const std::string& path, const end_save& x, const end_save& y);
  void visit(const std::string& path, const ckpt_save_async& x,
             const ckpt_save_async& y);
  void visit(const std::string& path, const ckpt_flush& x, const ckpt_flush& y);
  void visit(const std::string& path, const ckpt_result& x,
             const ckpt_result& y);
  void visit(const std::string& path, const ckpt_read& x, const ckpt_read& y);
  void visit(const std::string& path, const remote_hello& x,
             const remote_hello& y);
  void visit(const std::string& path, const remote_challenge& x,
             const remote_challenge& y);
  void visit(const std::string& path, const remote_attach& x,
             const remote_attach& y);
  void visit(const std::string& path, const remote_attached& x,
             const remote_attached& y);
  void visit(const std::string& path, const database_file& x,
             const database_file& y);
  void visit(const std::string& path, const database_listing& x,
             const database_listing& y);
  void visit(const std::string& path, const copy_offer& x, const copy_offer& y);
  void visit(const std::string& path, const copy_ticket& x,
             const copy_ticket& y);
  void visit(const std::string& path, const copy_data& x, const copy_data& y);
  void visit(const std::string& path, const copy_close& x, const copy_close& y);
  void visit(const std::string& path, const copy_list& x, const copy_list& y);
  void visit(const std::string& path, const copy_listings& x,
             const copy_listings& y);
  void visit(const std::string& path, const copy_open& x, const copy_open& y);
  void visit(const std::string& path, const copy_read& x, const copy_read& y);
  void visit(const std::string& path, const copy_piece& x, const copy_piece& y);
  void visit(const std::string& path, const copy_prune& x, const copy_prune& y);
  void visit(const std::string& path, const keep_commit_record& x,
             const keep_commit_record& y);
  void visit(const std::string& path, const fetch_commit_record& x,
             const fetch_commit_record& y);
  void visit(const std::string& path, const read_checkpoint& x,
             const read_checkpoint& y);
  void visit(const std::string& path, const prune_checkpoints& x,
             const prune_checkpoints& y);
  void visit(const std::string& path, const pruned_checkpoints& x,
             const pruned_checkpoints& y);
  void visit(const std::string& path, const task_ref& x, const task_ref& y);
  void visit(const std::string& path, const channel_plan& x,
             const channel_plan& y);
  void visit(const std::string& path, const collective_plan& x,
             const collective_plan& y);
  void visit(const std::string& path, const exchange_peer& x,
             const exchange_peer& y);
  void visit(const std::string& path, const exchange_plan& x,
             const exchange_plan& y);
  void visit(const std::string& path, const exchange_end& x,
             const exchange_end& y);
  void visit(const std::string& path, const channel_state& x,
             const channel_state& y);
  void visit(const std::string& path, const exchange_report& x,
             const exchange_report& y);
  void visit(const std::string& path, const exchange_put& x,
             const exchange_put& y);
  void visit(const std::string& path, const exchange_take& x,
             const exchange_take& y);
  void visit(const std::string& path, const exchange_close& x,
             const exchange_close& y);
  void visit(const std::string& path, const exchange_reply& x,
             const exchange_reply& y);
  void visit(const std::string& path, const collective_contribution& x,
             const collective_contribution& y);
  void visit(const std::string& path, const exchange_part& x,
             const exchange_part& y);
  void visit(const std::string& path, const exchange_result& x,
             const exchange_result& y);
  void visit(const std::string& path, const exchange_task_end& x,
             const exchange_task_end& y);
  void visit(const std::string& path, const exchange_node_lost& x,
             const exchange_node_lost& y);
  void visit(const std::string& path, const exchange_task_view& x,
             const exchange_task_view& y);
  void visit(const std::string& path, const exchange_probe& x,
             const exchange_probe& y);
  void visit(const std::string& path, const exchange_probe_reply& x,
             const exchange_probe_reply& y);
  void visit(const std::string& path, const exchange_deadlock& x,
             const exchange_deadlock& y);
  void visit(const std::string& path, const exchange_forward& x,
             const exchange_forward& y);
  void visit(const std::string& path, const exchange_relayed& x,
             const exchange_relayed& y);
  void visit(const std::string& path, const exchange_relay_ack& x,
             const exchange_relay_ack& y);

  std::vector<std::string> differences_;
  std::vector<std::string> top_fields_;
  std::set<std::string> differing_top_fields_;
  std::string current_top_field_;
  int depth_ = 0;
};

} // namespace epochrt::test
