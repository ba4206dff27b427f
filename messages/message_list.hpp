#pragma once

// Every message type of epochrt, from the lists of the headers that declare
// them (message_fields.hpp). A type added to one of those lists is
// registered with CAF, and tested across processes, with nothing else to
// write; a new header of messages adds its list here.

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/messages/tensor.hpp>

#define EPOCHRT_ALL_MESSAGES(X)         \
  EPOCHRT_TENSOR_MESSAGES(X)            \
  EPOCHRT_JOB_DEF_MESSAGES(X)           \
  EPOCHRT_CHECKPOINT_RECORD_MESSAGES(X) \
  EPOCHRT_NODE_MESSAGES(X)              \
  EPOCHRT_EXCHANGE_MESSAGES(X)          \
  EPOCHRT_EXCHANGE_VIEW_MESSAGES(X)     \
  EPOCHRT_MANAGER_MESSAGES(X)           \
  EPOCHRT_REMOTE_MESSAGES(X)            \
  EPOCHRT_REPLICA_MESSAGES(X)
