// Channels and collectives among the tasks of one group, in process: real
// local sessions run groups through session::run and jobs through
// job_runner::train. Every wait is bounded: a session's group timeout is
// far above what a test needs, and each test that could hang checks that
// its group ended well before it.
#define BOOST_TEST_MODULE actors_exchange
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test/actors/test_support.hpp"
#include "test/support/text.hpp"
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/exchange_ops.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A group that needs longer than this hangs (its timeout is far beyond).
constexpr milliseconds prompt{5000};
constexpr milliseconds group_limit{30000};

tensor str(const std::string& x) {
  return make_string_tensor({}, {x});
}

tensor i64_list(std::vector<int64_t> xs) {
  auto n = static_cast<int64_t>(xs.size());
  return make_tensor<int64_t>({n}, xs);
}

tensor f64_list(std::vector<double> xs) {
  auto n = static_cast<int64_t>(xs.size());
  return make_tensor<double>({n}, xs);
}

op_def fill_i64(const std::string& out, int64_t value) {
  return make_op("ConstantFill", {}, {out},
                 {{"shape", i64_list({})},
                  {"value", make_scalar<int64_t>(value)},
                  {"dtype", str("i64")}});
}

op_def given(const std::string& out, std::vector<double> values,
             const std::string& type = "f32", std::vector<int64_t> shape = {}) {
  std::map<std::string, tensor> args{{"values", f64_list(values)},
                                     {"dtype", str(type)}};
  if (!shape.empty())
    args.emplace("shape", i64_list(shape));
  return make_op("GivenTensorFill", {}, {out}, std::move(args));
}

op_def enqueue(const std::string& channel, std::vector<std::string> blobs) {
  return make_op("EnqueueBlobs", std::move(blobs), {},
                 {{"channel", str(channel)}});
}

op_def dequeue(const std::string& channel, std::vector<std::string> blobs) {
  return make_op("DequeueBlobs", {}, std::move(blobs),
                 {{"channel", str(channel)}});
}

op_def safe_dequeue(const std::string& channel,
                    std::vector<std::string> blobs) {
  return make_op("SafeDequeueBlobs", {}, std::move(blobs),
                 {{"channel", str(channel)}});
}

op_def close_channel(const std::string& channel) {
  return make_op("CloseBlobsQueue", {}, {}, {{"channel", str(channel)}});
}

op_def all_reduce(const std::string& name, std::vector<std::string> in,
                  std::vector<std::string> out, const std::string& op) {
  return make_op("Allreduce", std::move(in), std::move(out),
                 {{"collective", str(name)}, {"op", str(op)}});
}

op_def broadcast(const std::string& name, std::vector<std::string> in,
                 std::vector<std::string> out, const std::string& root) {
  return make_op("Broadcast", std::move(in), std::move(out),
                 {{"collective", str(name)}, {"root", str(root)}});
}

op_def all_gather(const std::string& name, std::vector<std::string> in,
                  std::vector<std::string> out) {
  return make_op("Allgather", std::move(in), std::move(out),
                 {{"collective", str(name)}});
}

op_def barrier(const std::string& name) {
  return make_op("Barrier", {}, {}, {{"collective", str(name)}});
}

op_def sleep_ms(int64_t ms) {
  return make_op("Sleep", {}, {}, {{"ms", make_scalar<int64_t>(ms)}});
}

// -- ops of these tests ----------------------------------------------------

// EmptyLog: -> log (i64 [0]).
caf::error empty_log(op_context& ctx) {
  ctx.set_output(0, make_tensor<int64_t>({0}, {}));
  return caf::none;
}

// AppendToLog: log, x -> log: x's single value appended to the i64 list.
caf::error append_to_log(op_context& ctx) {
  auto& log = ctx.input(0);
  std::vector<int64_t> values;
  for (size_t i = 0; i < log.element_count(); ++i)
    values.push_back(element_as_int(log, i));
  values.push_back(element_as_int(ctx.input(1), 0));
  ctx.set_output(0, i64_list(values));
  return caf::none;
}

// Now: -> t, the steady clock in microseconds (i64 scalar).
caf::error now_us(op_context& ctx) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
              clock_type::now().time_since_epoch())
              .count();
  ctx.set_output(0, make_scalar<int64_t>(us));
  return caf::none;
}

// Fail: no blobs; fails its task.
caf::error fail_task(op_context& ctx) {
  return ctx.fail(runtime_errc::op_failed, "the test's deliberate failure");
}

void add_test_ops(op_registry& ops) {
  auto add = [&](std::string type, int in, int out, op_function fn) {
    op_schema schema;
    schema.type = std::move(type);
    schema.doc = "an op of the exchange tests";
    schema.min_inputs = schema.max_inputs = in;
    schema.min_outputs = schema.max_outputs = out;
    schema.fn = std::move(fn);
    BOOST_REQUIRE(!ops.add(std::move(schema)));
  };
  add("EmptyLog", 0, 1, empty_log);
  add("AppendToLog", 2, 1, append_to_log);
  add("Now", 0, 1, now_us);
  add("Fail", 0, 0, fail_task);
}

