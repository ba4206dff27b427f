#include "test/wire/field_diff.hpp"

#include <boost/core/demangle.hpp>

#include <caf/type_nr.hpp>

namespace epochrt::test {

namespace {

// The types of a message's elements: "(epochrt::exchange_put)".
std::string element_types(const caf::message& x) {
  std::string result = "(";
  for (size_t i = 0; i < x.size(); ++i) {
    if (i > 0)
      result += ", ";
    auto rtti = x.type(i);
    if (rtti.first != 0)
      result += caf::numbered_type_names[rtti.first - 1];
    else if (rtti.second != nullptr)
      result += boost::core::demangle(rtti.second->name());
    else
      result += "?";
  }
  return result + ")";
}

} // namespace

std::string field_diff::report(size_t max) const {
  std::string result;
  for (size_t i = 0; i < differences_.size() && i < max; ++i) {
    result += "\n  ";
    result += differences_[i];
  }
  if (differences_.size() > max)
    result
      += "\n  ... and " + std::to_string(differences_.size() - max) + " more";
  return result;
}

void field_diff::differ(const std::string& path, const std::string& x,
                        const std::string& y) {
  differences_.push_back(path + ": " + x + " != " + y);
  if (depth_ > 0)
    differing_top_fields_.insert(current_top_field_);
}

void field_diff::visit(const std::string& path, const std::vector<char>& x,
                       const std::vector<char>& y) {
  if (x == y)
    return;
  size_t i = 0;
  while (i < x.size() && i < y.size() && x[i] == y[i])
    ++i;
  differ(path, std::to_string(x.size()) + " bytes",
         std::to_string(y.size()) + " bytes, first difference at byte "
           + std::to_string(i));
}

template <class T>
bool field_diff::visit_payload_as(const std::string& path, const char* name,
                                  const caf::message& x,
                                  const caf::message& y) {
  if (!x.match_elements<T>())
    return false;
  // The caller saw the same element types on both sides.
  if (!y.match_elements<T>())
    differ(path, element_types(x), element_types(y));
  else
    visit(path + "(" + name + ")", x.get_as<T>(0), y.get_as<T>(0));
  return true;
}

void field_diff::visit(const std::string& path, const caf::message& x,
                       const caf::message& y) {
  auto x_types = element_types(x);
  auto y_types = element_types(y);
  if (x_types != y_types) {
    differ(path, x_types, y_types);
    return;
  }
  if (x.empty())
    return;
  // What exchange_hub accepts in an exchange_relayed.
  if (visit_payload_as<exchange_put>(path, "exchange_put", x, y)
      || visit_payload_as<exchange_take>(path, "exchange_take", x, y)
      || visit_payload_as<exchange_close>(path, "exchange_close", x, y)
      || visit_payload_as<exchange_reply>(path, "exchange_reply", x, y)
      || visit_payload_as<exchange_part>(path, "exchange_part", x, y)
      || visit_payload_as<exchange_result>(path, "exchange_result", x, y)
      || visit_payload_as<exchange_task_end>(path, "exchange_task_end", x, y)
      || visit_payload_as<exchange_node_lost>(path, "exchange_node_lost", x, y)
      || visit_payload_as<exchange_probe>(path, "exchange_probe", x, y)
      || visit_payload_as<exchange_probe_reply>(path, "exchange_probe_reply", x,
                                                y)
      || visit_payload_as<exchange_deadlock>(path, "exchange_deadlock", x, y)
      || visit_payload_as<exchange_relay_ack>(path, "exchange_relay_ack", x, y))
    return;
  // Unknown content must not pass for equal.
  differ(path, x_types + " (field_diff cannot compare it)", y_types);
}

void field_diff::visit(const std::string& path, const tensor& x,
                       const tensor& y) {
  field(path, "type", x.type, y.type);
  field(path, "shape", x.shape, y.shape);
  field(path, "data", x.data, y.data);
  field(path, "strings", x.strings, y.strings);
}

void field_diff::visit(const std::string& path, const op_def& x,
                       const op_def& y) {
  field(path, "type", x.type, y.type);
  field(path, "inputs", x.inputs, y.inputs);
  field(path, "outputs", x.outputs, y.outputs);
  field(path, "args", x.args, y.args);
}

void field_diff::visit(const std::string& path, const step_def& x,
                       const step_def& y) {
  field(path, "name", x.name, y.name);
  field(path, "ops", x.ops, y.ops);
  field(path, "num_iter", x.num_iter, y.num_iter);
  field(path, "stop_blob", x.stop_blob, y.stop_blob);
}

void field_diff::visit(const std::string& path, const task_def& x,
                       const task_def& y) {
  field(path, "name", x.name, y.name);
  field(path, "node", x.node, y.node);
  field(path, "workspace", x.workspace, y.workspace);
  field(path, "steps", x.steps, y.steps);
  field(path, "outputs", x.outputs, y.outputs);
}

void field_diff::visit(const std::string& path, const task_group_def& x,
                       const task_group_def& y) {
  field(path, "tasks", x.tasks, y.tasks);
}

void field_diff::visit(const std::string& path, const channel_def& x,
                       const channel_def& y) {
  field(path, "name", x.name, y.name);
  field(path, "node", x.node, y.node);
  field(path, "capacity", x.capacity, y.capacity);
  field(path, "blobs", x.blobs, y.blobs);
}

void field_diff::visit(const std::string& path, const stop_condition& x,
                       const stop_condition& y) {
  field(path, "node", x.node, y.node);
  field(path, "blob", x.blob, y.blob);
}

void field_diff::visit(const std::string& path, const job_def& x,
                       const job_def& y) {
  field(path, "name", x.name, y.name);
  field(path, "init_group", x.init_group, y.init_group);
  field(path, "epoch_group", x.epoch_group, y.epoch_group);
  field(path, "download_group", x.download_group, y.download_group);
  field(path, "exit_group", x.exit_group, y.exit_group);
  field(path, "stop_conditions", x.stop_conditions, y.stop_conditions);
  field(path, "nodes_to_checkpoint", x.nodes_to_checkpoint,
        y.nodes_to_checkpoint);
  field(path, "channels", x.channels, y.channels);
}

void field_diff::visit(const std::string& path, const blob_entry& x,
                       const blob_entry& y) {
  field(path, "name", x.name, y.name);
  field(path, "type", x.type, y.type);
  field(path, "shape", x.shape, y.shape);
  field(path, "bytes", x.bytes, y.bytes);
  field(path, "digest", x.digest, y.digest);
  field(path, "chunks", x.chunks, y.chunks);
  field(path, "data_epoch", x.data_epoch, y.data_epoch);
  field(path, "data_id", x.data_id, y.data_id);
  field(path, "offset", x.offset, y.offset);
}

void field_diff::visit(const std::string& path, const manifest& x,
                       const manifest& y) {
  field(path, "node", x.node, y.node);
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "blobs", x.blobs, y.blobs);
  field(path, "total_bytes", x.total_bytes, y.total_bytes);
  field(path, "created_unix_ms", x.created_unix_ms, y.created_unix_ms);
}

