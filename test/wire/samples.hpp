#pragma once

// One value of every message type for wire_test. Every field of a sample
// differs from its default (a field that came back defaulted would otherwise
// look unchanged), vectors and maps are non-empty, numbers use their high
// bits and strings hold bytes that text handling could mangle.

#include <tuple>

#include <caf/actor.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt::test {

/// The types wire_test sends across, in the order of add_message_types. A
/// type registered there but missing here fails the suite.
using wire_types = std::tuple<
  tensor, op_def, step_def, task_def, task_group_def, channel_def,
  stop_condition, job_def, blob_entry, manifest, blob_chunk, checkpoint_stats,
  checkpoint_metadata, blob_value, run_tasks, cancel_tasks, task_output,
  tasks_done, fetch_blobs, blob_values, put_blobs, check_ops, init_checkpoint,
  blob_names, save_checkpoint, load_checkpoint, check_checkpoint,
  checkpoint_status,
  // The job runner and checkpoint manager protocol.
  node_ref, ckpt_set_params, ckpt_init, ckpt_save, ckpt_load, ckpt_exists,
  ckpt_verify_copies, database_check, database_checks, ckpt_retain,
  retention_result, ckpt_resume_epoch, resume_point, ckpt_write_metadata,
  ckpt_report, ckpt_accessible, run_job, run_attempt, job_result,
  reset_workspace, begin_save, snapshot_taken, end_save, ckpt_save_async,
  ckpt_flush, ckpt_result, ckpt_read,
  // Attaching a node to a daemon, and reading a remote checkpoint.
  remote_hello, remote_challenge, remote_attach, remote_attached,
  read_checkpoint,
  // Retention.
  prune_checkpoints, pruned_checkpoints,
  // Channels and collectives: the plan of a group run, its end, and what
  // the exchanges of two processes send each other.
  task_ref, channel_plan, collective_plan, exchange_peer, exchange_plan,
  exchange_end, channel_state, exchange_report, exchange_put, exchange_take,
  exchange_close, exchange_reply, collective_contribution, exchange_part,
  exchange_result, exchange_task_end, exchange_node_lost, exchange_task_view,
  exchange_probe, exchange_probe_reply, exchange_deadlock, exchange_forward,
  exchange_relayed, exchange_relay_ack,
  // Copies of checkpoints between daemons.
  database_file, database_listing, copy_offer, copy_ticket, copy_data,
  copy_close, copy_list, copy_listings, copy_open, copy_read, copy_piece,
  copy_prune, keep_commit_record, fetch_commit_record>;

/// What an exchange_forward or exchange_relayed carries: each of these, in a
/// `caf::message` of its own.
using exchange_payload_types
  = std::tuple<exchange_put, exchange_take, exchange_close, exchange_reply,
               exchange_part, exchange_result, exchange_task_end,
               exchange_node_lost, exchange_probe, exchange_probe_reply,
               exchange_deadlock, exchange_relay_ack>;

/// The actor handles samples carry: one of an actor in this process, which
/// the peer sees as a proxy, and one of an actor in the peer, which this
/// process sees as a proxy. Both directions of handle translation cross.
struct sample_handles {
  caf::actor local;
  caf::actor remote;
};

template <class T>
struct type_tag {
  using type = T;
};

/// The sample of `T`: `make_sample(type_tag<T>{}, handles)`.
tensor make_sample(type_tag<tensor>, const sample_handles&);
op_def make_sample(type_tag<op_def>, const sample_handles&);
step_def make_sample(type_tag<step_def>, const sample_handles&);
task_def make_sample(type_tag<task_def>, const sample_handles&);
task_group_def make_sample(type_tag<task_group_def>, const sample_handles&);
channel_def make_sample(type_tag<channel_def>, const sample_handles&);
stop_condition make_sample(type_tag<stop_condition>, const sample_handles&);
job_def make_sample(type_tag<job_def>, const sample_handles&);
blob_entry make_sample(type_tag<blob_entry>, const sample_handles&);
manifest make_sample(type_tag<manifest>, const sample_handles&);
blob_chunk make_sample(type_tag<blob_chunk>, const sample_handles&);
checkpoint_stats make_sample(type_tag<checkpoint_stats>, const sample_handles&);
checkpoint_metadata make_sample(type_tag<checkpoint_metadata>,
                                const sample_handles&);
