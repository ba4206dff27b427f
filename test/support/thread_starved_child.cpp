#include "test/support/thread_starved_child.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace epochrt::test {

int exit_code_without_threads(const std::function<int()>& body) {
  auto pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    if (geteuid() == 0 && setuid(65534) != 0)
      _exit(5);
    rlimit lim{1, 1};
    if (setrlimit(RLIMIT_NPROC, &lim) != 0)
      _exit(6);
    // _exit, and no exception out of `body`: nothing of the parent's (its
    // test framework) runs here.
    try {
      _exit(body());
    } catch (...) {
      _exit(7);
    }
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

} // namespace epochrt::test