void field_diff::visit(const std::string& path, const blob_chunk& x,
                       const blob_chunk& y) {
  field(path, "name", x.name, y.name);
  field(path, "index", x.index, y.index);
  field(path, "data", x.data, y.data);
  field(path, "strings", x.strings, y.strings);
  field(path, "digest", x.digest, y.digest);
}

void field_diff::visit(const std::string& path, const checkpoint_stats& x,
                       const checkpoint_stats& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "duration_us", x.duration_us, y.duration_us);
  field(path, "bytes", x.bytes, y.bytes);
  field(path, "blobs", x.blobs, y.blobs);
  field(path, "written_bytes", x.written_bytes, y.written_bytes);
  field(path, "reused_blobs", x.reused_blobs, y.reused_blobs);
  field(path, "snapshot_us", x.snapshot_us, y.snapshot_us);
  field(path, "sync_us", x.sync_us, y.sync_us);
}

void field_diff::visit(const std::string& path, const checkpoint_metadata& x,
                       const checkpoint_metadata& y) {
  field(path, "db_prefix", x.db_prefix, y.db_prefix);
  field(path, "node_names", x.node_names, y.node_names);
  field(path, "committed_epochs", x.committed_epochs, y.committed_epochs);
  field(path, "last_stats", x.last_stats, y.last_stats);
  field(path, "last_action", x.last_action, y.last_action);
  field(path, "final_epoch", x.final_epoch, y.final_epoch);
  field(path, "job_definition", x.job_definition, y.job_definition);
}

