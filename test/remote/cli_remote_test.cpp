// Jobs across node daemons through the `epochrt` command: every process
// real, every socket on 127.0.0.1, every wait bounded.

#define BOOST_TEST_MODULE remote
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/stat.h>

#include "test/remote/daemon_jobs.hpp"
#include "test/remote/test_certificates.hpp"
#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include "tools/process/text_file.hpp"

namespace fs = std::filesystem;

using namespace std::chrono_literals;
using epochrt::process::child_process;
using epochrt::process::node_daemon;
using epochrt::process::read_text;
using epochrt::test::epoch_committed;
using epochrt::test::eventually;
using epochrt::test::node_lost_event;
using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::restart;
using epochrt::test::run_in_background;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;
using epochrt::test::test_ca;
using epochrt::test::tls_identity;

using epochrt::test::check_totals;
using epochrt::test::cli;
using epochrt::test::final_total;
using epochrt::test::pipeline3;
using epochrt::test::three_daemons;
using epochrt::test::value_of;
using epochrt::test::write_paced_job;

namespace {

using epochrt::test::contains;

// pipeline3.json with a download group that waits `download_ms` on every
// node, then adds 1000 to its total, and an exit group that adds 1: every
// node ends with 1146. A daemon killed as soon as the master starts the
// download group is certain to be lost inside it unless the test itself
// is held up for `download_ms`.
std::string write_download_job(const temp_dir& dir, int download_ms) {
  auto add = [](const std::string& blob, int amount) {
    return R"({"type": "ConstantFill", "outputs": [")" + blob
      + R"("], "args": {"shape": [1], "value": )" + std::to_string(amount)
      + R"(, "dtype": "i64"}}, {"type": "Add", "inputs": ["total", ")" + blob
      + R"("], "outputs": ["total"]})";
  };
  std::string download;
  std::string exit;
  for (int i = 0; i < 3; ++i) {
    auto node = std::to_string(i);
    std::string sep = i == 0 ? "" : ", ";
    download += sep + R"({"name": "download_)" + node
      + R"(", "node": "trainer_)" + node
      + R"(", "ops": [{"type": "Sleep", "args": {"ms": )"
      + std::to_string(download_ms) + "}}, " + add("bonus", 1000) + "]}";
    exit += sep + R"({"name": "exit_)" + node + R"(", "node": "trainer_)" + node
      + R"(", "ops": [)" + add("one", 1) + "]}";
  }
  auto text = std::regex_replace(read_text(pipeline3),
                                 std::regex{"\"stop_conditions\""},
                                 "\"download\": [" + download + "], \"exit\": ["
                                   + exit + "], \"stop_conditions\"");
  auto path = dir.sub("download.json");
  std::ofstream{path} << text;
  return path;
}

std::string write_secret(const temp_dir& dir, const std::string& name,
                         const std::string& secret) {
  auto path = dir.sub(name);
  std::ofstream{path} << secret << '\n';
  ::chmod(path.c_str(), 0600);
  return path;
}

} // namespace

BOOST_AUTO_TEST_SUITE(jobs_across_daemons)

BOOST_AUTO_TEST_CASE(pipeline3_over_three_daemons_ends_as_in_process) {
  three_daemons d;
  auto local = cli({"run", pipeline3, "--fetch", "trainer_0:total", "--fetch",
                    "trainer_1:total", "--fetch", "trainer_2:total"});
  BOOST_REQUIRE_EQUAL(local.exit_code, 0);
  auto args = d.run_args(pipeline3);
  args[3] = d.dir.sub("ckpt");
  auto remote = cli(args);
  BOOST_REQUIRE_MESSAGE(remote.exit_code == 0, remote.err);
  BOOST_TEST(remote.out == local.out);
  check_totals(remote.out);
}

BOOST_AUTO_TEST_CASE(each_daemon_keeps_its_nodes_checkpoints_in_its_root) {
  three_daemons d;
  auto args = d.run_args(pipeline3);
  auto remote = cli(args);
  BOOST_REQUIRE_MESSAGE(remote.exit_code == 0, remote.err);
  // The master's checkpoint path, placed under each daemon's root.
  auto ckpt = args[3];
  for (int i = 0; i < 3; ++i) {
    auto node = "trainer_" + std::to_string(i);
    auto& root = d.daemons[i]->root();
    for (int epoch = 0; epoch <= 4; ++epoch)
      BOOST_TEST(fs::is_directory(root + ckpt + "/" + node + "."
                                  + std::to_string(epoch)),
                 node << " epoch " << epoch);
    // No daemon holds another node's checkpoints.
    for (int j = 0; j < 3; ++j)
      if (j != i)
        BOOST_TEST(
          !fs::exists(root + ckpt + "/trainer_" + std::to_string(j) + ".0"));
  }
}

