#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/persistence/test_util.hpp"
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/dir_lock.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

std::string lock_file_of(const std::string& dir) {
  return (fs::path{dir} / dir_lock::file_name).string();
}

std::string contents(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

// True when `x` is persistence_errc::locked and its text names `dir` and
// `holder` ("process 1234" or "another process").
template <class T>
bool refused(const caf::expected<T>& x, const std::string& dir,
             const std::string& holder) {
  if (!has_code(x, persistence_errc::locked))
    return false;
  auto text = error_text(x.error());
  return text.find(dir) != std::string::npos
    && text.find("in use by " + holder) != std::string::npos;
}

std::string this_process() {
  return "process " + std::to_string(::getpid());
}

// A child process that takes the lock of `dir`, reports it on a pipe and
// waits to be killed (or, should the test die first, for its parent's
// death or a 30 s alarm: it never outlives the test by much).
struct locking_child {
  pid_t pid = -1;

  explicit locking_child(const std::string& dir) {
    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::alarm(30);
      auto held = dir_lock::acquire(dir);
      char status = held ? 'y' : 'n';
      if (::write(fds[1], &status, 1) != 1)
        ::_exit(1);
      for (;;)
        ::pause();
    }
    ::close(fds[1]);
    pollfd ready{fds[0], POLLIN, 0};
    char status = 0;
    auto got = ::poll(&ready, 1, 10000) == 1 && ::read(fds[0], &status, 1) == 1;
    ::close(fds[0]);
    BOOST_REQUIRE_MESSAGE(got && status == 'y', "the child did not lock");
  }

  void kill() {
    if (pid <= 0)
      return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
  }

  ~locking_child() {
    kill();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(dir_lock_suite, persistence_fixture)

BOOST_AUTO_TEST_CASE(a_second_lock_in_the_same_process_is_refused_naming_it) {
  auto first = dir_lock::acquire(root.string());
  BOOST_REQUIRE_MESSAGE(first, describe(first));
  auto second = dir_lock::acquire(root.string());
  BOOST_TEST(refused(second, root.string(), this_process()), describe(second));
}

BOOST_AUTO_TEST_CASE(destruction_releases_the_lock) {
  {
    auto first = dir_lock::acquire(root.string());
    BOOST_REQUIRE_MESSAGE(first, describe(first));
  }
  auto second = dir_lock::acquire(root.string());
  BOOST_TEST(static_cast<bool>(second), describe(second));
}

BOOST_AUTO_TEST_CASE(a_moved_lock_is_held_until_its_last_owner_goes) {
  std::optional<dir_lock> owner;
  {
    auto first = dir_lock::acquire(root.string());
    BOOST_REQUIRE_MESSAGE(first, describe(first));
    owner.emplace(std::move(*first));
  }
  BOOST_TEST(owner->dir() == root.string());
  BOOST_TEST(
    has_code(dir_lock::acquire(root.string()), persistence_errc::locked));
  owner.reset();
  BOOST_TEST(static_cast<bool>(dir_lock::acquire(root.string())));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_is_created) {
  auto dir = (root / "a" / "b").string();
  auto held = dir_lock::acquire(dir);
  BOOST_REQUIRE_MESSAGE(held, describe(held));
  BOOST_TEST(fs::is_directory(dir));
  BOOST_TEST(fs::is_regular_file(lock_file_of(dir)));
}

BOOST_AUTO_TEST_CASE(the_holder_writes_its_pid_and_release_keeps_the_file) {
  {
    auto held = dir_lock::acquire(root.string());
    BOOST_REQUIRE_MESSAGE(held, describe(held));
    BOOST_TEST(contents(lock_file_of(root.string()))
               == std::to_string(::getpid()) + "\n");
  }
  // Removing it would race with the next locker.
  BOOST_TEST(fs::exists(lock_file_of(root.string())));
}

BOOST_AUTO_TEST_CASE(a_directory_that_cannot_be_made_is_an_io_error) {
  { std::ofstream{root / "file"} << "not a directory"; }
  auto held = dir_lock::acquire((root / "file" / "ckpt").string());
  BOOST_TEST(has_code(held, persistence_errc::io_error), describe(held));
}

BOOST_AUTO_TEST_CASE(garbage_in_the_lock_file_is_harmless) {
  { std::ofstream{lock_file_of(root.string())} << "\x01garbage 99999999999"; }
  auto first = dir_lock::acquire(root.string());
  BOOST_REQUIRE_MESSAGE(first, describe(first));
  // Overwritten behind the holder's back: the refusal names nobody rather
  // than what the file says.
  { std::ofstream{lock_file_of(root.string())} << "-17\n"; }
  auto second = dir_lock::acquire(root.string());
  BOOST_TEST(refused(second, root.string(), "another process"),
             describe(second));
  BOOST_TEST(error_text(second.error()).find("-17") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(another_process_holding_the_lock_is_named) {
  locking_child child{root.string()};
  auto held = dir_lock::acquire(root.string());
  BOOST_TEST(
    refused(held, root.string(), "process " + std::to_string(child.pid)),
    describe(held));
}

BOOST_AUTO_TEST_CASE(a_holder_killed_by_sigkill_leaves_the_directory_free) {
  locking_child child{root.string()};
  BOOST_REQUIRE(
    has_code(dir_lock::acquire(root.string()), persistence_errc::locked));
  child.kill();
  auto held = dir_lock::acquire(root.string());
  BOOST_TEST(static_cast<bool>(held), describe(held));
}

BOOST_AUTO_TEST_SUITE_END()