void field_diff::visit(const std::string& path, const blob_value& x,
                       const blob_value& y) {
  field(path, "name", x.name, y.name);
  field(path, "value", x.value, y.value);
}

void field_diff::visit(const std::string& path, const run_tasks& x,
                       const run_tasks& y) {
  field(path, "group", x.group, y.group);
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "tasks", x.tasks, y.tasks);
  field(path, "run", x.run, y.run);
  field(path, "plan", x.plan, y.plan);
}

void field_diff::visit(const std::string&, const cancel_tasks&,
                       const cancel_tasks&) {
  // No fields: arriving as a cancel_tasks at all is the whole content.
}

void field_diff::visit(const std::string& path, const task_output& x,
                       const task_output& y) {
  field(path, "task", x.task, y.task);
  field(path, "blob", x.blob, y.blob);
  field(path, "value", x.value, y.value);
}

void field_diff::visit(const std::string& path, const op_timing& x,
                       const op_timing& y) {
  field(path, "index", x.index, y.index);
  field(path, "type", x.type, y.type);
  field(path, "offset_us", x.offset_us, y.offset_us);
  field(path, "duration_us", x.duration_us, y.duration_us);
}

void field_diff::visit(const std::string& path, const task_timing& x,
                       const task_timing& y) {
  field(path, "node", x.node, y.node);
  field(path, "task", x.task, y.task);
  field(path, "offset_us", x.offset_us, y.offset_us);
  field(path, "duration_us", x.duration_us, y.duration_us);
  field(path, "slow_ops", x.slow_ops, y.slow_ops);
}

void field_diff::visit(const std::string& path, const tasks_done& x,
                       const tasks_done& y) {
  field(path, "node", x.node, y.node);
  field(path, "outputs", x.outputs, y.outputs);
  field(path, "timings", x.timings, y.timings);
}

void field_diff::visit(const std::string& path, const fetch_blobs& x,
                       const fetch_blobs& y) {
  field(path, "names", x.names, y.names);
}

void field_diff::visit(const std::string& path, const blob_values& x,
                       const blob_values& y) {
  field(path, "blobs", x.blobs, y.blobs);
}

void field_diff::visit(const std::string& path, const put_blobs& x,
                       const put_blobs& y) {
  field(path, "blobs", x.blobs, y.blobs);
}

void field_diff::visit(const std::string& path, const check_ops& x,
                       const check_ops& y) {
  field(path, "types", x.types, y.types);
}

void field_diff::visit(const std::string& path, const init_checkpoint& x,
                       const init_checkpoint& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "replica_holders", x.replica_holders, y.replica_holders);
  field(path, "replica_sources", x.replica_sources, y.replica_sources);
  field(path, "kept_dbs", x.kept_dbs, y.kept_dbs);
}

void field_diff::visit(const std::string& path, const blob_names& x,
                       const blob_names& y) {
  field(path, "names", x.names, y.names);
}

void field_diff::visit(const std::string& path, const save_checkpoint& x,
                       const save_checkpoint& y) {
  field(path, "node", x.node, y.node);
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "db", x.db, y.db);
  field(path, "blob_names", x.blob_names, y.blob_names);
  field(path, "full", x.full, y.full);
}

void field_diff::visit(const std::string& path, const load_checkpoint& x,
                       const load_checkpoint& y) {
  field(path, "node", x.node, y.node);
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "db", x.db, y.db);
  field(path, "blob_names", x.blob_names, y.blob_names);
  field(path, "allow_incomplete", x.allow_incomplete, y.allow_incomplete);
}

void field_diff::visit(const std::string& path, const check_checkpoint& x,
                       const check_checkpoint& y) {
  field(path, "db", x.db, y.db);
  field(path, "verify_data", x.verify_data, y.verify_data);
}

void field_diff::visit(const std::string& path, const checkpoint_status& x,
                       const checkpoint_status& y) {
  field(path, "exists", x.exists, y.exists);
  field(path, "complete", x.complete, y.complete);
  field(path, "intact", x.intact, y.intact);
  field(path, "problem", x.problem, y.problem);
}