blob_value make_sample(type_tag<blob_value>, const sample_handles&);
run_tasks make_sample(type_tag<run_tasks>, const sample_handles&);
cancel_tasks make_sample(type_tag<cancel_tasks>, const sample_handles&);
task_output make_sample(type_tag<task_output>, const sample_handles&);
tasks_done make_sample(type_tag<tasks_done>, const sample_handles&);
fetch_blobs make_sample(type_tag<fetch_blobs>, const sample_handles&);
blob_values make_sample(type_tag<blob_values>, const sample_handles&);
put_blobs make_sample(type_tag<put_blobs>, const sample_handles&);
check_ops make_sample(type_tag<check_ops>, const sample_handles&);
init_checkpoint make_sample(type_tag<init_checkpoint>, const sample_handles&);
blob_names make_sample(type_tag<blob_names>, const sample_handles&);
save_checkpoint make_sample(type_tag<save_checkpoint>, const sample_handles&);
load_checkpoint make_sample(type_tag<load_checkpoint>, const sample_handles&);
check_checkpoint make_sample(type_tag<check_checkpoint>, const sample_handles&);
checkpoint_status make_sample(type_tag<checkpoint_status>,
                              const sample_handles&);
node_ref make_sample(type_tag<node_ref>, const sample_handles&);
ckpt_set_params make_sample(type_tag<ckpt_set_params>, const sample_handles&);
ckpt_init make_sample(type_tag<ckpt_init>, const sample_handles&);
ckpt_save make_sample(type_tag<ckpt_save>, const sample_handles&);
ckpt_load make_sample(type_tag<ckpt_load>, const sample_handles&);
ckpt_exists make_sample(type_tag<ckpt_exists>, const sample_handles&);
ckpt_verify_copies make_sample(type_tag<ckpt_verify_copies>,
                               const sample_handles&);
database_check make_sample(type_tag<database_check>, const sample_handles&);
database_checks make_sample(type_tag<database_checks>, const sample_handles&);
ckpt_retain make_sample(type_tag<ckpt_retain>, const sample_handles&);
retention_result make_sample(type_tag<retention_result>, const sample_handles&);
ckpt_resume_epoch make_sample(type_tag<ckpt_resume_epoch>,
                              const sample_handles&);
resume_point make_sample(type_tag<resume_point>, const sample_handles&);
ckpt_write_metadata make_sample(type_tag<ckpt_write_metadata>,
                                const sample_handles&);
