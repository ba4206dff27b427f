// The checks of channel declarations (check_channels) and of a group's use
// of channels and collectives (make_exchange_plan): what a job is refused
// for before anything runs, each refusal named by the field at fault.
#include <epochrt/runtime/exchange_plan.hpp>

#include <string>
#include <vector>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

channel_def chan(std::string name, std::string node = "n0",
                 int64_t capacity = 4, std::vector<std::string> blobs = {"x"}) {
  return channel_def{std::move(name), std::move(node), capacity,
                     std::move(blobs)};
}

std::string text_of(const caf::error& err) {
  return err ? error_text(err) : std::string{};
}

template <class T>
std::string text_of(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

op_def put(const std::string& channel, std::vector<std::string> blobs) {
  return make_op("EnqueueBlobs", std::move(blobs), {},
                 {{"channel", str(channel)}});
}

op_def take(const std::string& channel, std::vector<std::string> blobs) {
  return make_op("DequeueBlobs", {}, std::move(blobs),
                 {{"channel", str(channel)}});
}

op_def safe_take(const std::string& channel, std::vector<std::string> blobs) {
  return make_op("SafeDequeueBlobs", {}, std::move(blobs),
                 {{"channel", str(channel)}});
}

op_def close(const std::string& channel) {
  return make_op("CloseBlobsQueue", {}, {}, {{"channel", str(channel)}});
}

op_def all_reduce(const std::string& name, const std::string& op = "") {
  std::map<std::string, tensor> args{{"collective", str(name)}};
  if (!op.empty())
    args.emplace("op", str(op));
  return make_op("Allreduce", {"g"}, {"g"}, std::move(args));
}

op_def broadcast(const std::string& name, const std::string& root) {
  return make_op("Broadcast", {"w"}, {"w"},
                 {{"collective", str(name)}, {"root", str(root)}});
}

op_def barrier(const std::string& name) {
  return make_op("Barrier", {}, {}, {{"collective", str(name)}});
}

task_group_def group_of(std::vector<task_def> tasks) {
  return task_group_def{std::move(tasks)};
}

// A producer on n0 and a consumer on n1 of channel c.
task_group_def pipe_group() {
  return group_of(
    {make_task("producer", "n0", {put("c", {"x"}), close("c")}),
     make_task("consumer", "n1", {safe_take("c", {"x", "done"})})});
}

} // namespace

BOOST_AUTO_TEST_SUITE(check_channels_suite)

BOOST_AUTO_TEST_CASE(valid_declarations_pass) {
  BOOST_TEST(!check_channels({}));
  BOOST_TEST(!check_channels(
    {chan("a", "n0", 1, {"x", "y"}), chan("b", "n1", max_channel_capacity)}));
}

BOOST_AUTO_TEST_CASE(a_capacity_outside_one_to_the_maximum_is_refused) {
  BOOST_TEST(text_of(check_channels({chan("a"), chan("b", "n0", 0)}))
             == "channels[1].capacity: expected 1 to 1048576, got 0");
  BOOST_TEST(text_of(check_channels({chan("a", "n0", -3)}))
             == "channels[0].capacity: expected 1 to 1048576, got -3");
  BOOST_TEST(
    text_of(check_channels({chan("a", "n0", max_channel_capacity + 1)}))
    == "channels[0].capacity: expected 1 to 1048576, got 1048577");
  BOOST_TEST(
    is_code(check_channels({chan("a", "n0", 0)}), runtime_errc::invalid_job));
}

BOOST_AUTO_TEST_CASE(a_duplicate_channel_name_is_refused) {
  BOOST_TEST(
    text_of(check_channels({chan("a"), chan("b"), chan("a", "n1")}))
    == "channels[2].name: duplicate channel name 'a' (also channels[0])");
}