void field_diff::visit(const std::string& path, const node_ref& x,
                       const node_ref& y) {
  field(path, "name", x.name, y.name);
  // Typed or not, a handle is the same when its actor is.
  field(path, "persistence", caf::actor_cast<caf::actor>(x.persistence),
        caf::actor_cast<caf::actor>(y.persistence));
  field(path, "address", x.address, y.address);
}

void field_diff::visit(const std::string& path, const ckpt_set_params& x,
                       const ckpt_set_params& y) {
  field(path, "node_names", x.node_names, y.node_names);
  field(path, "path_prefix", x.path_prefix, y.path_prefix);
  field(path, "job_definition", x.job_definition, y.job_definition);
  field(path, "allow_job_change", x.allow_job_change, y.allow_job_change);
}

void field_diff::visit(const std::string& path, const ckpt_init& x,
                       const ckpt_init& y) {
  field(path, "nodes", x.nodes, y.nodes);
  field(path, "retrieve_from_epoch", x.retrieve_from_epoch,
        y.retrieve_from_epoch);
  field(path, "path_prefix", x.path_prefix, y.path_prefix);
}

void field_diff::visit(const std::string& path, const ckpt_save& x,
                       const ckpt_save& y) {
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const ckpt_load& x,
                       const ckpt_load& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "path_prefix", x.path_prefix, y.path_prefix);
  field(path, "blob_names", x.blob_names, y.blob_names);
  field(path, "partial", x.partial, y.partial);
}

void field_diff::visit(const std::string& path, const ckpt_exists& x,
                       const ckpt_exists& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "verify_data", x.verify_data, y.verify_data);
}

void field_diff::visit(const std::string& path, const ckpt_verify_copies& x,
                       const ckpt_verify_copies& y) {
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const database_check& x,
                       const database_check& y) {
  field(path, "node", x.node, y.node);
  field(path, "daemon", x.daemon, y.daemon);
  field(path, "own", x.own, y.own);
  field(path, "status", x.status, y.status);
}

void field_diff::visit(const std::string& path, const database_checks& x,
                       const database_checks& y) {
  field(path, "checks", x.checks, y.checks);
}

void field_diff::visit(const std::string& path, const ckpt_retain& x,
                       const ckpt_retain& y) {
  field(path, "keep_last", x.keep_last, y.keep_last);
}

void field_diff::visit(const std::string& path, const retention_result& x,
                       const retention_result& y) {
  field(path, "kept", x.kept, y.kept);
  field(path, "removed", x.removed, y.removed);
  field(path, "bytes", x.bytes, y.bytes);
}

void field_diff::visit(const std::string& path, const ckpt_resume_epoch& x,
                       const ckpt_resume_epoch& y) {
  field(path, "user_epoch", x.user_epoch, y.user_epoch);
  field(path, "before_epoch", x.before_epoch, y.before_epoch);
  field(path, "nodes", x.nodes, y.nodes);
}

void field_diff::visit(const std::string& path, const resume_point& x,
                       const resume_point& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "final", x.final, y.final);
}

void field_diff::visit(const std::string& path, const ckpt_write_metadata& x,
                       const ckpt_write_metadata& y) {
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const ckpt_report& x,
                       const ckpt_report& y) {
  field(path, "action", x.action, y.action);
}

void field_diff::visit(const std::string& path, const ckpt_accessible& x,
                       const ckpt_accessible& y) {
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const run_job& x,
                       const run_job& y) {
  field(path, "resume_from_epoch", x.resume_from_epoch, y.resume_from_epoch);
}

void field_diff::visit(const std::string& path, const run_attempt& x,
                       const run_attempt& y) {
  field(path, "resume_from_epoch", x.resume_from_epoch, y.resume_from_epoch);
  field(path, "reset_workspaces", x.reset_workspaces, y.reset_workspaces);
}

void field_diff::visit(const std::string& path, const job_result& x,
                       const job_result& y) {
  field(path, "last_epoch", x.last_epoch, y.last_epoch);
}

void field_diff::visit(const std::string& path, const snapshot_taken& x,
                       const snapshot_taken& y) {
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const reset_workspace& x,
                       const reset_workspace& y) {
  field(path, "reason", x.reason, y.reason);
}