op_def append(const std::string& log, const std::string& x) {
  return make_op("AppendToLog", {log, x}, {log});
}

// A task of several steps.
task_def task_of(std::string name, std::string node,
                 std::vector<step_def> steps,
                 std::vector<std::string> outputs = {}) {
  task_def result;
  result.name = std::move(name);
  result.node = std::move(node);
  result.steps = std::move(steps);
  result.outputs = std::move(outputs);
  return result;
}

step_def step(std::string name, std::vector<op_def> ops, int64_t num_iter = 1,
              std::string stop_blob = {}) {
  return step_def{std::move(name), std::move(ops), num_iter,
                  std::move(stop_blob)};
}

// Puts 1..n into `channel`, then closes it.
task_def producer(const std::string& name, const std::string& node,
                  const std::string& channel, int64_t n) {
  return task_of(name, node,
                 {step("init", {fill_i64("one", 1), fill_i64("counter", 0)}),
                  step("produce",
                       {make_op("Add", {"counter", "one"}, {"counter"}),
                        enqueue(channel, {"counter"})},
                       n),
                  step("close", {close_channel(channel)})});
}

// Takes items of `channel` into the list `log` until it is closed and
// empty.
task_def consumer(const std::string& name, const std::string& node,
                  const std::string& channel, const std::string& log) {
  auto x = "x_" + log;
  auto done = "done_" + log;
  return task_of(
    name, node,
    {step("init", {make_op("EmptyLog", {}, {log})}),
     step("consume", {safe_dequeue(channel, {x, done}), append(log, x)}, 0,
          done)},
    {log, done});
}

channel_def channel_on(std::string node, int64_t capacity,
                       std::string name = "c") {
  return channel_def{std::move(name), std::move(node), capacity, {"x"}};
}

const tensor& output_of(const std::vector<task_output>& outs,
                        const std::string& task, const std::string& blob) {
  for (auto& out : outs)
    if (out.task == task && out.blob == blob)
      return out.value;
  throw std::runtime_error("no output " + task + "/" + blob);
}

std::vector<int64_t> ints_of(const tensor& x) {
  std::vector<int64_t> result;
  for (size_t i = 0; i < x.element_count(); ++i)
    result.push_back(element_as_int(x, i));
  return result;
}

std::vector<float> floats_of(const tensor& x) {
  BOOST_REQUIRE(x.type == dtype::f32);
  auto* values = x.values<float>();
  return std::vector<float>(values, values + x.element_count());
}

bool same_bits(const tensor& x, const tensor& y) {
  return x.type == y.type && x.shape == y.shape && x.data == y.data
    && x.strings == y.strings;
}

std::vector<int64_t> sequence(int64_t first, int64_t last) {
  std::vector<int64_t> result;
  for (auto i = first; i <= last; ++i)
    result.push_back(i);
  return result;
}

using epochrt::test::contains;

struct exchange_fixture : system_fixture {
  exchange_fixture() {
    add_test_ops(*ops);
  }

  session_options options(size_t worker_threads = 2) {
    session_options opts;
    opts.group_timeout = group_limit;
    opts.checkpoint_timeout = std::chrono::seconds(30);
    opts.request_timeout = std::chrono::seconds(10);
    opts.worker_threads = worker_threads;
    return opts;
  }

  std::unique_ptr<local_session> session_of(size_t worker_threads = 2) {
    return std::make_unique<local_session>(sys, ops, options(worker_threads));
  }

  // Runs `group` as the epoch group of epoch 0 and measures how long it
  // took.
  caf::expected<std::vector<task_output>>
  run(session& sess, const task_group_def& group,
      const std::vector<channel_def>& channels = {}) {
    auto start = clock_type::now();
    auto result = sess.run(group, "epoch", 0, channels);
    took = std::chrono::duration_cast<milliseconds>(clock_type::now() - start);
    return result;
  }

