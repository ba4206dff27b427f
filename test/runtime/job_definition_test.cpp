// The definition a checkpoint records of its job (runtime/job_definition.hpp):
// the same for jobs that compute the same, and the first difference named
// for jobs that do not.

#include <epochrt/runtime/job_definition.hpp>

#include <string>

#include "test_util.hpp"
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job_file.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

// pipeline.json's shape, with a fill value, a name and an epoch limit to
// vary.
std::string pipeline_text(int fill, const std::string& name = "pipeline",
                          int epoch_limit = 0) {
  return R"({"name": ")" + name + R"(",
  "init": [{"name": "init", "node": "trainer_0", "ops": [
    {"type": "ConstantFill", "outputs": ["total"],
     "args": {"shape": [1], "value": )"
    + std::to_string(fill) + R"(, "dtype": "i64"}},
    {"type": "CreateCursor", "outputs": ["cursor"]}]}],
  "epoch": [{"name": "read", "node": "trainer_0", "outputs": ["finished"],
    "ops": [{"type": "ConstantFill", "outputs": ["finished"],
             "args": {"value": 1, "dtype": "bool"}}]}],)"
    + (epoch_limit > 0
         ? R"("epoch_limit": )" + std::to_string(epoch_limit) + ","
         : std::string{})
    + R"(
  "stop_conditions": [{"node": "trainer_0", "blob": "finished"}]})";
}

std::string definition_of(const std::string& text) {
  auto loaded = parse_job_json(text, "job.json", builtins());
  if (!loaded) // never error() in a passing assertion's message
    BOOST_FAIL(error_text(loaded.error()));
  return job_definition(*loaded);
}

} // namespace

BOOST_AUTO_TEST_SUITE(job_definitions)

BOOST_AUTO_TEST_CASE(the_same_job_gives_the_same_text) {
  BOOST_TEST(definition_of(pipeline_text(1))
             == definition_of(pipeline_text(1)));
}

BOOST_AUTO_TEST_CASE(a_changed_argument_is_named_with_both_values) {
  auto difference = first_difference(definition_of(pipeline_text(1)),
                                     definition_of(pipeline_text(7)));
  BOOST_TEST(difference == "init[0].steps[0].ops[0].args.value: 1 -> 7");
}

BOOST_AUTO_TEST_CASE(the_name_and_the_epoch_limit_are_not_part_of_it) {
  auto limited = definition_of(pipeline_text(1, "pipeline", 3));
  BOOST_TEST(definition_of(pipeline_text(1, "renamed", 3)) == limited);
  BOOST_TEST(definition_of(pipeline_text(1, "pipeline", 9)) == limited);
  // A limiter added or removed changes what the job computes.
  BOOST_TEST(
    !first_difference(definition_of(pipeline_text(1)), limited).empty());
}

BOOST_AUTO_TEST_CASE(a_task_one_side_lacks_is_named_as_none) {
  auto one = definition_of(pipeline_text(1));
  auto job_with_limiter = definition_of(pipeline_text(1, "pipeline", 3));
  auto difference = first_difference(one, job_with_limiter);
  BOOST_TEST(difference.find("(none) -> ") != std::string::npos, difference);
}

BOOST_AUTO_TEST_CASE(an_unreadable_record_differs_at_its_root) {
  auto difference
    = first_difference("not json", definition_of(pipeline_text(1)));
  BOOST_TEST(difference.rfind("(the job)", 0) == 0, difference);
}

BOOST_AUTO_TEST_SUITE_END()
