#pragma once

// epochrt: jobs in epochs on actors, with checkpoints at every epoch
// boundary. This header is the whole API for a host program:
//
//   caf::actor_system_config cfg;
//   epochrt::configure(cfg);                 // message types, error texts
//   caf::actor_system sys{cfg};
//   auto ops = std::make_shared<epochrt::op_registry>();
//   if (auto err = epochrt::add_builtin_ops(*ops)) ... // plus the host's
//                                              // own ops (ops->add)
//   epochrt::local_session session{sys, ops};
//   epochrt::multi_node_checkpoint_manager ckpt{sys, "/data/ckpt"};
//   epochrt::job_runner runner{job, &ckpt};
//   auto last_epoch = runner.train(session);  // blocks; resumes if it can
//
// Nodes on other processes or hosts: call `configure_network(cfg, options)`
// (heartbeats, TLS) instead of `configure(cfg)`, run `epochrt node` (or a
// node_server) where they live, and use a distributed_session that maps
// their names to addresses.

#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/tensor.hpp>

#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_context.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

#include <epochrt/persistence/checkpoint_listing.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/basic_checkpoint_manager.hpp>
#include <epochrt/actors/api/checkpoint_manager.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/node_server.hpp>
#include <epochrt/actors/api/secret_file.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/actors/api/upload_task_group_builder.hpp>
