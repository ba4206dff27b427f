// What `epochrt run` shows of a running job: --stats-json (JSON lines per
// epoch and node, appended as the job runs), --trace (a Chrome trace-event
// file that Perfetto opens), and the live progress line on a terminal
// (driven through a pseudo-terminal), instead of plain log lines elsewhere.

#define BOOST_TEST_MODULE observe_cli
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/run_events.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"

using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::run_in_background;
using epochrt::test::temp_dir;
using nlohmann::json;
using namespace std::chrono_literals;

using epochrt::test::read_file;

namespace {

const std::string jobs = EPOCHRT_SOURCE_DIR "/examples/jobs/";

process_result cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, 60s}.run(args);
}

using epochrt::test::contains;

/// Every line of a JSON-lines file, parsed; a line that does not parse
/// fails the test.
std::vector<json> json_lines(const std::string& path) {
  std::vector<json> result;
  std::istringstream in{read_file(path)};
  for (std::string line; std::getline(in, line);) {
    auto parsed = json::parse(line, nullptr, false);
    BOOST_TEST_REQUIRE(!parsed.is_discarded(), "not JSON: " << line);
    result.push_back(std::move(parsed));
  }
  return result;
}

std::vector<json> of_type(const std::vector<json>& lines,
                          const std::string& type) {
  std::vector<json> result;
  for (auto& line : lines)
    if (line.value("type", "") == type)
      result.push_back(line);
  return result;
}

/// What a program writes to a terminal: runs it on a pseudo-terminal
/// (forkpty) and reads until it exits, at most 60 s. After each read,
/// `typing` may write to the terminal (its master side) as a person would.
/// Returns the exit code.
int run_on_terminal(const std::vector<std::string>& args, std::string& screen,
                    const std::function<void(const std::string&, int)>& typing
                    = {}) {
  int master = -1;
  auto pid = forkpty(&master, nullptr, nullptr, nullptr);
  BOOST_TEST_REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string program = EPOCHRT_CLI;
    argv.push_back(program.data());
    auto copy = args;
    for (auto& arg : copy)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + 60s;
  char buf[4096];
  for (;;) {
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, 100) > 0) {
      auto n = ::read(master, buf, sizeof(buf));
      if (n <= 0)
        break; // EIO: the child's side closed
      screen.append(buf, static_cast<size_t>(n));
      if (typing)
        typing(screen, master);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

BOOST_AUTO_TEST_SUITE(stats_json)

BOOST_AUTO_TEST_CASE(every_epoch_gets_one_line_with_every_nodes_figures) {
  temp_dir dir;
  auto stats = dir.sub("stats.jsonl");
  auto r = cli({"run", jobs + "pipeline3.json", "--checkpoint-dir",
                dir.sub("ckpt"), "--stats-json", stats});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto epochs = of_type(json_lines(stats), "epoch");
  BOOST_TEST_REQUIRE(epochs.size() == 5u);
  for (int64_t e = 0; e <= 4; ++e) {
    auto& line = epochs[static_cast<size_t>(e)];
    BOOST_TEST_CONTEXT("epoch " << e << ": " << line.dump()) {
      BOOST_TEST(line["epoch"].get<int64_t>() == e);
      BOOST_TEST(line["committed"].get<bool>());
      BOOST_TEST(line["epoch_us"].get<int64_t>() > 0);
      BOOST_TEST(line["snapshot_us"].get<int64_t>() >= 0);
      BOOST_TEST(line["commit_us"].get<int64_t>() > 0);
      BOOST_TEST(line["failures"].get<int64_t>() == 0);
      std::set<std::string> nodes;
      for (auto& node : line["nodes"]) {
        nodes.insert(node["node"].get<std::string>());
        auto save = node["save_us"].get<int64_t>();
        BOOST_TEST(save > 0);
        BOOST_TEST(node["sync_us"].get<int64_t>() > 0); // fsyncs happened
        BOOST_TEST(node["snapshot_us"].get<int64_t>()
                     + node["write_us"].get<int64_t>()
                     + node["sync_us"].get<int64_t>()
                   == save);
        BOOST_TEST(node["bytes"].get<uint64_t>() > 0u);
        BOOST_TEST(node["blobs_written"].get<uint64_t>()
                     + node["blobs_skipped"].get<uint64_t>()
                   == node["blobs"].get<uint64_t>());
      }
      BOOST_TEST(
        nodes
        == (std::set<std::string>{"trainer_0", "trainer_1", "trainer_2"}));
    }
  }
}

BOOST_AUTO_TEST_CASE(incremental_saves_count_the_blobs_they_skip) {
  temp_dir dir;
  auto stats = dir.sub("stats.jsonl");
  auto r = cli({"run", jobs + "incremental.json", "--checkpoint-dir",
                dir.sub("ckpt"), "--stats-json", stats});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto epochs = of_type(json_lines(stats), "epoch");
  BOOST_TEST_REQUIRE(epochs.size() >= 3u);
  auto& first = epochs[0]["nodes"][0];
  BOOST_TEST(first["blobs_skipped"].get<uint64_t>() == 0u);
  // Epoch 1 refers to the frozen data written at epoch 0.
  uint64_t skipped = 0;
  uint64_t written = 0;
  for (auto& node : epochs[1]["nodes"]) {
    skipped += node["blobs_skipped"].get<uint64_t>();
    written += node["bytes_written"].get<uint64_t>();
  }
  BOOST_TEST(skipped > 0u);
  BOOST_TEST(written > 0u);
}

BOOST_AUTO_TEST_CASE(a_resume_writes_the_load_of_every_node) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  auto first = cli({"run", jobs + "pipeline3.json", "--checkpoint-dir", ckpt});
  BOOST_TEST_REQUIRE(first.exit_code == 0, first.err);
  auto stats = dir.sub("stats.jsonl");
  auto r = cli({"run", jobs + "pipeline3.json", "--checkpoint-dir", ckpt,
                "--resume-from", "2", "--stats-json", stats});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto lines = json_lines(stats);
  auto loads = of_type(lines, "load");
  BOOST_TEST_REQUIRE(loads.size() == 3u);
  for (auto& load : loads) {
    BOOST_TEST(load["epoch"].get<int64_t>() == 2);
    BOOST_TEST(load["load_us"].get<int64_t>() > 0);
    BOOST_TEST(load["bytes"].get<uint64_t>() > 0u);
  }
  auto epochs = of_type(lines, "epoch");
  BOOST_TEST_REQUIRE(epochs.size() == 2u);
  BOOST_TEST(epochs[0]["epoch"].get<int64_t>() == 3);
  BOOST_TEST(epochs[1]["epoch"].get<int64_t>() == 4);
}