BOOST_AUTO_TEST_CASE(a_finished_job_rerun_over_daemons_changes_nothing) {
  three_daemons d;
  auto args = d.run_args(pipeline3);
  args[3] = d.dir.sub("ckpt");
  BOOST_REQUIRE_EQUAL(cli(args).exit_code, 0);
  auto again = cli(args);
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  check_totals(again.out);
  BOOST_TEST(contains(again.err, "had stopped after epoch 4"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(losing_a_daemon)

BOOST_AUTO_TEST_CASE(a_killed_daemon_stops_the_job_naming_node_and_epoch) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job);
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(1), 20s));
  d.daemons[1]->kill();
  auto code = run->wait(20s);
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(err, "node trainer_1 (epoch group, epoch 2)"), err);
  BOOST_TEST(contains(err, "running the same command again resumes"), err);
  // The daemon comes back (a supervisor would restart it); the same command
  // resumes from the last committed epoch and ends with the right totals.
  restart(*d.daemons[1]);
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  BOOST_TEST(contains(rerun.err, "resuming from epoch"), rerun.err);
  check_totals(rerun.out);
}

BOOST_AUTO_TEST_CASE(with_max_failures_the_job_survives_a_restarted_daemon) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--max-failures", "2"});
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(1), 20s));
  d.daemons[1]->kill();
  BOOST_REQUIRE(d.reached(node_lost_event(1), 20s));
  restart(*d.daemons[1]);
  auto code = run->wait(30s);
  auto out = read_text(d.dir.sub("run.out"));
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_REQUIRE_MESSAGE(code == 0, err);
  BOOST_TEST(contains(err, "node trainer_1 is back"), err);
  check_totals(out);
}

BOOST_AUTO_TEST_CASE(
  with_max_failures_a_node_that_never_returns_fails_the_job) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(
    job, {"--max-failures", "1", "--reconnect-timeout-ms", "1000"});
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(1), 20s));
  d.daemons[1]->kill();
  auto code = run->wait(30s);
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(err, "did not come back"), err);
}

BOOST_AUTO_TEST_CASE(
  with_max_failures_a_daemon_lost_in_the_download_group_is_recovered) {
  three_daemons d;
  auto job = write_download_job(d.dir, 1500);
  auto local = cli({"run", job, "--fetch", "trainer_0:total", "--fetch",
                    "trainer_1:total", "--fetch", "trainer_2:total"});
  BOOST_REQUIRE_MESSAGE(local.exit_code == 0, local.err);
  BOOST_TEST(value_of(local.out, "trainer_1:total") == "1146");
  auto args = d.run_args(job, {"--max-failures", "3"});
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(4), 30s));
  d.daemons[1]->kill();
  BOOST_REQUIRE(d.reached(node_lost_event(1), 20s));
  restart(*d.daemons[1]);
  auto code = run->wait(30s);
  auto out = read_text(d.dir.sub("run.out"));
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_REQUIRE_MESSAGE(code == 0, err);
  BOOST_TEST(contains(err, "node trainer_1 (download group, epoch 4)"), err);
  BOOST_TEST(contains(err, "the job had stopped after epoch 4"), err);
  BOOST_TEST(out == local.out);
}

BOOST_AUTO_TEST_CASE(
  a_daemon_lost_in_the_download_group_is_named_with_the_epoch_of_the_job) {
  three_daemons d;
  auto job = write_download_job(d.dir, 1500);
  auto args = d.run_args(job);
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(4), 30s));
  d.daemons[1]->kill();
  auto code = run->wait(20s);
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(err, "node trainer_1 (download group, epoch 4)"), err);
  BOOST_TEST(contains(err,
                      "the last committed epoch is 4: running the same "
                      "command again resumes from it"),
             err);
  // The rerun reloads the final epoch and runs download and exit on it.
  restart(*d.daemons[1]);
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(value_of(rerun.out, std::string{node} + ":total") == "1146",
               node);
}

