#pragma once

// Non-trivial instances of every message type, for round-trip tests: every
// field set, nested values included, so that a field a codec forgets shows.

#include <string>
#include <vector>

#include <caf/deep_to_string.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt::test {

inline tensor sample_tensor() {
  return make_tensor<float>({2, 3}, {1.5f, -2.f, 3.25f, 0.f, 1e-7f, 42.f});
}

inline tensor sample_string_tensor() {
  return make_string_tensor({3}, {"alpha", "", std::string("nul\0byte", 8)});
}

inline op_def sample_op() {
  op_def x;
  x.type = "Add";
  x.inputs = {"a", "b"};
  x.outputs = {"c"};
  x.args["scale"] = make_scalar<double>(0.5);
  x.args["name"] = make_string_tensor({}, {"hello"});
  x.args["dims"] = make_tensor<int64_t>({2}, {4, 5});
  return x;
}

inline step_def sample_step() {
  step_def x;
  x.name = "loop";
  x.ops = {sample_op(), sample_op()};
  x.ops[1].type = "CountDown";
  x.num_iter = 7;
  x.stop_blob = "done";
  return x;
}

inline task_def sample_task() {
  task_def x;
  x.name = "train";
  x.node = "trainer_0";
  x.workspace = workspace_type::private_scratch;
  x.steps = {sample_step()};
  x.outputs = {"loss", "done"};
  return x;
}

inline task_group_def sample_group() {
  task_group_def x;
  x.tasks = {sample_task(), sample_task()};
  x.tasks[1].node = "trainer_1";
  x.tasks[1].workspace = workspace_type::global;
  return x;
}

inline stop_condition sample_stop() {
  return stop_condition{"trainer_0", "done"};
}

inline job_def sample_job() {
  job_def x;
  x.name = "job";
  x.init_group = sample_group();
  x.epoch_group = sample_group();
  x.epoch_group.tasks.pop_back();
  x.download_group.tasks = {sample_task()};
  x.exit_group = task_group_def{};
  x.stop_conditions = {sample_stop(), stop_condition{"n", "b"}};
  x.nodes_to_checkpoint = {"trainer_0", "trainer_1"};
  return x;
}

inline blob_value sample_blob_value() {
  return blob_value{"weights", sample_tensor()};
}

inline run_tasks sample_run_tasks() {
  return run_tasks{"epoch", 12, {sample_task()}};
}

inline task_output sample_task_output() {
  return task_output{"train", "loss", make_scalar<float>(0.25f)};
}

inline tasks_done sample_tasks_done() {
  return tasks_done{
    "trainer_0",
    {sample_task_output(), task_output{"t", "s", sample_string_tensor()}},
    {task_timing{"trainer_0", "t", 5, 1500, {op_timing{3, "Sleep", 1, 1400}}},
     task_timing{"trainer_0", "u", 0, 7, {}}}};
}

inline fetch_blobs sample_fetch_blobs() {
  return fetch_blobs{{"a", "b", "c"}};
}

inline blob_values sample_blob_values() {
  return blob_values{
    {sample_blob_value(), blob_value{"flag", make_scalar<bool>(true)}}};
}

inline put_blobs sample_put_blobs() {
  return put_blobs{
    {sample_blob_value(), blob_value{"names", sample_string_tensor()}}};
}

inline init_checkpoint sample_init_checkpoint() {
  return init_checkpoint{"trainer_0",
                         "/tmp/ckpt/trainer_0.3",
                         {"10.0.0.2:7001"},
                         {"10.0.0.2:7001", "10.0.0.3:7001"},
                         {"/tmp/ckpt/trainer_0.1"}};
}

inline blob_names sample_blob_names() {
  return blob_names{{"w", "b", "iter"}};
}

inline save_checkpoint sample_save_checkpoint() {
  return save_checkpoint{"trainer_0", 4, "/tmp/db", {"w", "b"}, true};
}

inline load_checkpoint sample_load_checkpoint() {
  return load_checkpoint{"trainer_1", 5, "/tmp/db2", {"w"}, true};
}

