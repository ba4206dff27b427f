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

#include "messages/checkpoint_records.hpp"
#include "messages/fault_errc.hpp"
#include "messages/fault_injector.hpp"
#include "messages/fault_plan.hpp"
#include "messages/job_def.hpp"
#include "messages/names.hpp"
#include "messages/tensor.hpp"

#include "runtime/builtin_ops.hpp"
#include "runtime/epoch_limiter.hpp"
#include "runtime/job.hpp"
#include "runtime/job_file.hpp"
#include "runtime/op_context.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/runtime_errc.hpp"
#include "runtime/workspace.hpp"

#include "persistence/checkpoint_listing.hpp"
#include "persistence/db_name.hpp"
#include "persistence/file_metadata_handler.hpp"
#include "persistence/metadata_handler.hpp"
#include "persistence/persistence_errc.hpp"

#include "actors/actors_errc.hpp"
#include "actors/basic_checkpoint_manager.hpp"
#include "actors/checkpoint_manager.hpp"
#include "actors/configure.hpp"
#include "actors/distributed_session.hpp"
#include "actors/job_runner.hpp"
#include "actors/local_session.hpp"
#include "actors/logging.hpp"
#include "actors/multi_node_checkpoint_manager.hpp"
#include "actors/network.hpp"
#include "actors/node_address.hpp"
#include "actors/node_server.hpp"
#include "actors/secret_file.hpp"
#include "actors/session.hpp"
#include "actors/upload_task_group_builder.hpp"
