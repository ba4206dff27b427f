#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <epochrt/faults/fault_point.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/exchange.hpp>

namespace epochrt {

class exchange_hub;
class fault_injector;

/// What a port needs of the fault plan: the injector, and how to kill or
/// freeze the task's node (as the node.op point does).
struct port_faults {
  std::shared_ptr<fault_injector> injector;
  /// Called with kill_node or freeze_node; the task then fails.
  std::function<void(fault_kind)> fault_node;
};

/// The task_port of one task in one group run: its channel and collective
/// operations go to its process's exchange_hub, each with a fresh id, and
/// it counts the task's calls of each collective.
///
/// Fault points (docs/fault-plans.md): `channel.put`, `channel.take` and
/// `channel.close` before the request leaves the task (detail: the
/// channel), `collective.send` before the task's blobs go to the
/// collective and `collective.receive` as its results come back (detail:
/// the collective). A delay holds the message back; a drop or partition
/// loses it, and the task's wait then fails as a lost node after the
/// hub's silence limit; a duplicate delivers it twice (obeyed once);
/// kill_node and freeze_node strike the task's node.
///
/// Used by its task only; the waits it returns complete on any thread.
class exchange_port : public task_port {
public:
  exchange_port(std::shared_ptr<exchange_hub> hub, uint64_t run, task_ref task,
                int64_t epoch, port_faults faults);

  ~exchange_port() override;

  std::optional<channel_def>
  find_channel(const std::string& name) const override;

  std::shared_ptr<exchange_wait> put(const std::string& channel,
                                     std::vector<tensor_ptr> item) override;

  std::shared_ptr<exchange_wait> take(const std::string& channel) override;

  std::shared_ptr<exchange_wait> close(const std::string& channel) override;

  std::shared_ptr<exchange_wait>
  collective(collective_kind kind, const std::string& name,
             std::vector<tensor_ptr> inputs) override;

  /// The calls made of each collective so far.
  const std::map<std::string, uint64_t>& calls() const noexcept {
    return calls_;
  }

  /// Tells the hub that the task ended (`ok`: it succeeded).
  void task_ended(bool ok);

  /// What the port's operations share with the callbacks they leave
  /// behind, which may run after the port is gone.
  struct context {
    std::shared_ptr<exchange_hub> hub;
    uint64_t run = 0;
    task_ref task;
    int64_t epoch = 0;
    port_faults faults;
  };

private:
  std::shared_ptr<const context> ctx_;
  std::map<std::string, uint64_t> calls_;
};

} // namespace epochrt