BOOST_AUTO_TEST_CASE(a_frozen_daemon_is_noticed_within_the_connection_timeout) {
  three_daemons d({"--connection-timeout-ms", "1000"});
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--connection-timeout-ms", "1000"});
  args[3] = d.dir.sub("ckpt");
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(1), 20s));
  d.daemons[2]->signal(SIGSTOP);
  auto frozen_at = std::chrono::steady_clock::now();
  auto code = run->wait(15s);
  auto noticed_after = std::chrono::steady_clock::now() - frozen_at;
  d.daemons[2]->signal(SIGCONT);
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(err, "node trainer_2"), err);
  BOOST_TEST(contains(err, "stopped answering heartbeats"), err);
  // The configured 1 s, plus one heartbeat and scheduling slack.
  auto noticed_ms
    = std::chrono::duration_cast<std::chrono::milliseconds>(noticed_after)
        .count();
  BOOST_TEST(noticed_ms < 4000);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(refusals)

BOOST_AUTO_TEST_CASE(
  a_wrong_secret_is_refused_on_both_sides_and_the_daemon_serves_on) {
  temp_dir dir;
  auto good = write_secret(dir, "good", "the-right-secret-0123456789");
  auto bad = write_secret(dir, "bad", "a-wrong-secret-9876543210");
  auto daemon = start_daemon(dir.str(), "d", {"--secret-file", good});
  auto node = "trainer_0=" + daemon.address();
  auto refused = cli({"run", EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json",
                      "--node", node, "--secret-file", bad});
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "wrong secret"), refused.err);
  BOOST_TEST(eventually(
               [&] {
                 return contains(daemon.log(), "wrong secret");
               },
               5s),
             daemon.log());
  auto served
    = cli({"run", EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json", "--node",
           node, "--secret-file", good, "--fetch", "trainer_0:total"});
  BOOST_REQUIRE_MESSAGE(served.exit_code == 0, served.err);
  BOOST_TEST(value_of(served.out, "trainer_0:total") == final_total);
}

BOOST_AUTO_TEST_CASE(a_master_without_the_secret_is_refused) {
  temp_dir dir;
  auto good = write_secret(dir, "good", "the-right-secret-0123456789");
  auto daemon = start_daemon(dir.str(), "d", {"--secret-file", good});
  auto refused = cli({"run", EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json",
                      "--node", "trainer_0=" + daemon.address()});
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "requires a secret"), refused.err);
  BOOST_TEST(eventually(
               [&] {
                 return contains(daemon.log(), "requires a secret");
               },
               5s),
             daemon.log());
  BOOST_TEST(daemon.running());
}

BOOST_AUTO_TEST_CASE(a_daemon_without_the_secret_is_not_trusted) {
  temp_dir dir;
  auto secret = write_secret(dir, "s", "the-right-secret-0123456789");
  auto daemon = start_daemon(dir.str(), "d");
  auto refused
    = cli({"run", EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json", "--node",
           "trainer_0=" + daemon.address(), "--secret-file", secret});
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "has no secret"), refused.err);
}

BOOST_AUTO_TEST_CASE(listening_beyond_loopback_needs_a_secret) {
  temp_dir dir;
  auto refused = cli(
    {"node", "--listen", "0.0.0.0:0", "--checkpoint-root", dir.sub("root")});
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(contains(refused.err,
                      "refusing to listen on 0.0.0.0 without a "
                      "secret"),
             refused.err);
}

