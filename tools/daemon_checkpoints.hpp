#pragma once

#include <memory>

#include "tools/ckpt_commands.hpp"
#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {
class dir_lock;
} // namespace epochrt

namespace epochrt::cli {

/// The part of `epochrt ckpt verify DIR --node ...` that asks the daemons
/// (see ckpt_verify): connects to every daemon of the --node arguments as
/// `run` does, then checks each committed epoch of `metadata` (DIR's
/// record, read by the caller; `fell_back` when its latest generation was
/// damaged, which fails the verification as in ckpt_verify) on every
/// node's daemon — the nodes not named run in this process and are checked
/// in DIR — and every other daemon named. Prints as ckpt_verify does;
/// returns its exit code.
int verify_on_daemons(const ckpt_verify_options& opts,
                      const checkpoint_metadata& metadata, bool fell_back);

/// The part of `epochrt ckpt gc DIR --node ...` that removes on the
/// daemons (see ckpt_gc), the nodes of `metadata` bound where the --node
/// arguments place them, with `lock`, DIR's lock, held by the caller.
/// Prints as ckpt_gc does; returns its exit code.
int gc_on_daemons(const ckpt_gc_options& opts,
                  const checkpoint_metadata& metadata,
                  std::shared_ptr<dir_lock> lock);

} // namespace epochrt::cli
