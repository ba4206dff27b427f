// A channel's run on its own (runtime/channel.hpp): a bounded FIFO whose
// calls never complete a wait themselves but hand the waits they end to
// the caller; and the channel ops (EnqueueBlobs, DequeueBlobs,
// SafeDequeueBlobs, CloseBlobsQueue) run by task_execution over a port
// that serves one such channel, without an actor system.
#include <epochrt/runtime/channel.hpp>

#include <memory>
#include <string>
#include <vector>

#include "test_util.hpp"
#include <epochrt/runtime/exchange_ops.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

using wait_ptr = std::shared_ptr<exchange_wait>;

const task_ref producer{"n0", "producer"};
const task_ref second_producer{"n0", "producer_2"};
const task_ref consumer{"n1", "consumer"};
const task_ref second_consumer{"n2", "consumer_2"};

channel_plan plan_of(int64_t capacity, std::vector<task_ref> putters,
                     std::vector<task_ref> takers) {
  return channel_plan{channel_def{"c", "n1", capacity, {"x"}},
                      std::move(putters), std::move(takers)};
}

std::vector<tensor_ptr> item(int64_t x) {
  return {std::make_shared<const tensor>(make_scalar<int64_t>(x))};
}

// The single value a completed take brought.
int64_t value_of(const wait_ptr& w) {
  BOOST_REQUIRE(w->completed());
  auto& outcome = w->outcome();
  BOOST_REQUIRE_MESSAGE(!outcome.error, error_text(outcome.error));
  BOOST_REQUIRE(outcome.values.size() == 1u);
  return static_cast<int64_t>(element_as_double(*outcome.values[0], 0));
}

std::string error_of_wait(const wait_ptr& w) {
  return w->completed() && w->outcome().error ? error_text(w->outcome().error)
                                              : std::string{};
}

// Calls on one channel, each completing what it ended at once, as the
// node's exchange does once it unlocks.
struct channel_fixture {
  channel ch{plan_of(2, {producer}, {consumer})};
  exchange_completions done;

  void reset(channel_plan plan) {
    ch = channel{std::move(plan)};
  }

  wait_ptr put(int64_t x, const task_ref& from = producer) {
    auto w = std::make_shared<exchange_wait>();
    ch.put(from, item(x), w, done);
    complete_all(done);
    return w;
  }

  wait_ptr take(const task_ref& from = consumer) {
    auto w = std::make_shared<exchange_wait>();
    ch.take(from, w, done);
    complete_all(done);
    return w;
  }

  wait_ptr close(const task_ref& from = producer) {
    auto w = std::make_shared<exchange_wait>();
    ch.close(from, w, done);
    complete_all(done);
    return w;
  }