BOOST_AUTO_TEST_CASE(bad_channel_and_blob_names_are_refused) {
  BOOST_TEST(text_of(check_channels({chan("a b")}))
             == "channels[0].name: invalid channel name 'a b' (1 to 256 "
                "printable characters, no spaces)");
  BOOST_TEST(text_of(check_channels({chan("")}))
             == "channels[0].name: invalid channel name '' (1 to 256 "
                "printable characters, no spaces)");
  BOOST_TEST(text_of(check_channels({chan("a", "n0", 1, {"x", "y z"})}))
             == "channels[0].blobs[1]: invalid blob name 'y z' (1 to 256 "
                "printable characters, no spaces)");
  BOOST_TEST(text_of(check_channels({chan("a", "n0", 1, {"x", "y", "x"})}))
             == "channels[0].blobs[2]: duplicate blob 'x'");
  BOOST_TEST(text_of(check_channels({chan("a", "n0", 1, {})}))
             == "channels[0].blobs: an item needs at least one blob");
}

BOOST_AUTO_TEST_CASE(a_bad_node_name_is_refused) {
  auto text = text_of(check_channels({chan("a", "../etc")}));
  BOOST_TEST(text.rfind("channels[0].node: invalid node name '../etc': ", 0)
               == 0u,
             text);
}