BOOST_AUTO_TEST_CASE(a_second_master_is_refused_while_the_first_runs) {
  temp_dir dir;
  auto daemon = start_daemon(dir.str(), "d");
  auto job_text = read_text(EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json");
  job_text = std::regex_replace(job_text, std::regex{"\"ops\": \\["},
                                "\"ops\": [{\"type\": \"Sleep\", \"args\": "
                                "{\"ms\": 200}},");
  std::ofstream{dir.sub("paced.json")} << job_text;
  auto node = "trainer_0=" + daemon.address();
  auto first = run_in_background(EPOCHRT_CLI,
                                 {"run", dir.sub("paced.json"), "--node", node},
                                 dir.sub("first.out"), dir.sub("first.err"));
  BOOST_REQUIRE(eventually(
    [&] {
      return contains(read_text(dir.sub("first.err")), "starting epoch 1");
    },
    20s));
  auto second = cli({"run", dir.sub("paced.json"), "--node", node});
  BOOST_TEST(second.exit_code == 1);
  BOOST_TEST(contains(second.err, "serves another master"), second.err);
  BOOST_TEST(first.wait(30s) == 0);
  // Once the first master is gone, the next one is served.
  auto third = cli(
    {"run", EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json", "--node", node});
  BOOST_TEST(third.exit_code == 0, third.err);
}

BOOST_AUTO_TEST_CASE(a_daemon_stops_cleanly_on_sigterm_and_sigint) {
  temp_dir dir;
  for (auto sig : {SIGTERM, SIGINT}) {
    auto daemon = start_daemon(dir.str(), "d" + std::to_string(sig));
    daemon.signal(sig);
    BOOST_TEST(daemon.wait(10s) == 0);
    BOOST_TEST(contains(daemon.log(), "shutting down"));
  }
}

BOOST_AUTO_TEST_CASE(a_node_not_in_the_job_is_bad_input) {
  auto refused = cli({"run", pipeline3, "--node", "nobody=127.0.0.1:1"});
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(contains(refused.err, "the job has no node 'nobody'"));
  auto bad_address = cli({"run", pipeline3, "--node", "trainer_0=nowhere"});
  BOOST_TEST(bad_address.exit_code == 2);
  BOOST_TEST(contains(bad_address.err, "HOST:PORT"));
}

BOOST_AUTO_TEST_CASE(an_unreachable_daemon_is_reported_before_anything_runs) {
  temp_dir dir;
  // A port that was just free: nothing listens there.
  int port = 0;
  {
    auto daemon = start_daemon(dir.str(), "gone");
    port = daemon.port();
    daemon.kill();
  }
  auto refused = cli({"run", pipeline3, "--checkpoint-dir", dir.sub("ckpt"),
                      "--node", "trainer_0=127.0.0.1:" + std::to_string(port)});
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "no daemon listens there"), refused.err);
  BOOST_TEST(!fs::exists(dir.sub("ckpt")));
}

BOOST_AUTO_TEST_CASE(a_daemon_frozen_before_the_job_is_given_up_on_in_time) {
  temp_dir dir;
  auto daemon = start_daemon(dir.str(), "d");
  // The kernel still accepts its connections; nobody answers them.
  daemon.signal(SIGSTOP);
  auto started = std::chrono::steady_clock::now();
  auto refused
    = cli({"run", pipeline3, "--node", "trainer_0=" + daemon.address(),
           "--connection-timeout-ms", "1000"});
  auto took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - started)
                   .count();
  daemon.signal(SIGCONT);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "did not answer within 1000 ms"),
             refused.err);
  BOOST_TEST(took_ms < 10000);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// A CA, a certificate for the daemons and one for the master, and the
// flags that use them.
struct tls_setup {
  temp_dir dir;
  test_ca ca{dir.str(), "job"};
  tls_identity daemon = ca.issue("daemon");
  tls_identity master = ca.issue("master");

  static std::vector<std::string> flags(const tls_identity& who,
                                        const std::string& ca_file) {
    return {"--tls-cert", who.certificate_file, "--tls-key",
            who.key_file, "--tls-ca",           ca_file};
  }

  std::vector<std::string> daemon_flags() const {
    return flags(daemon, ca.ca_file());
  }

  std::vector<std::string> master_flags() const {
    return flags(master, ca.ca_file());
  }
};

std::vector<std::string> concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::string pipeline = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json";

} // namespace

BOOST_AUTO_TEST_SUITE(mutual_tls)

BOOST_AUTO_TEST_CASE(pipeline3_over_tls_daemons_ends_as_in_process) {
  tls_setup tls;
  three_daemons d(tls.daemon_flags());
  auto args = d.run_args(pipeline3, tls.master_flags());
  args[3] = d.dir.sub("ckpt");
  auto r = cli(args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_totals(r.out);
  BOOST_TEST(contains(d.daemons[0]->log(), "(TLS)"), d.daemons[0]->log());
}

// A TLS daemon takes no copy streams (they would bypass TLS): copies go
// through CAF, encrypted, and arrive all the same.
BOOST_AUTO_TEST_CASE(copies_between_tls_daemons_go_through_caf) {
  tls_setup tls;
  three_daemons d(tls.daemon_flags());
  auto extra = tls.master_flags();
  extra.push_back("--replicas");
  extra.push_back("1");
  auto args = d.run_args(pipeline3, extra);
  args[3] = d.dir.sub("ckpt");
  auto r = cli(args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_totals(r.out);
  // trainer_0's copies are on the daemon of trainer_1.
  auto copy = d.daemons[1]->root() + args[3] + "/trainer_0.4";
  BOOST_TEST(std::filesystem::is_directory(copy), copy);
}

BOOST_AUTO_TEST_CASE(a_master_certified_by_another_ca_is_refused) {
  tls_setup tls;
  test_ca other{tls.dir.str(), "other"};
  auto intruder = other.issue("intruder");
  auto daemon = start_daemon(tls.dir.str(), "d", tls.daemon_flags());
  auto node = "trainer_0=" + daemon.address();
  // It even trusts the right CA: what counts is who signed its own
  // certificate.
  auto refused = cli(concat({"run", pipeline, "--node", node},
                            tls_setup::flags(intruder, tls.ca.ca_file())));
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(
    contains(refused.err, "closed the connection during the handshake"),
    refused.err);
  auto served = cli(
    concat({"run", pipeline, "--node", node, "--fetch", "trainer_0:total"},
           tls.master_flags()));
  BOOST_REQUIRE_MESSAGE(served.exit_code == 0, served.err);
  BOOST_TEST(value_of(served.out, "trainer_0:total") == final_total);
}

BOOST_AUTO_TEST_CASE(a_daemon_certified_by_another_ca_is_not_trusted) {
  tls_setup tls;
  test_ca other{tls.dir.str(), "other"};
  auto impostor = other.issue("impostor");
  auto daemon = start_daemon(tls.dir.str(), "d",
                             tls_setup::flags(impostor, tls.ca.ca_file()));
  auto refused
    = cli(concat({"run", pipeline, "--node", "trainer_0=" + daemon.address()},
                 tls.master_flags()));
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "cannot reach node trainer_0"), refused.err);
  BOOST_TEST(daemon.running());
}