ckpt_report make_sample(type_tag<ckpt_report>, const sample_handles&);
ckpt_accessible make_sample(type_tag<ckpt_accessible>, const sample_handles&);
run_job make_sample(type_tag<run_job>, const sample_handles&);
run_attempt make_sample(type_tag<run_attempt>, const sample_handles&);
job_result make_sample(type_tag<job_result>, const sample_handles&);
snapshot_taken make_sample(type_tag<snapshot_taken>, const sample_handles&);
reset_workspace make_sample(type_tag<reset_workspace>, const sample_handles&);
begin_save make_sample(type_tag<begin_save>, const sample_handles&);
end_save make_sample(type_tag<end_save>, const sample_handles&);
ckpt_save_async make_sample(type_tag<ckpt_save_async>, const sample_handles&);
ckpt_flush make_sample(type_tag<ckpt_flush>, const sample_handles&);
ckpt_result make_sample(type_tag<ckpt_result>, const sample_handles&);
ckpt_read make_sample(type_tag<ckpt_read>, const sample_handles&);
remote_hello make_sample(type_tag<remote_hello>, const sample_handles&);
remote_challenge make_sample(type_tag<remote_challenge>, const sample_handles&);
remote_attach make_sample(type_tag<remote_attach>, const sample_handles&);
remote_attached make_sample(type_tag<remote_attached>, const sample_handles&);
database_file make_sample(type_tag<database_file>, const sample_handles&);
database_listing make_sample(type_tag<database_listing>, const sample_handles&);
copy_offer make_sample(type_tag<copy_offer>, const sample_handles&);
copy_ticket make_sample(type_tag<copy_ticket>, const sample_handles&);
copy_data make_sample(type_tag<copy_data>, const sample_handles&);
copy_close make_sample(type_tag<copy_close>, const sample_handles&);
copy_list make_sample(type_tag<copy_list>, const sample_handles&);
copy_listings make_sample(type_tag<copy_listings>, const sample_handles&);
copy_open make_sample(type_tag<copy_open>, const sample_handles&);
copy_read make_sample(type_tag<copy_read>, const sample_handles&);
copy_piece make_sample(type_tag<copy_piece>, const sample_handles&);
copy_prune make_sample(type_tag<copy_prune>, const sample_handles&);
keep_commit_record make_sample(type_tag<keep_commit_record>,
                               const sample_handles&);
fetch_commit_record make_sample(type_tag<fetch_commit_record>,
                                const sample_handles&);
read_checkpoint make_sample(type_tag<read_checkpoint>, const sample_handles&);
prune_checkpoints make_sample(type_tag<prune_checkpoints>,
                              const sample_handles&);
pruned_checkpoints make_sample(type_tag<pruned_checkpoints>,
                               const sample_handles&);
task_ref make_sample(type_tag<task_ref>, const sample_handles&);
channel_plan make_sample(type_tag<channel_plan>, const sample_handles&);
collective_plan make_sample(type_tag<collective_plan>, const sample_handles&);
exchange_peer make_sample(type_tag<exchange_peer>, const sample_handles&);
exchange_plan make_sample(type_tag<exchange_plan>, const sample_handles&);
exchange_end make_sample(type_tag<exchange_end>, const sample_handles&);
channel_state make_sample(type_tag<channel_state>, const sample_handles&);
exchange_report make_sample(type_tag<exchange_report>, const sample_handles&);
exchange_put make_sample(type_tag<exchange_put>, const sample_handles&);
exchange_take make_sample(type_tag<exchange_take>, const sample_handles&);
exchange_close make_sample(type_tag<exchange_close>, const sample_handles&);
exchange_reply make_sample(type_tag<exchange_reply>, const sample_handles&);
collective_contribution make_sample(type_tag<collective_contribution>,
                                    const sample_handles&);
exchange_part make_sample(type_tag<exchange_part>, const sample_handles&);
exchange_result make_sample(type_tag<exchange_result>, const sample_handles&);
exchange_task_end make_sample(type_tag<exchange_task_end>,
                              const sample_handles&);
exchange_task_view make_sample(type_tag<exchange_task_view>,
                               const sample_handles&);
exchange_probe make_sample(type_tag<exchange_probe>, const sample_handles&);
exchange_probe_reply make_sample(type_tag<exchange_probe_reply>,
                                 const sample_handles&);
exchange_deadlock make_sample(type_tag<exchange_deadlock>,
                              const sample_handles&);
exchange_node_lost make_sample(type_tag<exchange_node_lost>,
                               const sample_handles&);
/// Forwarded by a daemon's exchange: an exchange_put with tensors.
exchange_forward make_sample(type_tag<exchange_forward>, const sample_handles&);
/// Relayed to a daemon's exchange: an exchange_part.
exchange_relay_ack make_sample(type_tag<exchange_relay_ack>,
                               const sample_handles&);
exchange_relayed make_sample(type_tag<exchange_relayed>, const sample_handles&);

} // namespace epochrt::test