BOOST_AUTO_TEST_CASE(the_path_prefix_is_the_callers) {
  BOOST_TEST(text_of(check_channels({chan("a", "n0", 0)}, "job.channels"))
             == "job.channels[0].capacity: expected 1 to 1048576, got 0");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(exchange_plan_suite)

BOOST_AUTO_TEST_CASE(
  a_group_without_channels_or_collectives_has_an_empty_plan) {
  auto plan = make_exchange_plan(
    group_of({make_task("t", "n0", {make_op("Copy", {"a"}, {"b"})})}),
    {chan("c")});
  BOOST_REQUIRE_MESSAGE(plan, text_of(plan));
  BOOST_TEST(plan->empty());
}

BOOST_AUTO_TEST_CASE(a_channel_plan_names_its_putters_closers_and_takers) {
  auto group = pipe_group();
  group.tasks.push_back(make_task("stopper", "n2", {close("c")}));
  auto plan = make_exchange_plan(group, {chan("unused"), chan("c", "n1")});
  BOOST_REQUIRE_MESSAGE(plan, text_of(plan));
  BOOST_REQUIRE(plan->channels.size() == 1u); // only the channels used
  auto& ch = plan->channels[0];
  BOOST_TEST((ch.channel == chan("c", "n1")));
  BOOST_TEST((ch.putters
              == std::vector<task_ref>{{"n0", "producer"}, {"n2", "stopper"}}));
  BOOST_TEST((ch.takers == std::vector<task_ref>{{"n1", "consumer"}}));
  BOOST_TEST(plan->collectives.empty());
}

BOOST_AUTO_TEST_CASE(collective_participants_are_sorted_by_node_then_task) {
  auto group = group_of(
    {make_task("b", "n2", {all_reduce("g", "max")}),
     make_task("z", "n0", {all_reduce("g", "max")}),
     make_task("a", "n2", {all_reduce("g", "max")}),
     make_task("y", "n1", {all_reduce("g", "max"), all_reduce("g", "max")})});
  auto plan = make_exchange_plan(group, {});
  BOOST_REQUIRE_MESSAGE(plan, text_of(plan));
  BOOST_REQUIRE(plan->collectives.size() == 1u);
  auto& c = plan->collectives[0];
  BOOST_TEST(c.name == "g");
  BOOST_TEST((c.kind == collective_kind::all_reduce));
  BOOST_TEST((c.op == reduce_op::max));
  BOOST_TEST((c.participants
              == std::vector<task_ref>{
                {"n0", "z"}, {"n1", "y"}, {"n2", "a"}, {"n2", "b"}}));
}

BOOST_AUTO_TEST_CASE(an_all_reduce_without_an_op_sums) {
  auto plan = make_exchange_plan(
    group_of({make_task("a", "n0", {all_reduce("g")}),
              make_task("b", "n1", {all_reduce("g", "sum")})}),
    {});
  BOOST_REQUIRE_MESSAGE(plan, text_of(plan));
  BOOST_TEST((plan->collectives.at(0).op == reduce_op::sum));
}

BOOST_AUTO_TEST_CASE(an_unknown_channel_is_refused_at_its_op) {
  auto group = pipe_group();
  group.tasks[1].steps[0].ops.push_back(take("nope", {"y"}));
  auto plan = make_exchange_plan(group, {chan("c", "n1")}, "epoch");
  BOOST_TEST(text_of(plan)
             == "epoch[1].steps[0].ops[1].args.channel: unknown channel "
                "'nope' (the job declares no channel of that name)");
  BOOST_TEST(!plan);
  if (!plan)
    BOOST_TEST(is_code(plan.error(), runtime_errc::invalid_job));
}

BOOST_AUTO_TEST_CASE(an_item_of_the_wrong_size_is_refused) {
  auto two = chan("c", "n1", 4, {"x", "y"});
  auto putting
    = group_of({make_task("producer", "n0", {put("c", {"x"}), close("c")}),
                make_task("consumer", "n1", {take("c", {"x", "y"})})});
  BOOST_TEST(text_of(make_exchange_plan(putting, {two}))
             == "tasks[0].steps[0].ops[0]: an item of channel 'c' has 2 "
                "blobs, the op puts 1");
  auto taking
    = group_of({make_task("producer", "n0", {put("c", {"x", "y"}), close("c")}),
                make_task("consumer", "n1", {safe_take("c", {"x", "done"})})});
  BOOST_TEST(text_of(make_exchange_plan(taking, {two}))
             == "tasks[1].steps[0].ops[0]: an item of channel 'c' has 2 "
                "blobs, the op takes 1");
  // SafeDequeueBlobs' last output is its status, not a blob of the item.
  auto safe = group_of(
    {make_task("producer", "n0", {put("c", {"x", "y"}), close("c")}),
     make_task("consumer", "n1", {safe_take("c", {"x", "y", "done"})})});
  BOOST_TEST(text_of(make_exchange_plan(safe, {two})) == "");
}

BOOST_AUTO_TEST_CASE(a_channel_no_task_closes_is_refused) {
  auto group
    = group_of({make_task("producer", "n0", {put("c", {"x"})}),
                make_task("consumer", "n1", {safe_take("c", {"x", "done"})})});
  BOOST_TEST(text_of(make_exchange_plan(group, {chan("c")}, "epoch"))
             == "epoch: channel 'c' is used but no task of the group closes "
                "it (CloseBlobsQueue): a channel must be closed and empty "
                "when its group ends");
}

BOOST_AUTO_TEST_CASE(a_put_without_a_taker_is_refused) {
  auto group
    = group_of({make_task("producer", "n0", {put("c", {"x"}), close("c")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {chan("c")}))
             == "tasks: tasks 'producer' on n0 put into channel 'c' but no "
                "task of the group takes from it");
}

// A task that only closes the channel is not blamed for a put.
BOOST_AUTO_TEST_CASE(a_put_without_a_taker_names_only_the_tasks_that_put) {
  auto group = group_of({make_task("closer", "n2", {close("c")}),
                         make_task("producer", "n0", {put("c", {"x"})})});
  BOOST_TEST(text_of(make_exchange_plan(group, {chan("c")}))
             == "tasks: tasks 'producer' on n0 put into channel 'c' but no "
                "task of the group takes from it");
}

BOOST_AUTO_TEST_CASE(a_channel_only_closed_needs_no_taker) {
  auto group = group_of({make_task("closer", "n0", {close("c")})});
  auto plan = make_exchange_plan(group, {chan("c")});
  BOOST_TEST(text_of(plan) == "");
}

BOOST_AUTO_TEST_CASE(a_collective_used_as_two_kinds_is_refused) {
  auto group = group_of({make_task("a", "n0", {broadcast("g", "n0")}),
                         make_task("b", "n1", {barrier("g")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[1].steps[0].ops[0]: collective 'g' is a broadcast (as "
                "at tasks[0].steps[0].ops[0]), not a barrier");
}

// "an all-reduce", not "a all-reduce".
BOOST_AUTO_TEST_CASE(a_collective_first_used_as_an_all_reduce_reads_right) {
  auto group = group_of({make_task("a", "n0", {all_reduce("g")}),
                         make_task("b", "n1", {barrier("g")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[1].steps[0].ops[0]: collective 'g' is an all-reduce "
                "(as at tasks[0].steps[0].ops[0]), not a barrier");
}

BOOST_AUTO_TEST_CASE(a_collective_with_two_reductions_is_refused) {
  auto group = group_of({make_task("a", "n0", {all_reduce("g", "sum")}),
                         make_task("b", "n1", {all_reduce("g", "max")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[1].steps[0].ops[0].args.op: collective 'g' reduces by "
                "sum (as at tasks[0].steps[0].ops[0]), not by max");
}

BOOST_AUTO_TEST_CASE(a_broadcast_with_two_roots_is_refused) {
  auto group = group_of({make_task("a", "n0", {broadcast("g", "n0")}),
                         make_task("b", "n1", {broadcast("g", "n1")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[1].steps[0].ops[0].args.root: collective 'g' has root "
                "n0 (as at tasks[0].steps[0].ops[0]), not n1");
}

BOOST_AUTO_TEST_CASE(a_broadcast_root_where_no_participant_runs_is_refused) {
  auto group = group_of({make_task("a", "n0", {broadcast("g", "n9")}),
                         make_task("b", "n1", {broadcast("g", "n9")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[0].steps[0].ops[0].args.root: broadcast 'g' has root "
                "n9, where none of its participants run (it takes one): 'a' "
                "on n0, 'b' on n1");
}

BOOST_AUTO_TEST_CASE(a_broadcast_root_where_two_participants_run_is_refused) {
  auto group = group_of({make_task("a", "n0", {broadcast("g", "n0")}),
                         make_task("b", "n0", {broadcast("g", "n0")}),
                         make_task("c", "n1", {broadcast("g", "n0")})});
  BOOST_TEST(text_of(make_exchange_plan(group, {}))
             == "tasks[0].steps[0].ops[0].args.root: broadcast 'g' has root "
                "n0, where 2 of its participants run (it takes one): 'a' on "
                "n0, 'b' on n0, 'c' on n1");
}

BOOST_AUTO_TEST_CASE(job_validation_names_the_job_file_path) {
  job j{"j"};
  j.add_channel(chan("c", "n1"));
  j.add_task(j.epoch_group(),
             make_task("producer", "n0", {put("c", {"x"}), close("c")}));
  j.add_task(j.epoch_group(),
             make_task("consumer", "n1", {take("other", {"x"})}));
  j.add_stop_condition("n0", "stop");
  BOOST_TEST(text_of(j.validate(builtins(), job::path_style::file))
             == "epoch[1].steps[0].ops[0].args.channel: unknown channel "
                "'other' (the job declares no channel of that name)");
  BOOST_TEST(text_of(j.validate(builtins()))
             == "epoch_group.tasks[1].steps[0].ops[0].args.channel: unknown "
                "channel 'other' (the job declares no channel of that name)");
}

BOOST_AUTO_TEST_CASE(job_validation_checks_the_channel_declarations) {
  job j{"j"};
  j.add_channel(chan("c", "n1", 0));
  j.add_stop_condition("n0", "stop");
  BOOST_TEST(text_of(j.validate(builtins()))
             == "channels[0].capacity: expected 1 to 1048576, got 0");
}

BOOST_AUTO_TEST_CASE(channel_only_nodes_are_the_hosts_that_run_no_task) {
  auto group = pipe_group();
  auto plan = make_exchange_plan(group, {chan("c", "host")});
  BOOST_REQUIRE_MESSAGE(plan, text_of(plan));
  BOOST_TEST(channel_only_nodes(*plan, group)
               == (std::vector<std::string>{"host"}),
             boost::test_tools::per_element());
  auto local = make_exchange_plan(group, {chan("c", "n1")});
  BOOST_REQUIRE(local);
  BOOST_TEST(channel_only_nodes(*local, group).empty());
}

BOOST_AUTO_TEST_SUITE_END()