void field_diff::visit(const std::string& path, const begin_save& x,
                       const begin_save& y) {
  field(path, "node", x.node, y.node);
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "db", x.db, y.db);
  field(path, "full", x.full, y.full);
}

void field_diff::visit(const std::string& path, const end_save& x,
                       const end_save& y) {
  field(path, "node", x.node, y.node);
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const ckpt_save_async& x,
                       const ckpt_save_async& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "final", x.final, y.final);
}

void field_diff::visit(const std::string& path, const ckpt_flush& x,
                       const ckpt_flush& y) {
  field(path, "last_epoch", x.last_epoch, y.last_epoch);
}

void field_diff::visit(const std::string& path, const ckpt_result& x,
                       const ckpt_result& y) {
  field(path, "stats", x.stats, y.stats);
  field(path, "node_names", x.node_names, y.node_names);
  field(path, "blob_lists", x.blob_lists, y.blob_lists);
}

void field_diff::visit(const std::string& path, const ckpt_read& x,
                       const ckpt_read& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "blob_names", x.blob_names, y.blob_names);
}

void field_diff::visit(const std::string& path, const remote_hello& x,
                       const remote_hello& y) {
  field(path, "version", x.version, y.version);
  field(path, "node", x.node, y.node);
  field(path, "client_nonce", x.client_nonce, y.client_nonce);
}

void field_diff::visit(const std::string& path, const remote_challenge& x,
                       const remote_challenge& y) {
  field(path, "nonce", x.nonce, y.nonce);
  field(path, "secret_required", x.secret_required, y.secret_required);
  field(path, "proof", x.proof, y.proof);
}

void field_diff::visit(const std::string& path, const remote_attach& x,
                       const remote_attach& y) {
  field(path, "node", x.node, y.node);
  field(path, "nonce", x.nonce, y.nonce);
  field(path, "proof", x.proof, y.proof);
  field(path, "declined", x.declined, y.declined);
}

void field_diff::visit(const std::string& path, const remote_attached& x,
                       const remote_attached& y) {
  field(path, "gate", x.gate, y.gate);
  field(path, "max_tensor_bytes", x.max_tensor_bytes, y.max_tensor_bytes);
  field(path, "exchange", x.exchange, y.exchange);
}

void field_diff::visit(const std::string& path, const read_checkpoint& x,
                       const read_checkpoint& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "blob_names", x.blob_names, y.blob_names);
}

void field_diff::visit(const std::string& path, const prune_checkpoints& x,
                       const prune_checkpoints& y) {
  field(path, "node", x.node, y.node);
  field(path, "kept", x.kept, y.kept);
  field(path, "check_only", x.check_only, y.check_only);
}

void field_diff::visit(const std::string& path, const pruned_checkpoints& x,
                       const pruned_checkpoints& y) {
  field(path, "removed", x.removed, y.removed);
  field(path, "bytes", x.bytes, y.bytes);
}

void field_diff::visit(const std::string& path, const task_ref& x,
                       const task_ref& y) {
  field(path, "node", x.node, y.node);
  field(path, "task", x.task, y.task);
}

void field_diff::visit(const std::string& path, const channel_plan& x,
                       const channel_plan& y) {
  field(path, "channel", x.channel, y.channel);
  field(path, "putters", x.putters, y.putters);
  field(path, "takers", x.takers, y.takers);
}

void field_diff::visit(const std::string& path, const collective_plan& x,
                       const collective_plan& y) {
  field(path, "name", x.name, y.name);
  field(path, "kind", x.kind, y.kind);
  field(path, "op", x.op, y.op);
  field(path, "root", x.root, y.root);
  field(path, "participants", x.participants, y.participants);
}

void field_diff::visit(const std::string& path, const exchange_peer& x,
                       const exchange_peer& y) {
  field(path, "node", x.node, y.node);
  field(path, "endpoint", x.endpoint, y.endpoint);
  field(path, "host", x.host, y.host);
  field(path, "port", x.port, y.port);
}

void field_diff::visit(const std::string& path, const exchange_plan& x,
                       const exchange_plan& y) {
  field(path, "channels", x.channels, y.channels);
  field(path, "collectives", x.collectives, y.collectives);
  field(path, "peers", x.peers, y.peers);
  field(path, "relay", x.relay, y.relay);
}

