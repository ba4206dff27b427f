#include "test/remote/daemon_jobs.hpp"

#include <fstream>
#include <regex>

#include <boost/test/unit_test.hpp>

#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/text.hpp"
#include "tools/process/text_file.hpp"

namespace epochrt::test {

using namespace std::chrono_literals;

const std::string pipeline3
  = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline3.json";

const std::string final_total = "145";

process_result cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, 60s}.run(args);
}

std::string write_paced_job(const temp_dir& dir, int pause_ms) {
  auto text = process::read_text(pipeline3);
  text = std::regex_replace(text, std::regex{"\"ops\": \\["},
                            "\"ops\": [{\"type\": \"Sleep\", \"args\": "
                            "{\"ms\": "
                              + std::to_string(pause_ms) + "}},");
  auto path = dir.sub("paced.json");
  std::ofstream{path} << text;
  return path;
}

namespace {

// A task NAME<node> on trainer_<node> running `ops`.
std::string task(const std::string& name, int node, const std::string& ops) {
  return R"({"name": ")" + name + std::to_string(node)
    + R"(", "node": "trainer_)" + std::to_string(node) + R"(", "ops": [)" + ops
    + "]}";
}

// Adds `amount` to total.
std::string add_to_total(const std::string& blob, int amount) {
  return R"({"type": "ConstantFill", "outputs": [")" + blob
    + R"("], "args": {"shape": [1], "value": )" + std::to_string(amount)
    + R"(, "dtype": "i64"}},
       {"type": "Add", "inputs": ["total", ")"
    + blob + R"("], "outputs": ["total"]})";
}

} // namespace

std::string with_download_and_exit(bool victim_downloads,
                                   bool kill_in_download) {
  auto text = process::read_text(pipeline3);
  std::string download;
  std::string exit;
  for (int node = 0; node < 3; ++node) {
    if (node != 1 || victim_downloads) {
      auto ops = add_to_total("bonus", 1000);
      if (node == 2 && kill_in_download)
        ops = R"({"type": "KillDaemon"}, )" + ops;
      download += (download.empty() ? "" : ", ") + task("download_", node, ops);
    }
    exit += (exit.empty() ? "" : ", ")
      + task("exit_", node, add_to_total("one", 1));
  }
  auto groups
    = "\"download\": [" + download + "],\n\"exit\": [" + exit + "],\n";
  return std::regex_replace(text, std::regex{"\"stop_conditions\""},
                            groups + "\"stop_conditions\"");
}

three_daemons::three_daemons(const std::vector<std::string>& extra) {
  for (int i = 0; i < 3; ++i)
    daemons.push_back(std::make_unique<process::node_daemon>(
      start_daemon(dir.str(), "d" + std::to_string(i), extra)));
}

std::vector<std::string> three_daemons::node_args() const {
  std::vector<std::string> result;
  for (size_t i = 0; i < daemons.size(); ++i) {
    result.push_back("--node");
    result.push_back("trainer_" + std::to_string(i) + "="
                     + daemons[i]->address());
  }
  return result;
}

std::vector<std::string>
three_daemons::run_args(const std::string& job,
                        std::vector<std::string> extra) const {
  // In the test's own directory, never the working directory (runs of
  // other builds may have left a checkpoint there).
  std::vector<std::string> args{"run",
                                job,
                                "--checkpoint-dir",
                                dir.sub("ckpt"),
                                "--stats-json",
                                dir.sub("run.stats")};
  auto nodes = node_args();
  args.insert(args.end(), nodes.begin(), nodes.end());
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"}) {
    args.push_back("--fetch");
    args.push_back(std::string{node} + ":total");
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::unique_ptr<process::child_process>
three_daemons::start_run(const std::vector<std::string>& args) {
  return std::make_unique<process::child_process>(run_in_background(
    EPOCHRT_CLI, args, dir.sub("run.out"), dir.sub("run.err")));
}

bool three_daemons::reached(const run_event& event,
                            std::chrono::milliseconds timeout) {
  return stats_reached(dir.sub("run.stats"), event, timeout);
}

void check_totals(const std::string& out) {
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(value_of(out, std::string{node} + ":total") == final_total,
               node);
  BOOST_TEST(value_of(out, "epochs") == "4");
}

} // namespace epochrt::test