BOOST_AUTO_TEST_CASE(lines_are_appended_while_the_job_runs) {
  temp_dir dir;
  auto stats = dir.sub("stats.jsonl");
  auto plan = dir.sub("plan.json");
  std::ofstream{plan} << R"({"faults": [{"point": "job.group.start",
    "fault": "delay", "detail": "epoch", "count": 0, "ms": 400}]})";
  auto err = dir.sub("err");
  auto job = run_in_background(EPOCHRT_CLI,
                               {"run", jobs + "pipeline.json",
                                "--checkpoint-dir", dir.sub("ckpt"),
                                "--stats-json", stats, "--fault-plan", plan},
                               dir.sub("out"), err);
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!contains(read_file(err), "starting epoch 3")
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  BOOST_TEST_REQUIRE(job.running());
  // Epochs 0 to 1 are committed by now (2 may be), epoch 3 runs.
  auto so_far = of_type(json_lines(stats), "epoch");
  BOOST_TEST(so_far.size() >= 2u);
  BOOST_TEST(so_far.size() <= 3u);
  BOOST_TEST(job.wait(20s) == 0);
  BOOST_TEST(of_type(json_lines(stats), "epoch").size() == 5u);
}

BOOST_AUTO_TEST_CASE(without_checkpoints_lines_hold_the_epoch_times) {
  temp_dir dir;
  auto stats = dir.sub("stats.jsonl");
  auto r = cli({"run", jobs + "pipeline.json", "--stats-json", stats});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto epochs = of_type(json_lines(stats), "epoch");
  BOOST_TEST_REQUIRE(epochs.size() == 5u);
  for (auto& line : epochs) {
    BOOST_TEST(line["epoch_us"].get<int64_t>() > 0);
    BOOST_TEST(!line.contains("nodes"));
  }
}