void field_diff::visit(const std::string& path, const exchange_end& x,
                       const exchange_end& y) {
  field(path, "run", x.run, y.run);
  field(path, "abort", x.abort, y.abort);
}

void field_diff::visit(const std::string& path, const channel_state& x,
                       const channel_state& y) {
  field(path, "channel", x.channel, y.channel);
  field(path, "node", x.node, y.node);
  field(path, "items", x.items, y.items);
  field(path, "closed", x.closed, y.closed);
}

void field_diff::visit(const std::string& path, const exchange_report& x,
                       const exchange_report& y) {
  field(path, "channels", x.channels, y.channels);
}

void field_diff::visit(const std::string& path, const exchange_put& x,
                       const exchange_put& y) {
  field(path, "run", x.run, y.run);
  field(path, "channel", x.channel, y.channel);
  field(path, "op", x.op, y.op);
  field(path, "from", x.from, y.from);
  field(path, "item", x.item, y.item);
}

void field_diff::visit(const std::string& path, const exchange_take& x,
                       const exchange_take& y) {
  field(path, "run", x.run, y.run);
  field(path, "channel", x.channel, y.channel);
  field(path, "op", x.op, y.op);
  field(path, "from", x.from, y.from);
}

void field_diff::visit(const std::string& path, const exchange_close& x,
                       const exchange_close& y) {
  field(path, "run", x.run, y.run);
  field(path, "channel", x.channel, y.channel);
  field(path, "op", x.op, y.op);
  field(path, "from", x.from, y.from);
}

void field_diff::visit(const std::string& path, const exchange_reply& x,
                       const exchange_reply& y) {
  field(path, "run", x.run, y.run);
  field(path, "op", x.op, y.op);
  field(path, "status", x.status, y.status);
  field(path, "error", x.error, y.error);
  field(path, "values", x.values, y.values);
}

void field_diff::visit(const std::string& path,
                       const collective_contribution& x,
                       const collective_contribution& y) {
  field(path, "participant", x.participant, y.participant);
  field(path, "types", x.types, y.types);
  field(path, "shapes", x.shapes, y.shapes);
  field(path, "values", x.values, y.values);
}

void field_diff::visit(const std::string& path, const exchange_part& x,
                       const exchange_part& y) {
  field(path, "run", x.run, y.run);
  field(path, "collective", x.collective, y.collective);
  field(path, "call", x.call, y.call);
  field(path, "chunk", x.chunk, y.chunk);
  field(path, "parts", x.parts, y.parts);
}

void field_diff::visit(const std::string& path, const exchange_result& x,
                       const exchange_result& y) {
  field(path, "run", x.run, y.run);
  field(path, "collective", x.collective, y.collective);
  field(path, "call", x.call, y.call);
  field(path, "chunk", x.chunk, y.chunk);
  field(path, "values", x.values, y.values);
  field(path, "error", x.error, y.error);
}

void field_diff::visit(const std::string& path, const exchange_task_end& x,
                       const exchange_task_end& y) {
  field(path, "run", x.run, y.run);
  field(path, "task", x.task, y.task);
  field(path, "ok", x.ok, y.ok);
  field(path, "collectives", x.collectives, y.collectives);
  field(path, "calls", x.calls, y.calls);
}

void field_diff::visit(const std::string& path, const exchange_node_lost& x,
                       const exchange_node_lost& y) {
  field(path, "run", x.run, y.run);
  field(path, "node", x.node, y.node);
  field(path, "why", x.why, y.why);
}

void field_diff::visit(const std::string& path, const exchange_task_view& x,
                       const exchange_task_view& y) {
  field(path, "task", x.task, y.task);
  field(path, "what", x.what, y.what);
  field(path, "waits_in", x.waits_in, y.waits_in);
}

void field_diff::visit(const std::string& path, const exchange_probe& x,
                       const exchange_probe& y) {
  field(path, "run", x.run, y.run);
  field(path, "round", x.round, y.round);
}

void field_diff::visit(const std::string& path, const exchange_probe_reply& x,
                       const exchange_probe_reply& y) {
  field(path, "run", x.run, y.run);
  field(path, "round", x.round, y.round);
  field(path, "tasks", x.tasks, y.tasks);
  field(path, "activity", x.activity, y.activity);
  field(path, "sent", x.sent, y.sent);
  field(path, "received", x.received, y.received);
}

