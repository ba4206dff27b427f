#include <epochrt/messages/message_types.hpp>

#include <caf/actor_system_config.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

void add_message_types(caf::actor_system_config& cfg) {
  // Names are part of the wire protocol: never rename one.
  cfg.add_message_type<tensor>("epochrt::tensor")
    .add_message_type<op_def>("epochrt::op_def")
    .add_message_type<step_def>("epochrt::step_def")
    .add_message_type<task_def>("epochrt::task_def")
    .add_message_type<task_group_def>("epochrt::task_group_def")
    .add_message_type<channel_def>("epochrt::channel_def")
    .add_message_type<stop_condition>("epochrt::stop_condition")
    .add_message_type<job_def>("epochrt::job_def")
    .add_message_type<blob_entry>("epochrt::blob_entry")
    .add_message_type<manifest>("epochrt::manifest")
    .add_message_type<blob_chunk>("epochrt::blob_chunk")
    .add_message_type<checkpoint_stats>("epochrt::checkpoint_stats")
    .add_message_type<checkpoint_metadata>("epochrt::checkpoint_metadata")
    .add_message_type<blob_value>("epochrt::blob_value")
    .add_message_type<run_tasks>("epochrt::run_tasks")
    .add_message_type<cancel_tasks>("epochrt::cancel_tasks")
    .add_message_type<task_output>("epochrt::task_output")
    .add_message_type<tasks_done>("epochrt::tasks_done")
    .add_message_type<fetch_blobs>("epochrt::fetch_blobs")
    .add_message_type<blob_values>("epochrt::blob_values")
    .add_message_type<put_blobs>("epochrt::put_blobs")
    .add_message_type<check_ops>("epochrt::check_ops")
    .add_message_type<init_checkpoint>("epochrt::init_checkpoint")
    .add_message_type<blob_names>("epochrt::blob_names")
    .add_message_type<save_checkpoint>("epochrt::save_checkpoint")
    .add_message_type<load_checkpoint>("epochrt::load_checkpoint")
    .add_message_type<check_checkpoint>("epochrt::check_checkpoint")
    .add_message_type<checkpoint_status>("epochrt::checkpoint_status")
    .add_message_type<snapshot_taken>("epochrt::snapshot_taken")
    .add_message_type<reset_workspace>("epochrt::reset_workspace")
    .add_message_type<begin_save>("epochrt::begin_save")
    .add_message_type<end_save>("epochrt::end_save")
    .add_message_type<read_checkpoint>("epochrt::read_checkpoint")
    .add_message_type<prune_checkpoints>("epochrt::prune_checkpoints")
    .add_message_type<pruned_checkpoints>("epochrt::pruned_checkpoints")
    // Channels and collectives: the plan of a group run, the end of a run,
    // and what exchanges send each other.
    .add_message_type<task_ref>("epochrt::task_ref")
    .add_message_type<channel_plan>("epochrt::channel_plan")
    .add_message_type<collective_plan>("epochrt::collective_plan")
    .add_message_type<exchange_peer>("epochrt::exchange_peer")
    .add_message_type<exchange_plan>("epochrt::exchange_plan")
    .add_message_type<exchange_end>("epochrt::exchange_end")
    .add_message_type<channel_state>("epochrt::channel_state")
    .add_message_type<exchange_report>("epochrt::exchange_report")
    .add_message_type<exchange_put>("epochrt::exchange_put")
    .add_message_type<exchange_take>("epochrt::exchange_take")
    .add_message_type<exchange_close>("epochrt::exchange_close")
    .add_message_type<exchange_reply>("epochrt::exchange_reply")
    .add_message_type<collective_contribution>(
      "epochrt::collective_contribution")
    .add_message_type<exchange_part>("epochrt::exchange_part")
    .add_message_type<exchange_result>("epochrt::exchange_result")
    .add_message_type<exchange_task_end>("epochrt::exchange_task_end")
    .add_message_type<exchange_node_lost>("epochrt::exchange_node_lost")
    .add_message_type<exchange_task_view>("epochrt::exchange_task_view")
    .add_message_type<exchange_probe>("epochrt::exchange_probe")
    .add_message_type<exchange_probe_reply>("epochrt::exchange_probe_reply")
    .add_message_type<exchange_deadlock>("epochrt::exchange_deadlock")
    .add_message_type<exchange_forward>("epochrt::exchange_forward")
    .add_message_type<exchange_relayed>("epochrt::exchange_relayed")
    .add_message_type<exchange_relay_ack>("epochrt::exchange_relay_ack")
    // The job runner and checkpoint manager protocol.
    .add_message_type<node_ref>("epochrt::node_ref")
    .add_message_type<ckpt_set_params>("epochrt::ckpt_set_params")
    .add_message_type<ckpt_init>("epochrt::ckpt_init")
    .add_message_type<ckpt_save>("epochrt::ckpt_save")
    .add_message_type<ckpt_load>("epochrt::ckpt_load")
    .add_message_type<ckpt_exists>("epochrt::ckpt_exists")
    .add_message_type<ckpt_verify_copies>("epochrt::ckpt_verify_copies")
    .add_message_type<database_check>("epochrt::database_check")
    .add_message_type<database_checks>("epochrt::database_checks")
    .add_message_type<ckpt_retain>("epochrt::ckpt_retain")
    .add_message_type<retention_result>("epochrt::retention_result")
    .add_message_type<ckpt_resume_epoch>("epochrt::ckpt_resume_epoch")
    .add_message_type<ckpt_write_metadata>("epochrt::ckpt_write_metadata")
    .add_message_type<ckpt_report>("epochrt::ckpt_report")
    .add_message_type<ckpt_accessible>("epochrt::ckpt_accessible")
    .add_message_type<resume_point>("epochrt::resume_point")
    .add_message_type<run_job>("epochrt::run_job")
    .add_message_type<run_attempt>("epochrt::run_attempt")
    .add_message_type<job_result>("epochrt::job_result")
    .add_message_type<ckpt_save_async>("epochrt::ckpt_save_async")
    .add_message_type<ckpt_flush>("epochrt::ckpt_flush")
    .add_message_type<ckpt_result>("epochrt::ckpt_result")
    .add_message_type<ckpt_read>("epochrt::ckpt_read")
    // Attaching a node to a daemon.
    .add_message_type<remote_hello>("epochrt::remote_hello")
    .add_message_type<remote_challenge>("epochrt::remote_challenge")
    .add_message_type<remote_attach>("epochrt::remote_attach")
    .add_message_type<remote_attached>("epochrt::remote_attached")
    // Copies of checkpoints between daemons.
    .add_message_type<database_file>("epochrt::database_file")
    .add_message_type<database_listing>("epochrt::database_listing")
    .add_message_type<copy_offer>("epochrt::copy_offer")
    .add_message_type<copy_ticket>("epochrt::copy_ticket")
    .add_message_type<copy_data>("epochrt::copy_data")
    .add_message_type<copy_close>("epochrt::copy_close")
    .add_message_type<copy_list>("epochrt::copy_list")
    .add_message_type<copy_listings>("epochrt::copy_listings")
    .add_message_type<copy_open>("epochrt::copy_open")
    .add_message_type<copy_read>("epochrt::copy_read")
    .add_message_type<copy_piece>("epochrt::copy_piece")
    .add_message_type<copy_prune>("epochrt::copy_prune")
    .add_message_type<keep_commit_record>("epochrt::keep_commit_record")
    .add_message_type<fetch_commit_record>("epochrt::fetch_commit_record");
}

} // namespace epochrt