  milliseconds took{0};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(channels, exchange_fixture)

BOOST_AUTO_TEST_CASE(a_consumer_on_another_node_gets_the_items_in_order) {
  auto sess = session_of();
  task_group_def group{{producer("producer", "n0", "c", 20),
                        consumer("consumer", "n1", "c", "log")}};
  // Capacity 3: the producer waits while the channel is full.
  auto outs = run(*sess, group, {channel_on("n1", 3)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(ints_of(output_of(*outs, "consumer", "log")) == sequence(1, 20),
             boost::test_tools::per_element());
  // SafeDequeueBlobs' status ended the consumer's step at the end.
  BOOST_TEST(ints_of(output_of(*outs, "consumer", "done_log"))
               == (std::vector<int64_t>{1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_channel_on_a_node_that_runs_no_task_carries_items) {
  auto sess = session_of();
  task_group_def group{{producer("producer", "n0", "c", 5),
                        consumer("consumer", "n1", "c", "log")}};
  auto outs = run(*sess, group, {channel_on("host", 2)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(ints_of(output_of(*outs, "consumer", "log")) == sequence(1, 5),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(consumers_of_one_channel_share_every_item_exactly_once) {
  auto sess = session_of();
  task_group_def group{{producer("producer", "n0", "c", 30),
                        consumer("consumer_a", "n1", "c", "log_a"),
                        consumer("consumer_b", "n2", "c", "log_b"),
                        consumer("consumer_c", "n2", "c", "log_c")}};
  auto outs = run(*sess, group, {channel_on("n1", 4)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  std::vector<int64_t> all;
  for (auto [task, log] :
       {std::pair{"consumer_a", "log_a"}, std::pair{"consumer_b", "log_b"},
        std::pair{"consumer_c", "log_c"}}) {
    auto mine = ints_of(output_of(*outs, task, log));
    // A channel is FIFO: what one consumer takes comes in order.
    BOOST_TEST(std::is_sorted(mine.begin(), mine.end()), task);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  BOOST_TEST(all == sequence(1, 30), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_group_that_leaves_items_in_a_channel_fails) {
  auto sess = session_of();
  task_group_def group{
    {producer("producer", "n0", "c", 3),
     task_of("consumer", "n1", {step("take_one", {dequeue("c", {"x"})})})}};
  auto outs = sess->run(group, "epoch", 7, {channel_on("n1", 4)});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(contains(why(outs),
                      "channel 'c' on node n1 still holds 2 items at the end "
                      "of the epoch group (epoch 7)"),
             why(outs));
  BOOST_TEST(in_category(outs.error(), actors_category));
}

BOOST_AUTO_TEST_CASE(a_channel_not_closed_by_the_end_of_its_group_fails) {
  // The closer's step ends at SafeDequeueBlobs' end of `d`, before the
  // close of `c` after it can run: `c` stays open.
  auto sess = session_of();
  task_group_def group{
    {task_of("closer_of_d", "n0", {step("close", {close_channel("d")})}),
     task_of("closer_of_c", "n1",
             {step("skip",
                   {safe_dequeue("d", {"x", "done"}), close_channel("c")})})}};
  auto outs
    = run(*sess, group, {channel_on("n1", 1, "c"), channel_on("n0", 1, "d")});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(contains(why(outs),
                      "channel 'c' on node n1 was not closed by "
                      "the end of the epoch group (epoch 0)"),
             why(outs));
}

BOOST_AUTO_TEST_CASE(an_op_naming_an_undeclared_channel_is_refused_unrun) {
  auto sess = session_of();
  task_group_def group{
    {task_of("writer", "n0", {step("s", {fill_i64("ran", 1)})}),
     producer("producer", "n0", "c", 1),
     task_of("consumer", "n1", {step("s", {dequeue("nope", {"x"})})})}};
  auto outs = run(*sess, group, {channel_on("n1", 1)});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(why(outs)
               == "tasks[2].steps[0].ops[0].args.channel: unknown channel "
                  "'nope' (the job declares no channel of that name)",
             why(outs));
  BOOST_TEST(!sess->fetch("n0", "ran")); // nothing ran
}

BOOST_AUTO_TEST_CASE(a_failing_producer_fails_the_group_its_consumer_waits_in) {
  auto sess = session_of();
  task_group_def group{
    {task_of("bad_producer", "n0",
             {step("s",
                   {sleep_ms(100), make_op("Fail", {}, {}), fill_i64("x", 1),
                    enqueue("c", {"x"}), close_channel("c")})}),
     task_of("consumer", "n1", {step("s", {dequeue("c", {"x"})})})}};
  auto outs = run(*sess, group, {channel_on("n1", 1)});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs), "bad_producer"), why(outs));
}

BOOST_AUTO_TEST_CASE(a_failing_consumer_fails_the_group_its_producer_waits_in) {
  auto sess = session_of();
  task_group_def group{
    {producer("producer", "n0", "c", 10),
     task_of("bad_consumer", "n1",
             {step("s",
                   {dequeue("c", {"x"}), make_op("Fail", {}, {}),
                    dequeue("c", {"x"})})})}};
  // Capacity 1: the producer waits on the full channel once the consumer
  // has failed.
  auto outs = run(*sess, group, {channel_on("n1", 1)});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs), "bad_consumer"), why(outs));
}

BOOST_AUTO_TEST_CASE(a_session_runs_channels_again_after_a_failed_group) {
  auto sess = session_of();
  task_group_def bad{
    {producer("producer", "n0", "c", 3),
     task_of("consumer", "n1", {step("s", {dequeue("c", {"x"})})})}};
  BOOST_REQUIRE(!run(*sess, bad, {channel_on("n1", 4)}));
  task_group_def good{{producer("producer", "n0", "c", 4),
                       consumer("consumer", "n1", "c", "log")}};
  auto outs = run(*sess, good, {channel_on("n1", 4)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(ints_of(output_of(*outs, "consumer", "log")) == sequence(1, 4),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_item_keeps_the_value_it_had_when_it_was_put) {
  // The consumer starts late: every item waits in the channel while the
  // producer goes on updating the blob it put (shared, not copied).
  auto sess = session_of();
  auto late = consumer("consumer", "n1", "c", "log");
  late.steps.insert(late.steps.begin(), step("late", {sleep_ms(100)}));
  task_group_def group{{producer("producer", "n0", "c", 10), late}};
  auto outs = run(*sess, group, {channel_on("n1", 10)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(ints_of(output_of(*outs, "consumer", "log")) == sequence(1, 10),
             boost::test_tools::per_element());
  auto counter = sess->fetch("n0", "counter");
  BOOST_REQUIRE_MESSAGE(counter, why(counter));
  BOOST_TEST(ints_of(*counter) == (std::vector<int64_t>{10}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(items_left_on_a_host_that_runs_no_task_fail_the_group) {
  auto sess = session_of();
  task_group_def group{
    {producer("producer", "n0", "c", 2),
     task_of("consumer", "n1", {step("take_one", {dequeue("c", {"x"})})})}};
  auto outs = run(*sess, group, {channel_on("host", 4)});
  BOOST_REQUIRE(!outs);
  BOOST_TEST(contains(why(outs),
                      "channel 'c' on node host still holds 1 item "
                      "at the end of the epoch group"),
             why(outs));
}

BOOST_AUTO_TEST_CASE(a_group_timing_out_while_its_tasks_wait_ends_them) {
  auto opts = options();
  opts.group_timeout = milliseconds{300};
  auto start = clock_type::now();
  {
    local_session sess{sys, ops, opts};
    // The producer sleeps far past the timeout; the consumer waits on the
    // empty channel all along.
    task_group_def stuck{
      {task_of("slow_producer", "n0",
               {step("s",
                     {sleep_ms(20000), fill_i64("x", 1), enqueue("c", {"x"}),
                      close_channel("c")})}),
       task_of("consumer", "n1", {step("s", {dequeue("c", {"x"})})})}};
    auto outs = run(sess, stuck, {channel_on("n1", 1)});
    BOOST_REQUIRE(!outs);
    BOOST_TEST(took.count() < prompt.count());
    // The same nodes run the next group with channels at once.
    task_group_def good{{producer("producer", "n0", "c", 3),
                         consumer("consumer", "n1", "c", "log")}};
    auto again = run(sess, good, {channel_on("n1", 1)});
    BOOST_REQUIRE_MESSAGE(again, why(again));
    BOOST_TEST(ints_of(output_of(*again, "consumer", "log")) == sequence(1, 3),
               boost::test_tools::per_element());
  } // the session stops its nodes, waiting for their tasks to end
  auto total
    = std::chrono::duration_cast<milliseconds>(clock_type::now() - start);
  BOOST_TEST(total.count() < prompt.count());
}

BOOST_AUTO_TEST_CASE(a_task_takes_back_what_it_put_itself) {
  auto sess = session_of();
  task_group_def group{
    {task_of("loop", "n0",
             {step("s",
                   {fill_i64("a", 4), fill_i64("b", 5), enqueue("c", {"a"}),
                    enqueue("c", {"b"}), close_channel("c"),
                    dequeue("c", {"first"}), dequeue("c", {"second"})})},
             {"first", "second"})}};
  auto outs = run(*sess, group, {channel_on("n1", 2)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(ints_of(output_of(*outs, "loop", "first"))
               == (std::vector<int64_t>{4}),
             boost::test_tools::per_element());
  BOOST_TEST(ints_of(output_of(*outs, "loop", "second"))
               == (std::vector<int64_t>{5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(more_waiting_consumers_than_worker_threads_finish) {
  // One worker thread; eight consumers that all wait on an empty channel
  // before the producer, queued last, can run. A consumer that held its
  // thread while waiting would starve the producer forever.
  auto sess = session_of(1);
  task_group_def group;
  for (int i = 0; i < 8; ++i) {
    auto name = "consumer_" + std::to_string(i);
    group.tasks.push_back(
      consumer(name, "n" + std::to_string(i % 2), "c", "log_" + name));
  }
  group.tasks.push_back(producer("producer", "n0", "c", 16));
  auto outs = run(*sess, group, {channel_on("n1", 1)});
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(took.count() < prompt.count());
  std::vector<int64_t> all;
  for (int i = 0; i < 8; ++i) {
    auto name = "consumer_" + std::to_string(i);
    auto mine = ints_of(output_of(*outs, name, "log_" + name));
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  BOOST_TEST(all == sequence(1, 16), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(collectives, exchange_fixture)

namespace {

// Node n's values of x: three nodes, three elements each, listed out of
// node order so that participant order is not group order.
const std::map<std::string, std::vector<double>> node_values{
  {"n0", {1, -2, 0.5}}, {"n1", {4, 6, -1}}, {"n2", {-3, 5, 2}}};

task_group_def reducing_group() {
  task_group_def group;
  for (auto node : {"n2", "n0", "n1"}) {
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node,
              {step("s",
                    {given("x", node_values.at(node)),
                     all_reduce("s", {"x"}, {"sum"}, "sum"),
                     all_reduce("m", {"x"}, {"mean"}, "mean"),
                     all_reduce("lo", {"x"}, {"min"}, "min"),
                     all_reduce("hi", {"x"}, {"max"}, "max")})},
              {"sum", "mean", "min", "max"}));
  }
  return group;
}

// f32 folded in node order, as the reduction must.
std::vector<float> f32_fold(reduce_op op) {
  std::vector<float> acc;
  for (auto& [node, values] : node_values) {
    std::vector<float> xs(values.begin(), values.end());
    if (acc.empty()) {
      acc = xs;
      continue;
    }
    for (size_t i = 0; i < xs.size(); ++i)
      switch (op) {
        case reduce_op::sum:
        case reduce_op::mean:
          acc[i] = acc[i] + xs[i];
          break;
        case reduce_op::min:
          acc[i] = xs[i] < acc[i] ? xs[i] : acc[i];
          break;
        case reduce_op::max:
          acc[i] = acc[i] < xs[i] ? xs[i] : acc[i];
          break;
      }
  }
  if (op == reduce_op::mean)
    for (auto& x : acc)
      x = x / 3.0f;
  return acc;
}

} // namespace

BOOST_AUTO_TEST_CASE(all_reduce_gives_every_node_the_exact_reduction) {
  auto sess = session_of();
  auto outs = run(*sess, reducing_group());
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(f32_fold(reduce_op::sum) == (std::vector<float>{2, 9, 1.5}),
             boost::test_tools::per_element());
  BOOST_TEST(f32_fold(reduce_op::min) == (std::vector<float>{-3, -2, -1}),
             boost::test_tools::per_element());
  BOOST_TEST(f32_fold(reduce_op::max) == (std::vector<float>{4, 6, 2}),
             boost::test_tools::per_element());
  for (auto task : {"t_n0", "t_n1", "t_n2"}) {
    BOOST_TEST_CONTEXT(task) {
      BOOST_TEST(floats_of(output_of(*outs, task, "sum"))
                   == f32_fold(reduce_op::sum),
                 boost::test_tools::per_element());
      BOOST_TEST(floats_of(output_of(*outs, task, "mean"))
                   == f32_fold(reduce_op::mean),
                 boost::test_tools::per_element());
      BOOST_TEST(floats_of(output_of(*outs, task, "min"))
                   == f32_fold(reduce_op::min),
                 boost::test_tools::per_element());
      BOOST_TEST(floats_of(output_of(*outs, task, "max"))
                   == f32_fold(reduce_op::max),
                 boost::test_tools::per_element());
      BOOST_TEST(
        (output_of(*outs, task, "sum").shape == std::vector<int64_t>{3}));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_large_all_reduce_is_bit_identical_across_runs) {
  // 4.8 MB per node: chunks large enough to be reduced on the pool, each
  // in shares that run at once, in whatever order the pool runs them.
  task_group_def init;
  task_group_def reduce;
  for (auto node : {"n1", "n2", "n0"}) {
    init.tasks.push_back(
      task_of(std::string{"data_"} + node, node,
              {step("s",
                    {make_op("GenerateLinearData", {}, {"X", "y"},
                             {{"rows", make_scalar<int64_t>(300000)},
                              {"features", make_scalar<int64_t>(4)},
                              {"seed", make_scalar<int64_t>(node[1])}})})}));
    reduce.tasks.push_back(task_of(
      std::string{"reduce_"} + node, node,
      {step("s", {all_reduce("g", {"X", "y"}, {"sum_X", "sum_y"}, "sum")})},
      {"sum_X"}));
  }
  std::vector<tensor> first;
  for (int round = 0; round < 3; ++round) {
    auto sess = session_of(round == 0 ? 1 : 2);
    BOOST_REQUIRE(run(*sess, init));
    auto outs = run(*sess, reduce);
    BOOST_REQUIRE_MESSAGE(outs, why(outs));
    if (round == 0) {
      // The reference: the three X folded in node order.
      std::vector<std::vector<float>> xs;
      for (auto node : {"n0", "n1", "n2"}) {
        auto x = sess->fetch(node, "X");
        BOOST_REQUIRE_MESSAGE(x, why(x));
        xs.push_back(floats_of(*x));
      }
      std::vector<float> expected(xs[0].size());
      for (size_t i = 0; i < expected.size(); ++i)
        expected[i] = (xs[0][i] + xs[1][i]) + xs[2][i];
      auto got = floats_of(output_of(*outs, "reduce_n0", "sum_X"));
      BOOST_REQUIRE(got.size() == expected.size());
      BOOST_TEST(
        std::memcmp(got.data(), expected.data(), got.size() * sizeof(float))
        == 0);
    }
    for (auto node : {"n0", "n1", "n2"}) {
      auto& mine = output_of(*outs, std::string{"reduce_"} + node, "sum_X");
      if (first.empty())
        first.push_back(mine);
      BOOST_TEST(same_bits(mine, first[0]), node << " in round " << round);
    }
  }
}

BOOST_AUTO_TEST_CASE(broadcast_gives_every_node_the_roots_blobs) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"}) {
    auto v = node_values.at(node);
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node,
              {step("s",
                    {given("w", v), given("k", {v[0]}, "i64"),
                     broadcast("b", {"w", "k"}, {"w_root", "k_root"}, "n1")})},
              {"w_root", "k_root"}));
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  for (auto task : {"t_n0", "t_n1", "t_n2"}) {
    BOOST_TEST(floats_of(output_of(*outs, task, "w_root"))
                 == (std::vector<float>{4, 6, -1}),
               boost::test_tools::per_element());
    BOOST_TEST(ints_of(output_of(*outs, task, "k_root"))
                 == (std::vector<int64_t>{4}),
               boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(all_gather_stacks_every_nodes_blob_in_node_order) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n2", "n0", "n1"}) {
    auto v = node_values.at(node);
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node,
              {step("s",
                    {given("x", {v[0], v[1]}, "f32", {2, 1}),
                     all_gather("g", {"x"}, {"all"})})},
              {"all"}));
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  for (auto task : {"t_n0", "t_n1", "t_n2"}) {
    auto& all = output_of(*outs, task, "all");
    BOOST_TEST((all.shape == std::vector<int64_t>{3, 2, 1}), task);
    BOOST_TEST(floats_of(all) == (std::vector<float>{1, -2, 4, 6, -3, 5}),
               boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(no_task_leaves_a_barrier_before_every_task_reached_it) {
  auto sess = session_of();
  task_group_def group;
  int64_t delay = 0;
  for (auto node : {"n0", "n1", "n2"}) {
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node,
              {step("s",
                    {sleep_ms(delay), make_op("Now", {}, {"arrived"}),
                     barrier("b"), make_op("Now", {}, {"left"})})},
              {"arrived", "left"}));
    delay += 150;
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  int64_t last_arrival = 0;
  int64_t first_departure = INT64_MAX;
  for (auto task : {"t_n0", "t_n1", "t_n2"}) {
    last_arrival
      = std::max(last_arrival, ints_of(output_of(*outs, task, "arrived"))[0]);
    first_departure
      = std::min(first_departure, ints_of(output_of(*outs, task, "left"))[0]);
  }
  BOOST_TEST(first_departure >= last_arrival);
}

BOOST_AUTO_TEST_CASE(collective_results_are_bit_identical_across_runs) {
  std::vector<std::vector<task_output>> runs;
  for (int round = 0; round < 3; ++round) {
    auto sess = session_of();
    auto outs = run(*sess, reducing_group());
    BOOST_REQUIRE_MESSAGE(outs, why(outs));
    auto sorted = *outs;
    std::sort(sorted.begin(), sorted.end(), [](auto& x, auto& y) {
      return std::tie(x.task, x.blob) < std::tie(y.task, y.blob);
    });
    runs.push_back(std::move(sorted));
  }
  for (size_t r = 1; r < runs.size(); ++r) {
    BOOST_REQUIRE(runs[r].size() == runs[0].size());
    for (size_t i = 0; i < runs[0].size(); ++i)
      BOOST_TEST(same_bits(runs[r][i].value, runs[0][i].value),
                 runs[0][i].task << "/" << runs[0][i].blob);
  }
}

BOOST_AUTO_TEST_CASE(a_collective_of_one_task_gives_back_its_own_blobs) {
  auto sess = session_of();
  task_group_def group{{task_of(
    "alone", "n0",
    {step("s",
          {given("x", {1.5, -2}), all_reduce("r", {"x"}, {"r"}, "mean"),
           all_gather("g", {"x"}, {"g"}), barrier("b")})},
    {"r", "g"})}};
  auto outs = run(*sess, group);
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(floats_of(output_of(*outs, "alone", "r"))
               == (std::vector<float>{1.5, -2}),
             boost::test_tools::per_element());
  BOOST_TEST(
    (output_of(*outs, "alone", "g").shape == std::vector<int64_t>{1, 2}));
}

BOOST_AUTO_TEST_CASE(more_tasks_in_one_all_reduce_than_worker_threads_finish) {
  // Six participants on a pool of two threads: the first ones to come
  // wait without their threads until the last one can run.
  auto sess = session_of(2);
  task_group_def group;
  for (int i = 0; i < 6; ++i)
    group.tasks.push_back(
      task_of("t" + std::to_string(i), "n" + std::to_string(i % 3),
              {step("s",
                    {given("x_" + std::to_string(i), {double(i), 1}, "i64"),
                     all_reduce("g", {"x_" + std::to_string(i)},
                                {"sum_" + std::to_string(i)}, "sum")})},
              {"sum_" + std::to_string(i)}));
  auto outs = run(*sess, group);
  BOOST_REQUIRE_MESSAGE(outs, why(outs));
  BOOST_TEST(took.count() < prompt.count());
  for (int i = 0; i < 6; ++i)
    BOOST_TEST(ints_of(output_of(*outs, "t" + std::to_string(i),
                                 "sum_" + std::to_string(i)))
                 == (std::vector<int64_t>{15, 6}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_all_reduce_of_mismatched_shapes_fails_naming_nodes) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"}) {
    std::vector<double> v{1, 2, 3};
    if (std::string{node} == "n2")
      v.push_back(4);
    group.tasks.push_back(task_of(
      std::string{"t_"} + node, node,
      {step("s", {given("x", v), all_reduce("g", {"x"}, {"y"}, "sum")})}));
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs),
                      "all-reduce 'g' (call 1): blob 0 is f32 [4] "
                      "on node n2 (task 't_n2' on n2) but f32 [3] "
                      "on node n0 (task 't_n0' on n0)"),
             why(outs));
}

BOOST_AUTO_TEST_CASE(an_all_reduce_of_mismatched_dtypes_fails_naming_nodes) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"})
    group.tasks.push_back(task_of(
      std::string{"t_"} + node, node,
      {step("s",
            {given("x", {1, 2, 3}, node == std::string{"n1"} ? "f64" : "f32"),
             all_reduce("g", {"x"}, {"y"}, "sum")})}));
  auto outs = run(*sess, group);
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs),
                      "blob 0 is f64 [3] on node n1 (task 't_n1' "
                      "on n1) but f32 [3] on node n0"),
             why(outs));
}

BOOST_AUTO_TEST_CASE(a_broadcast_of_a_shape_other_than_the_roots_fails) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"})
    group.tasks.push_back(task_of(
      std::string{"t_"} + node, node,
      {step("s",
            {given("w",
                   node == std::string{"n0"} ? std::vector<double>{1, 2}
                                             : std::vector<double>{1, 2, 3}),
             broadcast("b", {"w"}, {"w_root"}, "n1")})}));
  auto outs = run(*sess, group);
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs), "broadcast 'b'"), why(outs));
  BOOST_TEST(contains(why(outs), "on node n0"), why(outs));
  BOOST_TEST(contains(why(outs), "on node n1"), why(outs));
}

BOOST_AUTO_TEST_CASE(a_task_failing_before_an_all_reduce_fails_the_group) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"}) {
    std::vector<op_def> ops{given("x", {1})};
    if (std::string{node} == "n1") {
      ops.push_back(sleep_ms(100)); // the others wait in the all-reduce
      ops.push_back(make_op("Fail", {}, {}));
    }
    ops.push_back(all_reduce("g", {"x"}, {"y"}, "sum"));
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node, {step("s", std::move(ops))}));
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs), "t_n1"), why(outs));
}

// A failing task reports its own error to its group before the tasks that
// wait for it learn of its end, so the group's error is the cause, not a
// consequence ("... cannot complete: task 't_n1' on n1 failed ...").
BOOST_AUTO_TEST_CASE(the_group_reports_the_failed_tasks_own_error) {
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"}) {
    std::vector<op_def> ops{given("x", {1})};
    if (std::string{node} == "n1") {
      ops.push_back(sleep_ms(5));
      ops.push_back(make_op("Fail", {}, {}));
    }
    ops.push_back(all_reduce("g", {"x"}, {"y"}, "sum"));
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node, {step("s", std::move(ops))}));
  }
  for (int round = 0; round < 60; ++round) {
    auto outs = run(*sess, group);
    BOOST_REQUIRE(!outs);
    BOOST_TEST(contains(why(outs), "the test's deliberate failure"),
               "round " << round << ": " << why(outs));
  }
}

BOOST_AUTO_TEST_CASE(a_task_making_fewer_calls_of_a_collective_fails_it) {
  // t_n0 calls the all-reduce twice, the others once: its second call can
  // never complete.
  auto sess = session_of();
  task_group_def group;
  for (auto node : {"n0", "n1", "n2"}) {
    std::vector<op_def> ops{given("x", {1}),
                            all_reduce("g", {"x"}, {"x"}, "sum")};
    if (std::string{node} == "n0")
      ops.push_back(all_reduce("g", {"x"}, {"x"}, "sum"));
    group.tasks.push_back(
      task_of(std::string{"t_"} + node, node, {step("s", std::move(ops))}));
  }
  auto outs = run(*sess, group);
  BOOST_REQUIRE(!outs);
  BOOST_TEST(took.count() < prompt.count());
  BOOST_TEST(contains(why(outs), "all-reduce 'g' (call 2) cannot complete"),
             why(outs));
}

BOOST_AUTO_TEST_SUITE_END()

// -- jobs ---------------------------------------------------------------------

BOOST_FIXTURE_TEST_SUITE(exchange_jobs, exchange_fixture)

namespace {

// Every trainer's w and b after the job.
std::vector<tensor> weights(session& sess) {
  std::vector<tensor> result;
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    for (auto blob : {"w", "b"}) {
      auto x = sess.fetch(node, blob);
      BOOST_REQUIRE_MESSAGE(x, why(x));
      result.push_back(std::move(*x));
    }
  return result;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_resumed_data_parallel_job_ends_with_the_same_bits) {
  auto j = load_example("data_parallel.json");
  auto straight_dir = dir.str() + "/straight";
  std::vector<tensor> straight;
  {
    auto sess = session_of();
    multi_node_checkpoint_manager ckpt{sys, straight_dir};
    job_runner runner{j, &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    straight = weights(*sess);
  }
  // The trainers' data-parallel copies agree with each other.
  BOOST_TEST(same_bits(straight[0], straight[2]));
  BOOST_TEST(same_bits(straight[0], straight[4]));
  // Stopped after epoch 5, then resumed by a new runner on a new session.
  auto stopped_dir = dir.str() + "/stopped";
  {
    auto sess = session_of();
    multi_node_checkpoint_manager ckpt{sys, stopped_dir};
    job_runner* self = nullptr;
    job_runner_options opts;
    opts.on_epoch = [&self](int64_t epoch, const std::vector<task_output>&) {
      if (epoch == 5)
        self->request_stop();
    };
    job_runner runner{j, &ckpt, {}, nullptr, opts};
    self = &runner;
    BOOST_REQUIRE(!runner.train(*sess));
  }
  {
    auto sess = session_of();
    multi_node_checkpoint_manager ckpt{sys, stopped_dir};
    job_runner runner{j, &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    auto resumed = weights(*sess);
    BOOST_REQUIRE(resumed.size() == straight.size());
    for (size_t i = 0; i < straight.size(); ++i)
      BOOST_TEST(same_bits(resumed[i], straight[i]), "blob " << i);
  }
  // Resumed from a middle epoch of the uninterrupted run's checkpoints.
  {
    auto sess = session_of(1);
    multi_node_checkpoint_manager ckpt{sys, straight_dir};
    job_runner runner{j, &ckpt, int64_t{4}};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    auto resumed = weights(*sess);
    for (size_t i = 0; i < straight.size(); ++i)
      BOOST_TEST(same_bits(resumed[i], straight[i]), "blob " << i);
  }
}

// Refused before anything runs, naming the group and the op at fault.
BOOST_AUTO_TEST_CASE(a_job_using_an_undeclared_channel_is_refused_unrun) {
  job j{"undeclared"};
  j.add_channel(channel_on("n1", 1));
  j.add_task(j.init_group(),
             task_of("init", "n0", {step("s", {fill_i64("ran", 1)})}));
  j.add_task(j.epoch_group(), producer("producer", "n0", "c", 1));
  j.add_task(j.epoch_group(),
             task_of("consumer", "n1", {step("s", {dequeue("nope", {"x"})})}));
  j.add_stop_condition("n0", "stop");
  auto sess = session_of();
  job_runner runner{j};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(!sess->fetch("n0", "ran")); // init never ran
  BOOST_TEST(why(epochs)
               == "epoch_group.tasks[1].steps[0].ops[0].args.channel: unknown "
                  "channel 'nope' (the job declares no channel of that name)",
             why(epochs));
}

BOOST_AUTO_TEST_CASE(the_reader_pipeline_job_gives_the_same_weights_every_run) {
  auto j = load_example("reader_pipeline.json");
  std::vector<std::vector<tensor>> results;
  for (int round = 0; round < 2; ++round) {
    auto sess = session_of(round == 0 ? 2 : 1);
    job_runner runner{j};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    results.push_back(weights(*sess));
    // The download group brought every trainer's w to the reader.
    for (auto trainer : {"trainer_0", "trainer_1", "trainer_2"}) {
      auto collected = sess->fetch("reader", std::string{"w_"} + trainer);
      BOOST_REQUIRE_MESSAGE(collected, why(collected));
      BOOST_TEST(same_bits(*collected, results.back()[0]), trainer);
    }
  }
  for (size_t i = 0; i < results[0].size(); ++i)
    BOOST_TEST(same_bits(results[1][i], results[0][i]), "blob " << i);
}

BOOST_AUTO_TEST_SUITE_END()