void field_diff::visit(const std::string& path, const exchange_deadlock& x,
                       const exchange_deadlock& y) {
  field(path, "run", x.run, y.run);
  field(path, "what", x.what, y.what);
}

void field_diff::visit(const std::string& path, const exchange_forward& x,
                       const exchange_forward& y) {
  field(path, "peer", x.peer, y.peer);
  field(path, "payload", x.payload, y.payload);
  field(path, "seq", x.seq, y.seq);
}

void field_diff::visit(const std::string& path, const exchange_relayed& x,
                       const exchange_relayed& y) {
  field(path, "peer", x.peer, y.peer);
  field(path, "payload", x.payload, y.payload);
  field(path, "seq", x.seq, y.seq);
}

void field_diff::visit(const std::string& path, const exchange_relay_ack& x,
                       const exchange_relay_ack& y) {
  field(path, "seq", x.seq, y.seq);
}

void field_diff::visit(const std::string& path, const database_file& x,
                       const database_file& y) {
  field(path, "name", x.name, y.name);
  field(path, "bytes", x.bytes, y.bytes);
}

void field_diff::visit(const std::string& path, const database_listing& x,
                       const database_listing& y) {
  field(path, "epoch", x.epoch, y.epoch);
  field(path, "data_id", x.data_id, y.data_id);
  field(path, "manifest_digest", x.manifest_digest, y.manifest_digest);
  field(path, "files", x.files, y.files);
}

void field_diff::visit(const std::string& path, const copy_offer& x,
                       const copy_offer& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "listing", x.listing, y.listing);
  field(path, "stream", x.stream, y.stream);
}

void field_diff::visit(const std::string& path, const copy_ticket& x,
                       const copy_ticket& y) {
  field(path, "id", x.id, y.id);
  field(path, "token", x.token, y.token);
}

void field_diff::visit(const std::string& path, const copy_data& x,
                       const copy_data& y) {
  field(path, "ticket", x.ticket, y.ticket);
  field(path, "file", x.file, y.file);
  field(path, "offset", x.offset, y.offset);
  field(path, "bytes", x.bytes, y.bytes);
}

void field_diff::visit(const std::string& path, const copy_close& x,
                       const copy_close& y) {
  field(path, "ticket", x.ticket, y.ticket);
  field(path, "digests", x.digests, y.digests);
}

void field_diff::visit(const std::string& path, const copy_list& x,
                       const copy_list& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "epoch", x.epoch, y.epoch);
}

void field_diff::visit(const std::string& path, const copy_listings& x,
                       const copy_listings& y) {
  field(path, "databases", x.databases, y.databases);
}

void field_diff::visit(const std::string& path, const copy_open& x,
                       const copy_open& y) {
  field(path, "node", x.node, y.node);
  field(path, "db", x.db, y.db);
  field(path, "file", x.file, y.file);
  field(path, "stream", x.stream, y.stream);
}

void field_diff::visit(const std::string& path, const copy_read& x,
                       const copy_read& y) {
  field(path, "ticket", x.ticket, y.ticket);
  field(path, "max_bytes", x.max_bytes, y.max_bytes);
}

void field_diff::visit(const std::string& path, const copy_piece& x,
                       const copy_piece& y) {
  field(path, "bytes", x.bytes, y.bytes);
  field(path, "last", x.last, y.last);
  field(path, "digest", x.digest, y.digest);
}

void field_diff::visit(const std::string& path, const copy_prune& x,
                       const copy_prune& y) {
  field(path, "node", x.node, y.node);
  field(path, "kept", x.kept, y.kept);
}

void field_diff::visit(const std::string& path, const keep_commit_record& x,
                       const keep_commit_record& y) {
  field(path, "node", x.node, y.node);
  field(path, "dir", x.dir, y.dir);
  field(path, "record", x.record, y.record);
}

void field_diff::visit(const std::string& path, const fetch_commit_record& x,
                       const fetch_commit_record& y) {
  field(path, "node", x.node, y.node);
  field(path, "dir", x.dir, y.dir);
}

} // namespace epochrt::test
