#include <epochrt/runtime/channel.hpp>

#include <algorithm>

#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

exchange_outcome failure(caf::error err) {
  exchange_outcome result;
  result.error = std::move(err);
  return result;
}

} // namespace

void complete_all(exchange_completions& done) {
  for (auto& [wait, outcome] : done)
    wait->complete(std::move(outcome));
  done.clear();
}

channel::channel(channel_plan plan) : plan_(std::move(plan)) {
  // nop
}

std::string channel::label() const {
  return "channel '" + plan_.channel.name + "' on node " + plan_.channel.node;
}

bool channel::full() const noexcept {
  return items_.size() >= static_cast<size_t>(plan_.channel.capacity);
}

bool channel::all_ended(const std::vector<task_ref>& tasks) const {
  return std::all_of(tasks.begin(), tasks.end(), [this](const task_ref& x) {
    return ended_.count(x) > 0;
  });
}

void channel::put(const task_ref& from, std::vector<tensor_ptr> item,
                  std::shared_ptr<exchange_wait> wait,
                  exchange_completions& done) {
  if (closed_) {
    done.emplace_back(
      std::move(wait),
      failure(make_error(runtime_errc::exchange_failed,
                         label() + " is closed: " + task_text(from)
                           + " cannot put into it")));
    return;
  }
  if (!takes_.empty()) {
    // A take waits, so the channel is empty: the item goes straight to it.
    auto taker = std::move(takes_.front());
    takes_.pop_front();
    exchange_outcome taken;
    taken.values = std::move(item);
    done.emplace_back(std::move(taker.wait), std::move(taken));
    done.emplace_back(std::move(wait), exchange_outcome{});
    return;
  }
  if (!full()) {
    items_.push_back(std::move(item));
    done.emplace_back(std::move(wait), exchange_outcome{});
    return;
  }
  puts_.push_back(waiting_put{from, std::move(item), std::move(wait)});
  fail_stuck(done);
}

void channel::take(const task_ref& from, std::shared_ptr<exchange_wait> wait,
                   exchange_completions& done) {
  if (!items_.empty()) {
    exchange_outcome taken;
    taken.values = std::move(items_.front());
    items_.pop_front();
    done.emplace_back(std::move(wait), std::move(taken));
    // Room for the oldest waiting put.
    if (!puts_.empty()) {
      auto putter = std::move(puts_.front());
      puts_.pop_front();
      items_.push_back(std::move(putter.item));
      done.emplace_back(std::move(putter.wait), exchange_outcome{});
    }
    return;
  }
  if (closed_) {
    exchange_outcome end;
    end.closed = true;
    done.emplace_back(std::move(wait), std::move(end));
    return;
  }
  takes_.push_back(waiting_take{from, std::move(wait)});
  fail_stuck(done);
}

void channel::close(const task_ref& from, std::shared_ptr<exchange_wait> wait,
                    exchange_completions& done) {
  if (!closed_) {
    closed_ = true;
    // Waiting takes mean an empty channel: they end.
    for (auto& taker : takes_) {
      exchange_outcome end;
      end.closed = true;
      done.emplace_back(std::move(taker.wait), std::move(end));
    }
    takes_.clear();
    for (auto& putter : puts_)
      done.emplace_back(
        std::move(putter.wait),
        failure(make_error(runtime_errc::exchange_failed,
                           label() + " was closed by " + task_text(from)
                             + " while " + task_text(putter.from)
                             + " waited to put into it")));
    puts_.clear();
  }
  done.emplace_back(std::move(wait), exchange_outcome{});
}

void channel::task_ended(const task_ref& task, exchange_completions& done) {
  ended_.insert(task);
  fail_stuck(done);
}

void channel::fail_waiting(const caf::error& err, exchange_completions& done) {
  for (auto& taker : takes_)
    done.emplace_back(std::move(taker.wait), failure(err));
  takes_.clear();
  for (auto& putter : puts_)
    done.emplace_back(std::move(putter.wait), failure(err));
  puts_.clear();
}

void channel::fail_waiting_of(const std::string& node, const caf::error& err,
                              exchange_completions& done) {
  auto from_node = [&](const auto& x) {
    return x.from.node == node;
  };
  for (auto& taker : takes_)
    if (from_node(taker))
      done.emplace_back(std::move(taker.wait), failure(err));
  takes_.erase(std::remove_if(takes_.begin(), takes_.end(), from_node),
               takes_.end());
  for (auto& putter : puts_)
    if (from_node(putter))
      done.emplace_back(std::move(putter.wait), failure(err));
  puts_.erase(std::remove_if(puts_.begin(), puts_.end(), from_node),
              puts_.end());
}

void channel::fail_stuck(exchange_completions& done) {
  if (!takes_.empty() && !closed_ && items_.empty()
      && all_ended(plan_.putters)) {
    auto err
      = make_error(runtime_errc::exchange_failed,
                   label()
                     + " is empty and open, and every task that puts "
                       "into it or closes it has ended ("
                     + tasks_text(plan_.putters) + "): it was never closed");
    for (auto& taker : takes_)
      done.emplace_back(std::move(taker.wait), failure(err));
    takes_.clear();
  }
  if (!puts_.empty() && full() && all_ended(plan_.takers)) {
    auto err = make_error(runtime_errc::exchange_failed,
                          label() + " is full (" + std::to_string(items_.size())
                            + " items), and every task that takes from it "
                              "has ended ("
                            + tasks_text(plan_.takers) + ")");
    for (auto& putter : puts_)
      done.emplace_back(std::move(putter.wait), failure(err));
    puts_.clear();
  }
}

} // namespace epochrt