  void end(const task_ref& task) {
    ch.task_ended(task, done);
    complete_all(done);
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(channel_suite, channel_fixture)

BOOST_AUTO_TEST_CASE(items_come_out_in_the_order_they_were_put) {
  reset(plan_of(8, {producer}, {consumer}));
  for (int64_t x : {5, 3, 9, 1})
    BOOST_REQUIRE(put(x)->completed());
  BOOST_TEST(ch.items() == 4u);
  std::vector<int64_t> taken;
  for (int i = 0; i < 4; ++i)
    taken.push_back(value_of(take()));
  BOOST_TEST(taken == (std::vector<int64_t>{5, 3, 9, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(ch.items() == 0u);
}

BOOST_AUTO_TEST_CASE(a_call_leaves_the_waits_it_ends_to_its_caller) {
  auto w = std::make_shared<exchange_wait>();
  ch.put(producer, item(1), w, done);
  BOOST_TEST(!w->completed());
  BOOST_REQUIRE(done.size() == 1u);
  complete_all(done);
  BOOST_TEST(w->completed());
  BOOST_TEST(done.empty());
}

BOOST_AUTO_TEST_CASE(a_put_into_a_full_channel_waits_until_a_take_makes_room) {
  BOOST_REQUIRE(put(1)->completed());
  BOOST_REQUIRE(put(2)->completed());
  auto third = put(3);
  BOOST_TEST(!third->completed()); // capacity 2: full
  BOOST_TEST(ch.items() == 2u);
  BOOST_TEST(value_of(take()) == 1);
  BOOST_TEST(third->completed());
  BOOST_TEST(!third->outcome().error);
  BOOST_TEST(ch.items() == 2u); // 2 and 3
  BOOST_TEST(value_of(take()) == 2);
  BOOST_TEST(value_of(take()) == 3);
}

BOOST_AUTO_TEST_CASE(waiting_puts_are_stored_in_the_order_they_came) {
  reset(plan_of(1, {producer, second_producer}, {consumer}));
  BOOST_REQUIRE(put(1)->completed());
  auto a = put(2, second_producer);
  auto b = put(3, producer);
  BOOST_TEST(!a->completed());
  BOOST_TEST(!b->completed());
  BOOST_TEST(value_of(take()) == 1);
  BOOST_TEST(a->completed());
  BOOST_TEST(!b->completed());
  BOOST_TEST(value_of(take()) == 2);
  BOOST_TEST(b->completed());
  BOOST_TEST(value_of(take()) == 3);
}

BOOST_AUTO_TEST_CASE(a_take_from_an_empty_channel_waits_for_the_next_put) {
  auto w = take();
  BOOST_TEST(!w->completed());
  BOOST_TEST(put(7)->completed());
  BOOST_TEST(value_of(w) == 7);
  BOOST_TEST(ch.items() == 0u); // went straight to the waiting take
}

BOOST_AUTO_TEST_CASE(waiting_takes_are_served_in_the_order_they_came) {
  reset(plan_of(2, {producer}, {consumer, second_consumer}));
  auto first = take(second_consumer);
  auto second = take(consumer);
  put(10);
  BOOST_TEST(value_of(first) == 10);
  BOOST_TEST(!second->completed());
  put(11);
  BOOST_TEST(value_of(second) == 11);
}

BOOST_AUTO_TEST_CASE(a_take_on_a_closed_empty_channel_reports_closed) {
  BOOST_REQUIRE(close()->completed());
  auto w = take();
  BOOST_REQUIRE(w->completed());
  BOOST_TEST(!w->outcome().error);
  BOOST_TEST(w->outcome().closed);
  BOOST_TEST(w->outcome().values.empty());
  BOOST_TEST(ch.closed());
}

BOOST_AUTO_TEST_CASE(items_put_before_a_close_are_still_taken_after_it) {
  put(1);
  put(2);
  close();
  BOOST_TEST(value_of(take()) == 1);
  BOOST_TEST(value_of(take()) == 2);
  auto end = take();
  BOOST_REQUIRE(end->completed());
  BOOST_TEST(end->outcome().closed);
}

BOOST_AUTO_TEST_CASE(
  a_put_into_a_closed_channel_fails_naming_channel_and_task) {
  close();
  auto w = put(1);
  BOOST_REQUIRE(w->completed());
  BOOST_TEST(is_code(w->outcome().error, runtime_errc::exchange_failed));
  BOOST_TEST(error_of_wait(w).find(
               "channel 'c' on node n1 is closed: task 'producer' on n0 "
               "cannot put into it")
               != std::string::npos,
             error_of_wait(w));
  BOOST_TEST(ch.items() == 0u);
}

BOOST_AUTO_TEST_CASE(close_is_idempotent_and_completes_every_time) {
  put(1);
  auto first = close();
  auto second = close(consumer);
  BOOST_TEST(first->completed());
  BOOST_TEST(!first->outcome().error);
  BOOST_TEST(second->completed());
  BOOST_TEST(!second->outcome().error);
  BOOST_TEST(ch.closed());
  BOOST_TEST(ch.items() == 1u); // a second close drops nothing
  BOOST_TEST(value_of(take()) == 1);
}

BOOST_AUTO_TEST_CASE(closing_ends_waiting_takes_and_fails_waiting_puts) {
  // Waiting takes (empty channel) end as closed.
  auto waiting_take = take();
  BOOST_REQUIRE(!waiting_take->completed());
  close();
  BOOST_REQUIRE(waiting_take->completed());
  BOOST_TEST(waiting_take->outcome().closed);
  BOOST_TEST(!waiting_take->outcome().error);
  // Waiting puts (full channel) fail, naming who closed it.
  reset(plan_of(1, {producer, second_producer}, {consumer}));
  put(1);
  auto waiting_put = put(2, second_producer);
  BOOST_REQUIRE(!waiting_put->completed());
  close();
  BOOST_REQUIRE(waiting_put->completed());
  BOOST_TEST(
    is_code(waiting_put->outcome().error, runtime_errc::exchange_failed));
  BOOST_TEST(error_of_wait(waiting_put)
                 .find("was closed by task 'producer' on n0 while task "
                       "'producer_2' on n0 waited to put into it")
               != std::string::npos,
             error_of_wait(waiting_put));
  BOOST_TEST(ch.items() == 1u);
}

BOOST_AUTO_TEST_CASE(a_waiting_take_fails_once_every_putter_has_ended) {
  reset(plan_of(2, {producer, second_producer}, {consumer}));
  auto w = take();
  end(producer);
  BOOST_TEST(!w->completed()); // producer_2 may still put or close
  end(second_producer);
  BOOST_REQUIRE(w->completed());
  BOOST_TEST(is_code(w->outcome().error, runtime_errc::exchange_failed));
  BOOST_TEST(error_of_wait(w)
               == "channel 'c' on node n1 is empty and open, and every task "
                  "that puts into it or closes it has ended ('producer' on "
                  "n0, 'producer_2' on n0): it was never closed",
             error_of_wait(w));
}

BOOST_AUTO_TEST_CASE(a_take_after_every_putter_ended_fails_at_once) {
  end(producer);
  auto w = take();
  BOOST_REQUIRE(w->completed());
  BOOST_TEST(is_code(w->outcome().error, runtime_errc::exchange_failed));
}

BOOST_AUTO_TEST_CASE(a_take_after_every_putter_ended_still_gets_what_is_left) {
  put(4);
  close();
  end(producer);
  BOOST_TEST(value_of(take()) == 4);
  BOOST_TEST(take()->outcome().closed);
}

BOOST_AUTO_TEST_CASE(a_waiting_put_fails_once_every_taker_has_ended) {
  reset(plan_of(1, {producer}, {consumer, second_consumer}));
  put(1);
  auto w = put(2);
  end(consumer);
  BOOST_TEST(!w->completed()); // consumer_2 may still take
  end(second_consumer);
  BOOST_REQUIRE(w->completed());
  BOOST_TEST(is_code(w->outcome().error, runtime_errc::exchange_failed));
  BOOST_TEST(error_of_wait(w)
               == "channel 'c' on node n1 is full (1 items), and every task "
                  "that takes from it has ended ('consumer' on n1, "
                  "'consumer_2' on n2)",
             error_of_wait(w));
}

BOOST_AUTO_TEST_CASE(failing_the_waits_of_a_node_leaves_the_others_waiting) {
  reset(plan_of(2, {producer}, {consumer, second_consumer}));
  auto on_n1 = take(consumer);
  auto on_n2 = take(second_consumer);
  ch.fail_waiting_of("n1", make_error(runtime_errc::op_failed, "stop"), done);
  complete_all(done);
  BOOST_REQUIRE(on_n1->completed());
  BOOST_TEST(is_code(on_n1->outcome().error, runtime_errc::op_failed));
  BOOST_TEST(!on_n2->completed());
  // The next item goes to the take that still waits, not to the failed one.
  put(3);
  BOOST_TEST(value_of(on_n2) == 3);
}

BOOST_AUTO_TEST_CASE(failing_every_wait_ends_puts_and_takes) {
  reset(plan_of(1, {producer}, {consumer}));
  auto t = take();
  ch.fail_waiting(make_error(runtime_errc::peer_lost, "gone"), done);
  complete_all(done);
  BOOST_TEST(is_code(t->outcome().error, runtime_errc::peer_lost));
  put(1);
  auto p = put(2);
  ch.fail_waiting(make_error(runtime_errc::peer_lost, "gone"), done);
  complete_all(done);
  BOOST_TEST(is_code(p->outcome().error, runtime_errc::peer_lost));
}

BOOST_AUTO_TEST_SUITE_END()

// -- the channel ops in a task ------------------------------------------------

namespace {

// A task's port to one channel served at once, in the calling thread.
class one_channel_port : public task_port {
public:
  one_channel_port(channel_plan plan, task_ref me)
    : ch_(std::move(plan)), me_(std::move(me)) {
    // nop
  }

  channel& chan() {
    return ch_;
  }

  std::optional<channel_def>
  find_channel(const std::string& name) const override {
    if (name != ch_.name())
      return std::nullopt;
    return ch_.plan().channel;
  }

  wait_ptr put(const std::string&, std::vector<tensor_ptr> x) override {
    auto w = std::make_shared<exchange_wait>();
    ch_.put(me_, std::move(x), w, done_);
    complete_all(done_);
    return w;
  }

  wait_ptr take(const std::string&) override {
    auto w = std::make_shared<exchange_wait>();
    ch_.take(me_, w, done_);
    complete_all(done_);
    return w;
  }

  wait_ptr close(const std::string&) override {
    auto w = std::make_shared<exchange_wait>();
    ch_.close(me_, w, done_);
    complete_all(done_);
    return w;
  }

  wait_ptr collective(collective_kind, const std::string&,
                      std::vector<tensor_ptr>) override {
    exchange_outcome failed;
    failed.error = make_error(runtime_errc::exchange_failed, "no collective");
    return completed_wait(std::move(failed));
  }

  // Puts from outside the task (another task).
  wait_ptr put_from(const task_ref& from, int64_t x) {
    auto w = std::make_shared<exchange_wait>();
    ch_.put(from, item(x), w, done_);
    complete_all(done_);
    return w;
  }

private:
  channel ch_;
  task_ref me_;
  exchange_completions done_;
};

tensor str_arg(const std::string& x) {
  return make_string_tensor({}, {x});
}

op_def channel_op(const std::string& type, std::vector<std::string> inputs,
                  std::vector<std::string> outputs) {
  return make_op(type, std::move(inputs), std::move(outputs),
                 {{"channel", str_arg("c")}});
}

op_def fill_i64(const std::string& out, int64_t value) {
  return make_op("ConstantFill", {}, {out},
                 {{"shape", i64s({0}, {})},
                  {"value", make_scalar<int64_t>(value)},
                  {"dtype", str("i64")}});
}

} // namespace

BOOST_AUTO_TEST_SUITE(channel_ops_suite)

BOOST_AUTO_TEST_CASE(safe_dequeue_blobs_ends_its_step_at_the_closed_end) {
  one_channel_port port{plan_of(8, {producer}, {consumer}), consumer};
  for (int64_t x : {1, 2, 3})
    BOOST_REQUIRE(port.put_from(producer, x)->completed());
  exchange_completions done;
  port.chan().close(producer, std::make_shared<exchange_wait>(), done);
  complete_all(done);
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws, {fill_i64("total", 0)}));
  // Ten iterations at most; the step must end at the channel's end, and
  // the Add after the op must not run again then (it would add 3 twice).
  auto task = make_task("consumer", "n1",
                        {channel_op("SafeDequeueBlobs", {}, {"x", "done"}),
                         make_op("Add", {"total", "x"}, {"total"})});
  task.steps[0].num_iter = 10;
  task.steps.push_back(step_def{"after", {fill_i64("after", 1)}, 1, {}});
  auto result = run_task(task, ws, builtins(), nullptr, {}, &port);
  BOOST_REQUIRE_MESSAGE(result, error_of(result));
  BOOST_TEST(ints(*ws.get("total")) == (std::vector<int64_t>{6}),
             boost::test_tools::per_element());
  BOOST_TEST(*truth_value(*ws.get("done")));
  BOOST_TEST(ints(*ws.get("x")) == (std::vector<int64_t>{3}),
             boost::test_tools::per_element()); // left as it was
  BOOST_TEST(ws.get("after") != nullptr);       // the next step ran
}

BOOST_AUTO_TEST_CASE(safe_dequeue_blobs_status_is_false_while_items_come) {
  one_channel_port port{plan_of(8, {producer}, {consumer}), consumer};
  port.put_from(producer, 5);
  workspace ws;
  auto result
    = run_task(make_task("consumer", "n1",
                         {channel_op("SafeDequeueBlobs", {}, {"x", "done"})}),
               ws, builtins(), nullptr, {}, &port);
  BOOST_REQUIRE_MESSAGE(result, error_of(result));
  BOOST_TEST(!*truth_value(*ws.get("done")));
  BOOST_TEST(ints(*ws.get("x")) == (std::vector<int64_t>{5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dequeue_blobs_fails_on_a_closed_empty_channel) {
  one_channel_port port{plan_of(8, {producer}, {consumer}), consumer};
  exchange_completions done;
  port.chan().close(producer, std::make_shared<exchange_wait>(), done);
  complete_all(done);
  workspace ws;
  auto result = run_task(
    make_task("consumer", "n1", {channel_op("DequeueBlobs", {}, {"x"})}), ws,
    builtins(), nullptr, {}, &port);
  BOOST_REQUIRE(!result);
  BOOST_TEST(error_of(result).find("channel 'c' is closed and empty")
               != std::string::npos,
             error_of(result));
}

BOOST_AUTO_TEST_CASE(enqueue_then_close_in_one_task_leaves_the_items_in_order) {
  one_channel_port port{plan_of(8, {producer}, {consumer}), producer};
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws, {fill_i64("a", 1), fill_i64("b", 2)}));
  auto result = run_task(make_task("producer", "n0",
                                   {channel_op("EnqueueBlobs", {"a"}, {}),
                                    channel_op("EnqueueBlobs", {"b"}, {}),
                                    channel_op("CloseBlobsQueue", {}, {})}),
                         ws, builtins(), nullptr, {}, &port);
  BOOST_REQUIRE_MESSAGE(result, error_of(result));
  BOOST_TEST(port.chan().closed());
  BOOST_TEST(port.chan().items() == 2u);
  exchange_completions done;
  std::vector<int64_t> taken;
  for (int i = 0; i < 2; ++i) {
    auto w = std::make_shared<exchange_wait>();
    port.chan().take(consumer, w, done);
    complete_all(done);
    taken.push_back(value_of(w));
  }
  BOOST_TEST(taken == (std::vector<int64_t>{1, 2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_task_whose_take_waits_gives_its_thread_back) {
  one_channel_port port{plan_of(1, {producer}, {consumer}), consumer};
  workspace ws;
  auto task
    = make_task("consumer", "n1", {channel_op("DequeueBlobs", {}, {"x"})});
  task_execution execution{task, ws, builtins(), nullptr, {}, &port};
  // The channel is empty: run returns instead of blocking.
  BOOST_REQUIRE(!execution.run());
  auto pending = execution.pending();
  BOOST_REQUIRE(pending != nullptr);
  BOOST_TEST(!pending->completed());
  BOOST_TEST(ws.get("x") == nullptr);
  // Another task's put ends the wait; the task goes on from the op.
  port.put_from(producer, 42);
  BOOST_REQUIRE(pending->completed());
  BOOST_REQUIRE(execution.run());
  BOOST_REQUIRE_MESSAGE(execution.result(), error_of(execution.result()));
  BOOST_TEST(ints(*ws.get("x")) == (std::vector<int64_t>{42}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_task_whose_put_waits_goes_on_once_room_is_made) {
  one_channel_port port{plan_of(1, {producer}, {consumer}), producer};
  port.put_from(producer, 1); // full
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws, {fill_i64("a", 2)}));
  auto task
    = make_task("producer", "n0", {channel_op("EnqueueBlobs", {"a"}, {})});
  task_execution execution{task, ws, builtins(), nullptr, {}, &port};
  BOOST_REQUIRE(!execution.run());
  exchange_completions done;
  auto w = std::make_shared<exchange_wait>();
  port.chan().take(consumer, w, done);
  complete_all(done);
  BOOST_TEST(value_of(w) == 1);
  BOOST_REQUIRE(execution.run());
  BOOST_REQUIRE_MESSAGE(execution.result(), error_of(execution.result()));
  BOOST_TEST(port.chan().items() == 1u); // 2 is in now
}

BOOST_AUTO_TEST_CASE(channel_ops_outside_a_session_fail) {
  workspace ws;
  BOOST_REQUIRE(!run_ops(ws, {fill_i64("a", 1)}));
  auto err = run_ops(ws, {channel_op("EnqueueBlobs", {"a"}, {})});
  BOOST_TEST(is_code(err, runtime_errc::exchange_failed), error_text(err));
  BOOST_TEST(error_text(err).find("no exchange") != std::string::npos,
             error_text(err));
}

BOOST_AUTO_TEST_CASE(an_op_naming_a_channel_the_port_lacks_fails) {
  one_channel_port port{plan_of(1, {producer}, {consumer}), consumer};
  workspace ws;
  auto result = run_task(make_task("consumer", "n1",
                                   {make_op("DequeueBlobs", {}, {"x"},
                                            {{"channel", str("other")}})}),
                         ws, builtins(), nullptr, {}, &port);
  BOOST_REQUIRE(!result);
  BOOST_TEST(
    error_of(result).find("channel 'other' is not a channel of this group")
      != std::string::npos,
    error_of(result));
}

BOOST_AUTO_TEST_SUITE_END()