BOOST_AUTO_TEST_CASE(a_metric_is_each_epoch_tasks_output_in_its_line) {
  temp_dir dir;
  auto stats = dir.sub("stats.jsonl");
  auto r = cli({"run", jobs + "pipeline.json", "--checkpoint-dir",
                dir.sub("ckpt"), "--stats-json", stats, "--metric", "total"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto epochs = of_type(json_lines(stats), "epoch");
  BOOST_TEST_REQUIRE(epochs.size() == 5u);
  BOOST_TEST(!epochs[0].contains("metrics")); // init has no epoch outputs
  std::vector<double> totals;
  for (size_t i = 1; i < epochs.size(); ++i)
    totals.push_back(epochs[i]["metrics"]["total"]["read"].get<double>());
  BOOST_TEST(totals == (std::vector<double>{103, 115, 136, 145}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_metric_no_epoch_task_outputs_is_bad_input) {
  temp_dir dir;
  auto r = cli({"run", jobs + "pipeline.json", "--stats-json",
                dir.sub("stats.jsonl"), "--metric", "totl"});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err,
                      "--metric: no epoch task outputs \"totl\" "
                      "(their outputs: \"finished\", \"total\")"),
             r.err);
  r = cli({"run", jobs + "pipeline.json", "--metric", "total"});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err, "--metric needs --stats-json"), r.err);
}

BOOST_AUTO_TEST_CASE(a_file_that_cannot_be_written_is_bad_input) {
  temp_dir dir;
  auto r = cli({"run", jobs + "pipeline.json", "--stats-json",
                dir.sub("missing/stats.jsonl")});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err, "--stats-json"), r.err);
  BOOST_TEST(!contains(r.err, "starting epoch"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(trace)

BOOST_AUTO_TEST_CASE(the_trace_parses_and_has_a_lane_per_node_with_its_events) {
  temp_dir dir;
  auto trace = dir.sub("trace.json");
  auto r = cli({"run", jobs + "pipeline3.json", "--checkpoint-dir",
                dir.sub("ckpt"), "--trace", trace});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto doc = json::parse(read_file(trace), nullptr, false);
  BOOST_TEST_REQUIRE(!doc.is_discarded(), read_file(trace));
  BOOST_TEST_REQUIRE(doc.is_array());
  std::map<int, std::string> lanes;
  for (auto& ev : doc)
    if (ev["ph"] == "M" && ev["name"] == "thread_name")
      lanes[ev["tid"].get<int>()] = ev["args"]["name"].get<std::string>();
  std::set<std::string> lane_names;
  for (auto& [tid, name] : lanes)
    lane_names.insert(name);
  BOOST_TEST(lane_names
             == (std::set<std::string>{"job runner", "checkpoint manager",
                                       "trainer_0", "trainer_1", "trainer_2"}));
  // name -> lanes it appears on
  std::map<std::string, std::multiset<std::string>> spans;
  for (auto& ev : doc) {
    if (ev["ph"] != "X")
      continue;
    BOOST_TEST(ev["ts"].get<int64_t>() >= 0);
    BOOST_TEST(ev["dur"].get<int64_t>() >= 0);
    BOOST_TEST(ev["pid"].get<int>() == 1);
    spans[ev["name"].get<std::string>()].insert(lanes[ev["tid"].get<int>()]);
  }
  BOOST_TEST(spans["init group"] == (std::multiset<std::string>{"job runner"}));
  for (int e = 1; e <= 4; ++e) {
    auto n = std::to_string(e);
    BOOST_TEST_CONTEXT("epoch " << e) {
      BOOST_TEST(spans["epoch " + n]
                 == (std::multiset<std::string>{"job runner"}));
      BOOST_TEST(spans["epoch group"].count("job runner") == 4u);
      BOOST_TEST(spans["snapshots " + n]
                 == (std::multiset<std::string>{"job runner"}));
      BOOST_TEST(
        spans["write " + n]
        == (std::multiset<std::string>{"trainer_0", "trainer_1", "trainer_2"}));
      // The parts of each write, nested on its node's lane.
      BOOST_TEST(
        spans["snapshot " + n]
        == (std::multiset<std::string>{"trainer_0", "trainer_1", "trainer_2"}));
      BOOST_TEST(
        spans["sync " + n]
        == (std::multiset<std::string>{"trainer_0", "trainer_1", "trainer_2"}));
      BOOST_TEST(spans["commit " + n]
                 == (std::multiset<std::string>{"checkpoint manager"}));
    }
  }
}

BOOST_AUTO_TEST_CASE(
  tasks_are_spans_on_their_nodes_lanes_with_slow_ops_inside) {
  // Every epoch task of pipeline3_paced sleeps 300 ms: a slow op.
  temp_dir dir;
  auto trace = dir.sub("trace.json");
  auto r = cli({"run",
                EPOCHRT_SOURCE_DIR "/examples/distributed/pipeline3_paced.json",
                "--trace", trace});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto doc = json::parse(read_file(trace), nullptr, false);
  BOOST_TEST_REQUIRE(doc.is_array());
  std::map<int, std::string> lanes;
  for (auto& ev : doc)
    if (ev["ph"] == "M" && ev["name"] == "thread_name")
      lanes[ev["tid"].get<int>()] = ev["args"]["name"].get<std::string>();
  struct span {
    int64_t ts;
    int64_t dur;
  };
  std::map<std::string, std::vector<span>> tasks;  // lane -> task spans
  std::map<std::string, std::vector<span>> sleeps; // lane -> Sleep spans
  for (auto& ev : doc) {
    if (ev["ph"] != "X")
      continue;
    auto lane = lanes[ev["tid"].get<int>()];
    span x{ev["ts"].get<int64_t>(), ev["dur"].get<int64_t>()};
    if (ev["cat"] == "task")
      tasks[lane].push_back(x);
    else if (ev["cat"] == "op" && ev["name"] == "Sleep")
      sleeps[lane].push_back(x);
  }
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"}) {
    BOOST_TEST_CONTEXT(node) {
      // The init task and one per epoch; the 4 epochs' Sleeps.
      BOOST_TEST(tasks[node].size() == 5u);
      BOOST_TEST_REQUIRE(sleeps[node].size() == 4u);
      for (auto& op : sleeps[node]) {
        BOOST_TEST(op.dur >= 300000);
        // Inside one of the node's task spans.
        bool inside = false;
        for (auto& task : tasks[node])
          inside |= task.ts <= op.ts && op.ts + op.dur <= task.ts + task.dur;
        BOOST_TEST(inside);
      }
    }
  }
  // Only slow ops are spans: the Adds and reads of pipeline3 are not.
  for (auto& ev : doc)
    if (ev["cat"] == "op")
      BOOST_TEST(ev["dur"].get<int64_t>() >= 1000);
}

BOOST_AUTO_TEST_CASE(a_resumed_job_traces_every_nodes_load) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  BOOST_TEST_REQUIRE(
    cli({"run", jobs + "pipeline3.json", "--checkpoint-dir", ckpt}).exit_code
    == 0);
  auto trace = dir.sub("trace.json");
  auto r = cli({"run", jobs + "pipeline3.json", "--checkpoint-dir", ckpt,
                "--resume-from", "3", "--trace", trace});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  auto doc = json::parse(read_file(trace), nullptr, false);
  BOOST_TEST_REQUIRE(doc.is_array());
  size_t loads = 0;
  for (auto& ev : doc)
    if (ev["ph"] == "X" && ev["name"] == "load 3")
      ++loads;
  BOOST_TEST(loads == 3u);
}

