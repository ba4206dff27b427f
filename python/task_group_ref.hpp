#pragma once

#include <cstddef>
#include <memory>

#include <epochrt/epochrt.hpp>

namespace epochrt::python {

/// Python's TaskGroup: one of the four groups of a job, by reference, or
/// a group of its own (`TaskGroup()`, for Session.run and an upload
/// builder). The binding keeps the job alive as long as the reference
/// lives; a job is not thread-safe, and neither is this (the GIL
/// serializes Python's calls).
class task_group_ref {
public:
  enum class which : uint8_t { init, epoch, download, exit };

  task_group_ref(job& owner, which group) : owner_(&owner), which_(group) {}

  /// A group of its own, held in a job of its own.
  task_group_ref()
    : own_(std::make_shared<job>("task_group")), owner_(own_.get()),
      which_(which::epoch) {}

  bool standalone() const noexcept {
    return own_ != nullptr;
  }

  /// Appends `task`, named "<group>/<node>/<index>" when it has no name;
  /// returns its name.
  const std::string& add_task(task_def task) {
    owner_->add_task(get(), std::move(task));
    return get().tasks.back().name;
  }

  task_group_def& get() const noexcept {
    switch (which_) {
      case which::init:
        return owner_->init_group();
      case which::epoch:
        return owner_->epoch_group();
      case which::download:
        return owner_->download_group();
      case which::exit:
        break;
    }
    return owner_->exit_group();
  }

  const char* name() const noexcept {
    switch (which_) {
      case which::init:
        return "init";
      case which::epoch:
        return "epoch";
      case which::download:
        return "download";
      case which::exit:
        break;
    }
    return "exit";
  }

private:
  std::shared_ptr<job> own_;
  job* owner_;
  which which_;
};

} // namespace epochrt::python
