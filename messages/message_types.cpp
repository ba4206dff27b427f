#include "messages/message_types.hpp"

#include <caf/actor_system_config.hpp>

#include "messages/checkpoint_records.hpp"
#include "messages/job_def.hpp"
#include "messages/protocol.hpp"
#include "messages/tensor.hpp"

namespace epochrt {

void add_message_types(caf::actor_system_config& cfg) {
  // Names are part of the wire protocol: never rename one.
  cfg.add_message_type<tensor>("epochrt::tensor")
    .add_message_type<op_def>("epochrt::op_def")
    .add_message_type<step_def>("epochrt::step_def")
    .add_message_type<task_def>("epochrt::task_def")
    .add_message_type<task_group_def>("epochrt::task_group_def")
    .add_message_type<stop_condition>("epochrt::stop_condition")
    .add_message_type<job_def>("epochrt::job_def")
    .add_message_type<blob_entry>("epochrt::blob_entry")
    .add_message_type<manifest>("epochrt::manifest")
    .add_message_type<blob_chunk>("epochrt::blob_chunk")
    .add_message_type<checkpoint_stats>("epochrt::checkpoint_stats")
    .add_message_type<checkpoint_metadata>("epochrt::checkpoint_metadata")
    .add_message_type<blob_value>("epochrt::blob_value")
    .add_message_type<run_tasks>("epochrt::run_tasks")
    .add_message_type<task_output>("epochrt::task_output")
    .add_message_type<tasks_done>("epochrt::tasks_done")
    .add_message_type<fetch_blobs>("epochrt::fetch_blobs")
    .add_message_type<blob_values>("epochrt::blob_values")
    .add_message_type<put_blobs>("epochrt::put_blobs")
    .add_message_type<init_checkpoint>("epochrt::init_checkpoint")
    .add_message_type<blob_names>("epochrt::blob_names")
    .add_message_type<save_checkpoint>("epochrt::save_checkpoint")
    .add_message_type<load_checkpoint>("epochrt::load_checkpoint")
    .add_message_type<check_checkpoint>("epochrt::check_checkpoint")
    .add_message_type<checkpoint_status>("epochrt::checkpoint_status");
}

} // namespace epochrt