BOOST_AUTO_TEST_CASE(a_lost_node_and_its_recovery_are_in_the_stats_and_trace) {
  temp_dir dir;
  auto daemon = epochrt::test::start_daemon(dir.str(), "trainer_1");
  auto plan = dir.sub("plan.json");
  std::ofstream{plan} << R"({"faults": [{"point": "job.group.start",
    "fault": "delay", "detail": "epoch", "count": 0, "ms": 400}]})";
  auto stats = dir.sub("stats.jsonl");
  auto trace = dir.sub("trace.json");
  auto err = dir.sub("run.err");
  auto job = run_in_background(
    EPOCHRT_CLI,
    {"run", jobs + "pipeline3.json", "--checkpoint-dir", dir.sub("ckpt"),
     "--node", "trainer_1=" + daemon.address(), "--max-failures", "1",
     "--stats-json", stats, "--trace", trace, "--fault-plan", plan},
    dir.sub("run.out"), err);
  using epochrt::test::stats_reached;
  BOOST_TEST_REQUIRE(
    stats_reached(stats, epochrt::test::epoch_committed(1), 20s),
    read_file(err));
  daemon.kill();
  BOOST_TEST_REQUIRE(
    stats_reached(stats, epochrt::test::node_lost_event(1), 20s),
    read_file(err));
  epochrt::test::restart(daemon);
  BOOST_TEST_REQUIRE(job.wait(30s) == 0, read_file(err));
  auto lines = json_lines(stats);
  auto lost = of_type(lines, "node_lost");
  BOOST_TEST_REQUIRE(lost.size() == 1u);
  BOOST_TEST(contains(lost[0]["error"].get<std::string>(), "trainer_1"));
  auto recovered = of_type(lines, "recovered");
  BOOST_TEST_REQUIRE(recovered.size() == 1u);
  BOOST_TEST(recovered[0]["recoveries"].get<int64_t>() == 1);
  // Back at its address: the node did not move.
  BOOST_TEST(of_type(lines, "node_moved").empty());
  auto epochs = of_type(lines, "epoch");
  BOOST_TEST_REQUIRE(!epochs.empty());
  BOOST_TEST(epochs.back()["epoch"].get<int64_t>() == 4);
  BOOST_TEST(epochs.back()["failures"].get<int64_t>() == 1);
  BOOST_TEST(of_type(lines, "load").size() == 3u); // every node reloaded
  auto doc = json::parse(read_file(trace), nullptr, false);
  BOOST_TEST_REQUIRE(doc.is_array());
  size_t lost_marks = 0;
  size_t recoveries = 0;
  for (auto& ev : doc) {
    lost_marks += ev["name"] == "node lost" && ev["ph"] == "i";
    recoveries += ev["name"] == "recovery" && ev["ph"] == "X";
  }
  BOOST_TEST(lost_marks == 1u);
  BOOST_TEST(recoveries == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(progress)

BOOST_AUTO_TEST_CASE(a_terminal_shows_one_live_line_instead_of_log_lines) {
  temp_dir dir;
  std::string screen;
  auto code = run_on_terminal(
    {"run", jobs + "pipeline.json", "--checkpoint-dir", dir.sub("ckpt")},
    screen);
  BOOST_TEST_REQUIRE(code == 0, screen);
  BOOST_TEST(contains(screen, "\r\x1b[2K"), screen);
  BOOST_TEST(contains(screen, "pipeline  epoch 4"), screen);
  BOOST_TEST(contains(screen, "committed 4"), screen);
  BOOST_TEST(contains(screen, "ckpt 4: "), screen);
  BOOST_TEST(!contains(screen, "starting epoch"), screen);
  BOOST_TEST(contains(screen, "epochs=4"), screen);
}

BOOST_AUTO_TEST_CASE(the_line_shows_the_epoch_limit_when_the_job_has_one) {
  temp_dir dir;
  std::string screen;
  auto code = run_on_terminal({"run", jobs + "download.json"}, screen);
  BOOST_TEST_REQUIRE(code == 0, screen);
  BOOST_TEST(contains(screen, "download  epoch 1/1"), screen);
}

BOOST_AUTO_TEST_CASE(ctrl_c_on_the_terminal_stops_the_job_gracefully) {
  temp_dir dir;
  auto plan = dir.sub("plan.json");
  std::ofstream{plan} << R"({"faults": [{"point": "job.group.start",
    "fault": "delay", "detail": "epoch", "count": 0, "ms": 600}]})";
  std::string screen;
  bool typed = false;
  auto code = run_on_terminal(
    {"run", jobs + "pipeline.json", "--checkpoint-dir", dir.sub("ckpt"),
     "--fault-plan", plan},
    screen, [&typed](const std::string& so_far, int terminal) {
      if (!typed && contains(so_far, "pipeline  epoch 2")) {
        typed = true;
        BOOST_TEST(::write(terminal, "\x03", 1) == 1); // Ctrl-C
      }
    });
  BOOST_TEST_REQUIRE(typed, screen);
  BOOST_TEST(code == 130, screen);
  BOOST_TEST(contains(screen, "SIGINT: stopping after the running epoch"),
             screen);
  BOOST_TEST(contains(screen, "resume_from=2"), screen);
  // A rerun resumes there and ends as an uninterrupted run.
  auto rerun = cli({"run", jobs + "pipeline.json", "--checkpoint-dir",
                    dir.sub("ckpt"), "--fetch", "trainer_0:total"});
  BOOST_TEST_REQUIRE(rerun.exit_code == 0, rerun.err);
  BOOST_TEST(contains(rerun.err, "resuming from epoch 2"), rerun.err);
  BOOST_TEST(contains(rerun.out, "trainer_0:total=145"), rerun.out);
}

BOOST_AUTO_TEST_CASE(quiet_silences_the_line) {
  temp_dir dir;
  std::string screen;
  auto code = run_on_terminal({"-q", "run", jobs + "pipeline.json"}, screen);
  BOOST_TEST_REQUIRE(code == 0, screen);
  BOOST_TEST(!contains(screen, "\x1b[2K"), screen);
  BOOST_TEST(!contains(screen, "starting epoch"), screen);
  BOOST_TEST(contains(screen, "epochs=4"), screen);
}

BOOST_AUTO_TEST_CASE(off_a_terminal_the_log_lines_stay_and_no_line_is_drawn) {
  auto r = cli({"run", jobs + "pipeline.json"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.err, "starting epoch 4"), r.err);
  BOOST_TEST(!contains(r.err, "\x1b[2K"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
