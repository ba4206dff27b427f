#include "test/wire/samples.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <caf/make_message.hpp>

namespace epochrt::test {

namespace {

// Text that a careless codec could cut or re-encode: non-ASCII UTF-8, an
// embedded NUL, and a byte that is not valid UTF-8.
const std::string tricky_text = std::string("n\xc3\xb6"
                                            "de\0\xff|",
                                            8);

// Bytes with every high bit and a NUL, for nonces and payloads.
std::vector<char> tricky_bytes() {
  return {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff', 'a', '\x00'};
}

// Both payloads set at once: no real tensor has that, but a codec that
// drops either one shows.
tensor mixed_tensor() {
  auto x = make_tensor<double>({2, 2}, {1.5, -0.0, 1e300, -7.25});
  x.strings = {"alpha", "", tricky_text};
  return x;
}

tensor string_tensor() {
  return make_string_tensor({3}, {"x", tricky_text, "z"});
}

std::vector<int64_t> wide_shape() {
  return {3, 0, int64_t{1} << 40, -1};
}

op_def sample_op(const std::string& type) {
  op_def x;
  x.type = type;
  x.inputs = {"a", "b"};
  x.outputs = {"c", tricky_text};
  x.args["scale"] = mixed_tensor();
  x.args["name"] = string_tensor();
  x.args["dims"] = make_tensor<int64_t>({2}, {int64_t{1} << 50, -5});
  return x;
}

step_def sample_step(const std::string& name) {
  step_def x;
  x.name = name;
  x.ops = {sample_op("Add"), sample_op("CountDown")};
  x.num_iter = 7'000'000'000;
  x.stop_blob = "done";
  return x;
}

task_def sample_task(const std::string& node) {
  task_def x;
  x.name = "train on " + node;
  x.node = node;
  x.workspace = workspace_type::private_scratch;
  x.steps = {sample_step("init"), sample_step("loop")};
  x.outputs = {"loss", "done"};
  return x;
}

task_group_def sample_group(const std::string& node) {
  task_group_def x;
  x.tasks = {sample_task(node), sample_task(node + "_b")};
  return x;
}

blob_entry sample_entry(const std::string& name) {
  return blob_entry{name,       dtype::i64,         wide_shape(),
                    1ull << 40, 0xdeadbeefcafef00d, 4'000'000'000u,
                    1ll << 50,  0x8000000000000001, (1ull << 41) + 16};
}

checkpoint_stats sample_stats(const std::string& node) {
  return checkpoint_stats{node,
                          "/ckpt/" + node + ".9",
                          -1'234'567'890'123,
                          0xfedcba9876543210,
                          0x8000000000000001,
                          0x7fffffffffffffff,
                          0xffffffffffffffff,
                          -9'876'543'210,
                          0x7ffffffffffffffe};
}

blob_value sample_blob(const std::string& name) {
  return blob_value{name, mixed_tensor()};
}

task_output sample_output(const std::string& blob) {
  return task_output{"train", blob, mixed_tensor()};
}

std::vector<std::string> sample_names() {
  return {"w", tricky_text, "iter"};
}

// Large enough to span many of the middleman's reads (256 KiB), with
// values whose bytes a float conversion could change: NaN with a payload,
// infinities, -0 and denormals.
tensor large_tensor() {
  std::vector<float> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * -0.5f;
  values[0] = std::numeric_limits<float>::quiet_NaN();
  values[1] = -std::numeric_limits<float>::infinity();
  values[2] = -0.0f;
  values[3] = std::numeric_limits<float>::denorm_min();
  values.back() = std::numeric_limits<float>::max();
  return make_tensor<float>({256, 256}, values);
}

// A tensor of no elements, and one of no dimensions (a scalar).
tensor empty_tensor() {
  return make_tensor<int32_t>({0, 3}, {});
}

tensor scalar_tensor() {
  return make_tensor<int64_t>({}, {std::numeric_limits<int64_t>::min()});
}

// One item: a tensor of each kind above, so that item order matters.
std::vector<tensor> sample_item() {
  return {mixed_tensor(), string_tensor(), empty_tensor(), scalar_tensor(),
          large_tensor()};
}

task_ref sample_ref(const std::string& node, const std::string& task) {
  return task_ref{node, task};
}

channel_def sample_channel(const std::string& name) {
  channel_def x;
  x.name = name;
  x.node = "reader_" + tricky_text;
  x.capacity = std::numeric_limits<int64_t>::max();
  x.blobs = {"image", tricky_text, "", "label"};
  return x;
}

// As small as a channel can be, and with no blobs at all.
channel_def bare_channel() {
  channel_def x;
  x.name = "bare";
  x.node = "trainer_0";
  x.capacity = 1;
  return x;
}

channel_plan sample_channel_plan(const std::string& name) {
  channel_plan x;
  x.channel = sample_channel(name);
  x.putters = {sample_ref("reader_0", "read"), sample_ref(tricky_text, "")};
  x.takers
    = {sample_ref("trainer_0", "train"), sample_ref("trainer_1", tricky_text),
       sample_ref("trainer_2", "train")};
  return x;
}

// Many participants: the list a large group's all-reduce has.
std::vector<task_ref> many_participants() {
  std::vector<task_ref> result;
  for (int i = 0; i < 1000; ++i)
    result.push_back(sample_ref("trainer_" + std::to_string(i),
                                i % 7 == 0 ? tricky_text : "train"));
  return result;
}

collective_plan sample_collective(const std::string& name) {
  collective_plan x;
  x.name = name;
  x.kind = collective_kind::barrier;
  x.op = reduce_op::max;
  x.root = "trainer_" + tricky_text;
  x.participants = many_participants();
  return x;
}

exchange_plan sample_plan(const sample_handles& handles) {
  exchange_plan x;
  auto bare = channel_plan{bare_channel(), {}, {}};
  x.channels
    = {sample_channel_plan("queue"), bare, sample_channel_plan(tricky_text)};
  auto gather = sample_collective("gather");
  gather.kind = collective_kind::all_gather;
  gather.op = reduce_op::mean;
  auto lonely = collective_plan{
    tricky_text, collective_kind::broadcast, reduce_op::min, "", {}};
  x.collectives = {sample_collective("sync"), gather, lonely};
  // Nodes of both processes: a handle in each direction.
  x.peers
    = {exchange_peer{"trainer_0", handles.local, "", 0},
       exchange_peer{tricky_text, handles.remote, "node-7.example", 65535},
       exchange_peer{"", handles.local, tricky_text, 1}};
  // The session's own exchange, as a master sends it to its daemons.
  x.relay = handles.local;
  return x;
}

collective_contribution sample_contribution(uint32_t participant) {
  collective_contribution x;
  x.participant = participant;
  x.types = {dtype::f64, dtype::string, dtype::i32, dtype::i64, dtype::f32};
  x.shapes = {{2, 2}, {3}, {0, 3}, {}, {256, 256}};
  x.values = sample_item();
  return x;
}

// Far beyond what any call count reaches, and every bit of one.
std::vector<uint64_t> many_calls() {
  std::vector<uint64_t> result(10000);
  for (size_t i = 0; i < result.size(); ++i)
    result[i] = (uint64_t{1} << (i % 64)) | i;
  result.front() = 0;
  result.back() = std::numeric_limits<uint64_t>::max();
  return result;
}

// Longer than any buffer a text field could be cut to.
std::string long_text() {
  std::string result;
  while (result.size() < 100000)
    result += tricky_text;
  return result;
}

} // namespace

tensor make_sample(type_tag<tensor>, const sample_handles&) {
  return mixed_tensor();
}

op_def make_sample(type_tag<op_def>, const sample_handles&) {
  return sample_op("Add");
}

step_def make_sample(type_tag<step_def>, const sample_handles&) {
  return sample_step("loop");
}

task_def make_sample(type_tag<task_def>, const sample_handles&) {
  return sample_task("trainer_0");
}

task_group_def make_sample(type_tag<task_group_def>, const sample_handles&) {
  return sample_group("trainer_0");
}

channel_def make_sample(type_tag<channel_def>, const sample_handles&) {
  return sample_channel(tricky_text);
}

stop_condition make_sample(type_tag<stop_condition>, const sample_handles&) {
  return stop_condition{"trainer_0", tricky_text};
}

job_def make_sample(type_tag<job_def>, const sample_handles&) {
  job_def x;
  x.name = "job";
  x.init_group = sample_group("init");
  x.epoch_group = sample_group("epoch");
  x.download_group = sample_group("download");
  x.exit_group = sample_group("exit");
  x.stop_conditions
    = {stop_condition{"trainer_0", "done"}, stop_condition{"n", "b"}};
  x.nodes_to_checkpoint = {"trainer_0", "trainer_1"};
  x.channels
    = {sample_channel("queue"), bare_channel(), sample_channel(tricky_text)};
  return x;
}

blob_entry make_sample(type_tag<blob_entry>, const sample_handles&) {
  return sample_entry("w");
}

manifest make_sample(type_tag<manifest>, const sample_handles&) {
  manifest x;
  x.node = "trainer_0";
  x.epoch = 1ll << 33;
  x.blobs = {sample_entry("w"), sample_entry(tricky_text)};
  x.total_bytes = 0xffffffffffffffff;
  x.created_unix_ms = 1'700'000'000'123;
  return x;
}

blob_chunk make_sample(type_tag<blob_chunk>, const sample_handles&) {
  blob_chunk x;
  x.name = "w";
  x.index = 4'000'000'001u;
  x.data = tricky_bytes();
  x.strings = {"a", "", tricky_text};
  x.digest = 0x0123456789abcdef;
  return x;
}

checkpoint_stats make_sample(type_tag<checkpoint_stats>,
                             const sample_handles&) {
  return sample_stats("trainer_0");
}

checkpoint_metadata make_sample(type_tag<checkpoint_metadata>,
                                const sample_handles&) {
  checkpoint_metadata x;
  x.db_prefix = "/tmp/ckpt";
  x.node_names = {"trainer_0", "trainer_1"};
  x.committed_epochs = {0, 1, 2, 1ll << 40};
  x.last_stats = {sample_stats("trainer_0"), sample_stats("trainer_1")};
  x.last_action = "save";
  x.final_epoch = 1ll << 40;
  x.job_definition = R"({"epoch":[{"name":"t"}]})";
  return x;
}

blob_value make_sample(type_tag<blob_value>, const sample_handles&) {
  return sample_blob("weights");
}

run_tasks make_sample(type_tag<run_tasks>, const sample_handles& handles) {
  return run_tasks{"epoch",
                   1ll << 35,
                   {sample_task("trainer_0"), sample_task("trainer_0")},
                   0xfffffffffffffffe,
                   sample_plan(handles)};
}

cancel_tasks make_sample(type_tag<cancel_tasks>, const sample_handles&) {
  return cancel_tasks{};
}

task_output make_sample(type_tag<task_output>, const sample_handles&) {
  return sample_output("loss");
}

tasks_done make_sample(type_tag<tasks_done>, const sample_handles&) {
  return tasks_done{
    "trainer_0",
    {sample_output("loss"), sample_output("done")},
    {task_timing{"trainer_0",
                 "train",
                 12,
                 3456789,
                 {op_timing{7, "LinearRegressionSGD", 100, 2000},
                  op_timing{4294967295u, tricky_text, -1, INT64_MAX}}},
     task_timing{tricky_text, "", 0, 0, {}}}};
}

fetch_blobs make_sample(type_tag<fetch_blobs>, const sample_handles&) {
  return fetch_blobs{sample_names()};
}

blob_values make_sample(type_tag<blob_values>, const sample_handles&) {
  return blob_values{{sample_blob("w"), sample_blob(tricky_text)}};
}

put_blobs make_sample(type_tag<put_blobs>, const sample_handles&) {
  return put_blobs{{sample_blob("b"), sample_blob("w")}};
}

check_ops make_sample(type_tag<check_ops>, const sample_handles&) {
  return check_ops{{"Add", "PyScale", tricky_text}};
}

init_checkpoint make_sample(type_tag<init_checkpoint>, const sample_handles&) {
  return init_checkpoint{"trainer_0",
                         "/tmp/ckpt/trainer_0.3",
                         {"10.0.0.1:7001", "[::1]:7002"},
                         {"10.0.0.1:7001", "host-3:65535"},
                         {"/tmp/ckpt/trainer_0.1", "/tmp/ckpt/trainer_0.2"}};
}

blob_names make_sample(type_tag<blob_names>, const sample_handles&) {
  return blob_names{sample_names()};
}

save_checkpoint make_sample(type_tag<save_checkpoint>, const sample_handles&) {
  return save_checkpoint{"trainer_0", 1ll << 36, "/tmp/db", sample_names(),
                         true};
}

load_checkpoint make_sample(type_tag<load_checkpoint>, const sample_handles&) {
  return load_checkpoint{"trainer_1", 1ll << 37, "/tmp/db2", sample_names(),
                         true};
}

check_checkpoint make_sample(type_tag<check_checkpoint>,
                             const sample_handles&) {
  return check_checkpoint{"/tmp/db3", true};
}

checkpoint_status make_sample(type_tag<checkpoint_status>,
                              const sample_handles&) {
  return checkpoint_status{true, true, true, "chunk 3 of w: bad digest"};
}

node_ref make_sample(type_tag<node_ref>, const sample_handles& handles) {
  return node_ref{"trainer_1",
                  caf::actor_cast<persistence_actor>(handles.local),
                  "10.0.0.7:7001"};
}

ckpt_set_params make_sample(type_tag<ckpt_set_params>, const sample_handles&) {
  return ckpt_set_params{
    {"trainer_0", "trainer_1"}, "/tmp/p/", "{\"epoch\":[]}", true};
}

ckpt_init make_sample(type_tag<ckpt_init>, const sample_handles& handles) {
  return ckpt_init{
    {node_ref{"trainer_0", caf::actor_cast<persistence_actor>(handles.local),
              "127.0.0.1:7000"},
     node_ref{"trainer_1", caf::actor_cast<persistence_actor>(handles.remote),
              ""}},
    1ll << 38,
    "/x/"};
}

ckpt_save make_sample(type_tag<ckpt_save>, const sample_handles&) {
  return ckpt_save{1ll << 39};
}

ckpt_load make_sample(type_tag<ckpt_load>, const sample_handles&) {
  return ckpt_load{1ll << 41, "/y/", sample_names(), true};
}

ckpt_exists make_sample(type_tag<ckpt_exists>, const sample_handles&) {
  return ckpt_exists{1ll << 42, true};
}

ckpt_verify_copies make_sample(type_tag<ckpt_verify_copies>,
                               const sample_handles&) {
  return ckpt_verify_copies{1ll << 42};
}

database_check make_sample(type_tag<database_check>, const sample_handles&) {
  return database_check{"trainer_1", "10.0.0.7:7001", true,
                        checkpoint_status{true, true, false, "bad digest"}};
}

database_checks make_sample(type_tag<database_checks>, const sample_handles&) {
  return database_checks{
    {database_check{"trainer_0", "", true,
                    checkpoint_status{true, true, true, ""}},
     database_check{"trainer_0", "127.0.0.1:7001", false,
                    checkpoint_status{false, false, false, "not found"}}}};
}

ckpt_retain make_sample(type_tag<ckpt_retain>, const sample_handles&) {
  return ckpt_retain{1ull << 40};
}

retention_result make_sample(type_tag<retention_result>,
                             const sample_handles&) {
  return retention_result{
    {3, 1ll << 43}, {"/r/trainer_0.1", "/r/trainer_0.2"}, 1ull << 35};
}

ckpt_resume_epoch make_sample(type_tag<ckpt_resume_epoch>,
                              const sample_handles& handles) {
  return ckpt_resume_epoch{
    1ll << 43,
    1ll << 44,
    {node_ref{"trainer_2", caf::actor_cast<persistence_actor>(handles.remote),
              "10.0.0.9:7009"}}};
}

resume_point make_sample(type_tag<resume_point>, const sample_handles&) {
  return resume_point{1ll << 45, true};
}

ckpt_write_metadata make_sample(type_tag<ckpt_write_metadata>,
                                const sample_handles&) {
  return ckpt_write_metadata{1ll << 46};
}

ckpt_report make_sample(type_tag<ckpt_report>, const sample_handles&) {
  return ckpt_report{"checkpoint_save"};
}

ckpt_accessible make_sample(type_tag<ckpt_accessible>, const sample_handles&) {
  return ckpt_accessible{1ll << 47};
}

run_job make_sample(type_tag<run_job>, const sample_handles&) {
  return run_job{1ll << 48};
}

run_attempt make_sample(type_tag<run_attempt>, const sample_handles&) {
  return run_attempt{1ll << 49, true};
}

job_result make_sample(type_tag<job_result>, const sample_handles&) {
  return job_result{1ll << 50};
}

snapshot_taken make_sample(type_tag<snapshot_taken>, const sample_handles&) {
  return snapshot_taken{1ll << 51};
}

reset_workspace make_sample(type_tag<reset_workspace>, const sample_handles&) {
  return reset_workspace{"no usable checkpoint"};
}

begin_save make_sample(type_tag<begin_save>, const sample_handles&) {
  return begin_save{"trainer_0", 1ll << 49, "/ckpt/trainer_0.3", true};
}

end_save make_sample(type_tag<end_save>, const sample_handles&) {
  return end_save{"trainer_0", 1ll << 50};
}

ckpt_save_async make_sample(type_tag<ckpt_save_async>, const sample_handles&) {
  return ckpt_save_async{1ll << 51, true};
}

ckpt_flush make_sample(type_tag<ckpt_flush>, const sample_handles&) {
  return ckpt_flush{1ll << 52};
}

ckpt_result make_sample(type_tag<ckpt_result>, const sample_handles&) {
  return ckpt_result{{sample_stats("trainer_0"), sample_stats("trainer_1")},
                     {"trainer_0", "trainer_1"},
                     {{"a", "b"}, {}, {tricky_text}}};
}

ckpt_read make_sample(type_tag<ckpt_read>, const sample_handles&) {
  return ckpt_read{1ll << 53, sample_names()};
}

remote_hello make_sample(type_tag<remote_hello>, const sample_handles&) {
  // Not the current version: a field left at its default would pass.
  return remote_hello{remote_protocol_version + 0xfffe, "trainer_0",
                      tricky_bytes()};
}

remote_challenge make_sample(type_tag<remote_challenge>,
                             const sample_handles&) {
  auto proof = tricky_bytes();
  proof.resize(32, '\x5a');
  return remote_challenge{tricky_bytes(), true, proof};
}

remote_attach make_sample(type_tag<remote_attach>, const sample_handles&) {
  auto proof = tricky_bytes();
  proof.resize(32, '\xa5');
  return remote_attach{"trainer_0", tricky_bytes(), proof,
                       "its proof was wrong"};
}

remote_attached make_sample(type_tag<remote_attached>,
                            const sample_handles& handles) {
  // As a daemon does: handles to actors of the peer's own process. Not the
  // same actor twice, or gate and exchange could swap unseen.
  return remote_attached{handles.remote, 0xfffffffffffffff0, handles.local};
}

read_checkpoint make_sample(type_tag<read_checkpoint>, const sample_handles&) {
  return read_checkpoint{"trainer_0", "/ckpt/trainer_0.4", sample_names()};
}

prune_checkpoints make_sample(type_tag<prune_checkpoints>,
                              const sample_handles&) {
  return prune_checkpoints{
    "trainer_0", {"/ckpt/trainer_0.8", "/ckpt/trainer_0.9"}, true};
}

pruned_checkpoints make_sample(type_tag<pruned_checkpoints>,
                               const sample_handles&) {
  return pruned_checkpoints{{"/ckpt/trainer_0.1", "/ckpt/trainer_0.2"},
                            0xfedcba9876543210};
}

task_ref make_sample(type_tag<task_ref>, const sample_handles&) {
  return sample_ref("trainer_" + tricky_text, tricky_text + "train");
}

channel_plan make_sample(type_tag<channel_plan>, const sample_handles&) {
  return sample_channel_plan(tricky_text);
}

collective_plan make_sample(type_tag<collective_plan>, const sample_handles&) {
  return sample_collective(tricky_text);
}

exchange_peer make_sample(type_tag<exchange_peer>,
                          const sample_handles& handles) {
  return exchange_peer{"trainer_" + tricky_text, handles.remote, "::1", 4242};
}

exchange_plan make_sample(type_tag<exchange_plan>,
                          const sample_handles& handles) {
  return sample_plan(handles);
}

exchange_end make_sample(type_tag<exchange_end>, const sample_handles&) {
  return exchange_end{std::numeric_limits<uint64_t>::max(), true};
}

channel_state make_sample(type_tag<channel_state>, const sample_handles&) {
  return channel_state{tricky_text, "reader_" + tricky_text,
                       std::numeric_limits<uint64_t>::max(), true};
}

exchange_report make_sample(type_tag<exchange_report>, const sample_handles&) {
  return exchange_report{
    {channel_state{"queue", "reader_0", 0, false},
     channel_state{tricky_text, "", 0x8000000000000001, true},
     channel_state{"", tricky_text, 1, false}}};
}

exchange_put make_sample(type_tag<exchange_put>, const sample_handles&) {
  return exchange_put{0xfffffffffffffffd, "queue_" + tricky_text,
                      0x8000000000000000, sample_ref("reader_0", tricky_text),
                      sample_item()};
}

exchange_take make_sample(type_tag<exchange_take>, const sample_handles&) {
  return exchange_take{0x8000000000000001, tricky_text,
                       std::numeric_limits<uint64_t>::max(),
                       sample_ref(tricky_text, "train")};
}

exchange_close make_sample(type_tag<exchange_close>, const sample_handles&) {
  return exchange_close{std::numeric_limits<uint64_t>::max(), tricky_text,
                        0xfedcba9876543210, sample_ref("reader_0", "read")};
}

exchange_reply make_sample(type_tag<exchange_reply>, const sample_handles&) {
  // The last status: a codec that narrowed the enum would lose it.
  return exchange_reply{0x8000000000000002, 0xfffffffffffffff1,
                        exchange_status::lost,
                        "node " + tricky_text + " is gone", sample_item()};
}

collective_contribution make_sample(type_tag<collective_contribution>,
                                    const sample_handles&) {
  return sample_contribution(std::numeric_limits<uint32_t>::max());
}

exchange_part make_sample(type_tag<exchange_part>, const sample_handles&) {
  // One participant with everything, one with nothing (a barrier's).
  collective_contribution barrier;
  barrier.participant = 1;
  return exchange_part{
    0xfffffffffffffffc,
    "sync_" + tricky_text,
    0x8000000000000003,
    4'000'000'003u,
    {sample_contribution(0xfffffffe), barrier, sample_contribution(0)}};
}

exchange_result make_sample(type_tag<exchange_result>, const sample_handles&) {
  return exchange_result{0xfffffffffffffffb,
                         tricky_text,
                         0x8000000000000004,
                         std::numeric_limits<uint32_t>::max(),
                         sample_item(),
                         "shapes differ: " + tricky_text,
                         {}};
}

exchange_task_end make_sample(type_tag<exchange_task_end>,
                              const sample_handles&) {
  // `ok` defaults to true: the sample says false.
  std::vector<std::string> collectives(many_calls().size(), "sync");
  collectives[0] = tricky_text;
  collectives[1] = "";
  return exchange_task_end{0xfffffffffffffffa,
                           sample_ref("trainer_1", tricky_text), false,
                           collectives, many_calls()};
}

exchange_node_lost make_sample(type_tag<exchange_node_lost>,
                               const sample_handles&) {
  return exchange_node_lost{0xfffffffffffffff9, "trainer_" + tricky_text,
                            long_text()};
}

exchange_task_view make_sample(type_tag<exchange_task_view>,
                               const sample_handles&) {
  // `what` defaults to running: the sample says in flight.
  return exchange_task_view{"task '" + tricky_text + "' on trainer_0",
                            exchange_task_view::state::in_flight, long_text()};
}

exchange_probe make_sample(type_tag<exchange_probe>, const sample_handles&) {
  return exchange_probe{0xfffffffffffffff8, 0xfffffffffffffff7};
}

exchange_probe_reply make_sample(type_tag<exchange_probe_reply>,
                                 const sample_handles& handles) {
  exchange_probe_reply x;
  x.run = 0xfffffffffffffff6;
  x.round = 0xfffffffffffffff5;
  x.tasks
    = {make_sample(type_tag<exchange_task_view>{}, handles),
       exchange_task_view{"", exchange_task_view::state::ended, ""},
       exchange_task_view{"task 'b' on n1", exchange_task_view::state::waiting,
                          "a take from channel 'q' (on node n0)"}};
  x.activity = 0xfffffffffffffff4;
  x.sent = 0xfffffffffffffff3;
  x.received = 0xfffffffffffffff2;
  return x;
}

exchange_deadlock make_sample(type_tag<exchange_deadlock>,
                              const sample_handles&) {
  return exchange_deadlock{0xfffffffffffffff1, "deadlock: " + long_text()};
}

exchange_forward make_sample(type_tag<exchange_forward>,
                             const sample_handles& handles) {
  // As a daemon's exchange sends it to the relay: the exchange it is for
  // (here, one of the peer's process), and a put with tensors.
  return exchange_forward{
    handles.remote,
    caf::make_message(make_sample(type_tag<exchange_put>{}, handles)),
    0xfffffffffffffff0};
}

exchange_relayed make_sample(type_tag<exchange_relayed>,
                             const sample_handles& handles) {
  // As the relay sends it to a daemon's exchange: where it came from (an
  // actor of this process) and contributions to a collective.
  return exchange_relayed{
    handles.local,
    caf::make_message(make_sample(type_tag<exchange_part>{}, handles)),
    0xffffffffffffffef};
}

exchange_relay_ack make_sample(type_tag<exchange_relay_ack>,
                               const sample_handles&) {
  return exchange_relay_ack{0xffffffffffffffee};
}

database_file make_sample(type_tag<database_file>, const sample_handles&) {
  return database_file{"blobs.data\xff", 0xfffffffffffffff1};
}

database_listing make_sample(type_tag<database_listing>,
                             const sample_handles&) {
  return database_listing{
    1ll << 40,
    0xfffffffffffffff2,
    0xfffffffffffffff3,
    {database_file{"000005.ldb", 1ull << 33}, database_file{"CURRENT", 16}}};
}

copy_offer make_sample(type_tag<copy_offer>, const sample_handles& handles) {
  return copy_offer{"trainer_1", "/tmp/ckpt/trainer_1.7",
                    make_sample(type_tag<database_listing>{}, handles), true};
}

copy_ticket make_sample(type_tag<copy_ticket>, const sample_handles&) {
  return copy_ticket{0xfffffffffffffff4, {'\x00', '\x7f', '\x80', '\xff'}};
}

copy_data make_sample(type_tag<copy_data>, const sample_handles&) {
  return copy_data{
    0xfffffffffffffff5, "blobs.data", 1ull << 43, {'\0', '\xff', 'x'}};
}

copy_close make_sample(type_tag<copy_close>, const sample_handles&) {
  return copy_close{0xfffffffffffffff6, {0xfffffffffffffff7, 1}};
}

copy_list make_sample(type_tag<copy_list>, const sample_handles&) {
  return copy_list{"trainer_2", "/tmp/ckpt/trainer_2.9", 1ll << 41};
}

copy_listings make_sample(type_tag<copy_listings>,
                          const sample_handles& handles) {
  return copy_listings{
    {make_sample(type_tag<database_listing>{}, handles), database_listing{}}};
}

copy_open make_sample(type_tag<copy_open>, const sample_handles&) {
  return copy_open{"trainer_0", "/tmp/ckpt/trainer_0.2", "MANIFEST-000001",
                   true};
}

copy_read make_sample(type_tag<copy_read>, const sample_handles&) {
  return copy_read{0xfffffffffffffff8, 1ull << 42};
}

copy_piece make_sample(type_tag<copy_piece>, const sample_handles&) {
  return copy_piece{{'\xfe', '\0'}, true, 0xfffffffffffffff9};
}

copy_prune make_sample(type_tag<copy_prune>, const sample_handles&) {
  return copy_prune{"trainer_1",
                    {"/tmp/ckpt/trainer_1.3", "/tmp/ckpt/trainer_1.4"}};
}

keep_commit_record make_sample(type_tag<keep_commit_record>,
                               const sample_handles& handles) {
  return keep_commit_record{
    "trainer_2", "/tmp/ckpt",
    make_sample(type_tag<checkpoint_metadata>{}, handles)};
}

fetch_commit_record make_sample(type_tag<fetch_commit_record>,
                                const sample_handles&) {
  return fetch_commit_record{"trainer_0", "/tmp/ckpt\xff"};
}

} // namespace epochrt::test
