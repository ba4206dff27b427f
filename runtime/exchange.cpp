#include <epochrt/runtime/exchange.hpp>

#include <utility>

namespace epochrt {

bool exchange_wait::complete(exchange_outcome outcome) {
  std::function<void()> resume;
  {
    annotated_mutex::guard guard{mtx_};
    if (done_)
      return false;
    done_ = true;
    outcome_ = std::move(outcome);
    resume = std::move(resume_);
  }
  if (resume)
    resume();
  return true;
}

bool exchange_wait::fail(caf::error err) {
  exchange_outcome outcome;
  outcome.error = std::move(err);
  return complete(std::move(outcome));
}

bool exchange_wait::completed() const {
  annotated_mutex::guard guard{mtx_};
  return done_;
}

bool exchange_wait::on_complete(std::function<void()> resume) {
  annotated_mutex::guard guard{mtx_};
  if (done_)
    return false;
  resume_ = std::move(resume);
  return true;
}

std::shared_ptr<exchange_wait> completed_wait(exchange_outcome outcome) {
  auto result = std::make_shared<exchange_wait>();
  result->complete(std::move(outcome));
  return result;
}

task_port::~task_port() {
  // nop
}

} // namespace epochrt
