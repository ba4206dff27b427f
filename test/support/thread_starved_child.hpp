#pragma once

#include <functional>

namespace epochrt::test {

/// Runs `body` in a forked child that may start no thread: its user's
/// RLIMIT_NPROC is 1 (as root, the child first becomes nobody, since root
/// is exempt from the limit). Returns the child's exit code: `body`'s
/// result, 5 when it could not become nobody, 6 when it could not set the
/// limit, 7 when `body` threw; -1 when fork failed or the child did not
/// exit normally.
///
/// Call it before the test has threads the child would need: only the
/// forking thread exists in the child.
int exit_code_without_threads(const std::function<int()>& body);

} // namespace epochrt::test