BOOST_AUTO_TEST_CASE(tls_on_one_side_only_is_refused) {
  tls_setup tls;
  auto tls_daemon = start_daemon(tls.dir.str(), "tls", tls.daemon_flags());
  auto plain_master
    = cli({"run", pipeline, "--node", "trainer_0=" + tls_daemon.address()});
  BOOST_TEST(plain_master.exit_code == 1);
  BOOST_TEST(contains(plain_master.err, "TLS on for one side only"),
             plain_master.err);
  auto plain_daemon = start_daemon(tls.dir.str(), "plain");
  auto tls_master = cli(
    concat({"run", pipeline, "--node", "trainer_0=" + plain_daemon.address()},
           tls.master_flags()));
  BOOST_TEST(tls_master.exit_code == 1);
  BOOST_TEST(contains(tls_master.err, "does not use TLS"), tls_master.err);
  BOOST_TEST(tls_daemon.running());
  BOOST_TEST(plain_daemon.running());
}

BOOST_AUTO_TEST_CASE(tls_and_a_secret_together_work) {
  tls_setup tls;
  auto secret = write_secret(tls.dir, "s", "the-right-secret-0123456789");
  auto daemon = start_daemon(
    tls.dir.str(), "d", concat(tls.daemon_flags(), {"--secret-file", secret}));
  auto served
    = cli(concat({"run", pipeline, "--node", "trainer_0=" + daemon.address(),
                  "--secret-file", secret, "--fetch", "trainer_0:total"},
                 tls.master_flags()));
  BOOST_REQUIRE_MESSAGE(served.exit_code == 0, served.err);
  BOOST_TEST(value_of(served.out, "trainer_0:total") == final_total);
}

BOOST_AUTO_TEST_CASE(unusable_tls_files_are_bad_input) {
  tls_setup tls;
  auto node = "trainer_0=127.0.0.1:1";
  auto partial = cli({"run", pipeline, "--node", node, "--tls-cert",
                      tls.master.certificate_file});
  BOOST_TEST(partial.exit_code == 2);
  BOOST_TEST(contains(partial.err, "needs all of --tls-cert, --tls-key"),
             partial.err);
  auto wrong_key = cli(
    concat({"run", pipeline, "--node", node},
           tls_setup::flags({tls.master.certificate_file, tls.daemon.key_file},
                            tls.ca.ca_file())));
  BOOST_TEST(wrong_key.exit_code == 2);
  BOOST_TEST(contains(wrong_key.err, "not the key of the certificate"),
             wrong_key.err);
  ::chmod(tls.daemon.key_file.c_str(), 0644);
  auto open_key = cli(concat({"node", "--checkpoint-root", tls.dir.sub("r")},
                             tls.daemon_flags()));
  BOOST_TEST(open_key.exit_code == 2);
  BOOST_TEST(contains(open_key.err, "chmod 600"), open_key.err);
  auto no_ca = cli(concat({"node", "--checkpoint-root", tls.dir.sub("r")},
                          tls_setup::flags(tls.master, tls.dir.sub("none"))));
  BOOST_TEST(no_ca.exit_code == 2);
  BOOST_TEST(contains(no_ca.err, "TLS CA file"), no_ca.err);
}

BOOST_AUTO_TEST_SUITE_END()
