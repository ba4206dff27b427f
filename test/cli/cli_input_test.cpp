// Bad input to the `epochrt` command: every number parsed strictly, every
// error one printable line, every job file that is not a file refused.

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"

using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::run_in_background;
using epochrt::test::temp_dir;

namespace {

const std::string pipeline = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json";

process_result run_cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, std::chrono::seconds(30)}.run(args);
}

// Exit 2 and exactly one line on stderr, with nothing a terminal would
// interpret.
void expect_bad_input(const std::vector<std::string>& args,
                      const std::string& says) {
  auto r = run_cli(args);
  std::string shown;
  for (auto& a : args)
    shown += "'" + a + "' ";
  BOOST_TEST(r.exit_code == 2, shown << r.err);
  BOOST_TEST(r.err.find(says) != std::string::npos, shown << r.err);
  BOOST_TEST(r.err.find('\n') == r.err.size() - 1, shown << r.err);
  for (unsigned char c : r.err.substr(0, r.err.size() - 1))
    BOOST_TEST_REQUIRE((c >= 0x20 && c != 0x7f), shown << r.err);
}

} // namespace

BOOST_AUTO_TEST_SUITE(command_line_input)

BOOST_AUTO_TEST_CASE(numbers_that_are_not_plain_decimals_are_bad_input) {
  const std::vector<std::string> bad
    = {"", "0x1", "+1", " 1", "1 ", "1e3", "1.0", "\x1b[2J"};
  for (auto& value : bad) {
    expect_bad_input({"node", "--max-tensor-bytes", value},
                     "--max-tensor-bytes: expected a decimal integer");
    expect_bad_input(
      {"run", pipeline, "--checkpoint-dir", "d", "--resume-from", value},
      "--resume-from: expected a decimal integer");
    expect_bad_input({"run", pipeline, "--max-failures", value},
                     "--max-failures: expected a decimal integer");
    expect_bad_input({"ckpt", "show", ".", "n", value},
                     "epoch: expected a decimal integer");
  }
}

BOOST_AUTO_TEST_CASE(numbers_out_of_range_are_refused_never_clamped) {
  for (std::string value :
       {"-1", "0", "18446744073709551616", "99999999999999999999"})
    expect_bad_input({"node", "--max-tensor-bytes", value},
                     "expected a decimal integer from 1 to");
  expect_bad_input(
    {"run", pipeline, "--checkpoint-dir", "d", "--resume-from", "-1"},
    "--resume-from: expected a decimal integer from 0");
  expect_bad_input(
    {"run", pipeline, "--connection-timeout-ms", "9223372036854775808"},
    "--connection-timeout-ms: expected a decimal integer");
  expect_bad_input({"node", "--admission-timeout-ms", "0"},
                   "--admission-timeout-ms: expected a decimal integer");
  expect_bad_input({"node", "--connection-timeout-ms", "100"},
                   "--connection-timeout-ms: expected a decimal integer "
                   "from 250");
}

BOOST_AUTO_TEST_CASE(a_plain_decimal_in_range_is_taken) {
  auto r = run_cli(
    {"run", pipeline, "--max-failures", "0", "--fetch", "trainer_0:total"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.find("trainer_0:total=145") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(job_files_that_are_not_regular_files_are_bad_input) {
  temp_dir dir;
  auto fifo = dir.sub("fifo");
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto big = dir.sub("big.json");
  { std::ofstream{big}; }
  BOOST_REQUIRE(::truncate(big.c_str(), 4ll << 30) == 0);
  expect_bad_input({"run", "/dev/zero"}, "not a regular file");
  expect_bad_input({"run", fifo}, "not a regular file");
  expect_bad_input({"run", dir.str()}, "not a regular file");
  expect_bad_input({"run", big}, "a job file may have");
}

BOOST_AUTO_TEST_CASE(control_characters_from_a_job_file_are_escaped) {
  temp_dir dir;
  auto job = dir.sub("job.json");
  std::ofstream{job} << "{\"name\": \"a\\u001b[31mred\\u2028\\u0000\", "
                        "\"epoch\": []}";
  expect_bad_input({"run", job},
                   "invalid job name 'a\\x1B[31mred\\u2028\\x00'");
  auto raw = dir.sub("raw.json");
  std::ofstream{raw} << "{\"name\": \"a\x1b]0;owned\x07\"}";
  expect_bad_input({"run", raw}, "syntax error");
}

BOOST_AUTO_TEST_CASE(a_duplicate_field_names_its_path) {
  temp_dir dir;
  auto job = dir.sub("job.json");
  std::ofstream{job}
    << R"({"name": "p", "epoch": [{"name": "t", "node": "n", "ops": [
          {"type": "Sleep", "args": {"ms": 1}, "args": {"ms": 2}}]}]})";
  expect_bad_input({"run", job},
                   "job.json: epoch[0].ops[0]: duplicate field "
                   "'args'");
}

BOOST_AUTO_TEST_CASE(control_characters_in_log_lines_are_escaped) {
  temp_dir dir;
  auto root = dir.sub("a\x1b[31mb\xe2\x80\xa8"
                      "c");
  auto out = dir.sub("out");
  auto err = dir.sub("err");
  auto read = [](const std::string& path) {
    std::ifstream in{path};
    return std::string{std::istreambuf_iterator<char>{in},
                       std::istreambuf_iterator<char>{}};
  };
  {
    auto daemon = run_in_background(
      EPOCHRT_CLI, {"node", "--checkpoint-root", root}, out, err);
    for (int i = 0; i < 1000 && read(out).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    daemon.signal(SIGTERM);
    BOOST_TEST(daemon.wait(std::chrono::seconds(10)) == 0);
  }
  auto log = read(err);
  BOOST_TEST(log.find("a\\x1B[31mb\\u2028c") != std::string::npos, log);
  BOOST_TEST(log.find('\x1b') == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