inline check_checkpoint sample_check_checkpoint() {
  return check_checkpoint{"/tmp/db3", true};
}

inline checkpoint_status sample_checkpoint_status() {
  return checkpoint_status{true, true, false, "chunk 3 of w: bad digest"};
}

inline blob_entry sample_blob_entry() {
  return blob_entry{"w", dtype::i64, {3, 0, 2}, 1234, 0xdeadbeefcafef00dull,
                    0,   3,          77,        4096};
}

inline manifest sample_manifest() {
  manifest x;
  x.node = "trainer_0";
  x.epoch = 9;
  x.blobs
    = {sample_blob_entry(), blob_entry{"s", dtype::string, {2}, 10, 77, 1}};
  x.total_bytes = 1244;
  x.created_unix_ms = 1700000000123;
  return x;
}

inline blob_chunk sample_blob_chunk() {
  blob_chunk x;
  x.name = "w";
  x.index = 17;
  x.data = {'\x01', '\x00', '\xff', 'a', 'b'};
  x.digest = 0x0123456789abcdefull;
  return x;
}

inline blob_chunk sample_string_chunk() {
  blob_chunk x;
  x.name = "names";
  x.index = 0;
  x.strings = {"a", "", "ccc"};
  x.digest = 5;
  return x;
}

inline checkpoint_stats sample_checkpoint_stats() {
  return checkpoint_stats{"trainer_0", "/tmp/db", 1500, 1 << 20, 12,
                          4096,        11,        250,  900};
}

inline checkpoint_metadata sample_checkpoint_metadata() {
  checkpoint_metadata x;
  x.db_prefix = "/tmp/ckpt";
  x.node_names = {"trainer_0", "trainer_1"};
  x.committed_epochs = {0, 1, 2, 5};
  x.last_stats = {sample_checkpoint_stats(), sample_checkpoint_stats()};
  x.last_stats[1].node = "trainer_1";
  x.last_action = "save";
  return x;
}

/// Text of an expected's error, or "ok"; safe to evaluate in any assertion
/// message (Boost evaluates message arguments even when the check passes).
template <class T>
std::string describe(const caf::expected<T>& x) {
  return x ? std::string{"ok"} : caf::to_string(x.error());
}

/// Equality through CAF's inspectors: covers the protocol types, which have
/// no operator==, and fails loudly when a field is left out of `inspect`.
template <class T>
bool same(const T& x, const T& y) {
  return caf::deep_to_string(x) == caf::deep_to_string(y);
}

/// Calls `f` with a sample of every record the codec keeps on disk.
template <class F>
void for_each_disk_record(F&& f) {
  f(sample_blob_entry());
  f(sample_manifest());
  f(sample_blob_chunk());
  f(sample_string_chunk());
  f(sample_checkpoint_stats());
  f(sample_checkpoint_metadata());
}

/// Calls `f(value)` once for a sample of every type the CAF type registry
/// handles.
template <class F>
void for_each_sample(F&& f) {
  f(sample_tensor());
  f(sample_string_tensor());
  f(make_tensor<int32_t>({0}, {}));
  f(make_tensor<uint8_t>({2, 2}, {1, 2, 3, 255}));
  f(make_tensor<bool>({3}, {true, false, true}));
  f(make_scalar<int64_t>(-5));
  f(sample_op());
  f(sample_step());
  f(sample_task());
  f(sample_group());
  f(sample_stop());
  f(sample_job());
  f(sample_blob_value());
  f(sample_run_tasks());
  f(sample_task_output());
  f(sample_tasks_done());
  f(sample_fetch_blobs());
  f(sample_blob_values());
  f(sample_put_blobs());
  f(sample_init_checkpoint());
  f(sample_blob_names());
  f(sample_save_checkpoint());
  f(sample_load_checkpoint());
  f(sample_check_checkpoint());
  f(sample_checkpoint_status());
  for_each_disk_record(f);
}

} // namespace epochrt::test
