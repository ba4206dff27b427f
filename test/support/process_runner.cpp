#include "test/support/process_runner.hpp"

#include <algorithm>
#include <stdexcept>

namespace epochrt::test {

namespace {

process::child_process start(process::child_process::options opts) {
  std::string error;
  auto proc = process::child_process::start(opts, error);
  if (!proc)
    throw std::runtime_error(error);
  return std::move(*proc);
}

std::vector<std::string> command(const std::string& program,
                                 const std::vector<std::string>& args) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

} // namespace

process_runner::process_runner(std::string program,
                               std::chrono::milliseconds timeout)
  : program_(std::move(program)), timeout_(timeout) {
  // nop
}

process_result process_runner::run(const std::vector<std::string>& args) const {
  process::child_process::options opts;
  opts.argv = command(program_, args);
  opts.out = process::output::pipe();
  opts.err = process::output::pipe();
  auto proc = start(std::move(opts));
  process_result result;
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  // Its output closed: it ends now, if it has not already.
  if (proc.read_to_end(timeout_, result.out, result.err)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    result.exit_code = proc.wait(std::max(left, std::chrono::milliseconds{0}));
  }
  if (result.exit_code < 0) {
    result.timed_out = true;
    result.exit_code = proc.stop(0, std::chrono::milliseconds{0});
  }
  return result;
}

process::child_process run_in_background(const std::string& program,
                                         const std::vector<std::string>& args,
                                         const std::string& out_file,
                                         const std::string& err_file) {
  process::child_process::options opts;
  opts.argv = command(program, args);
  opts.out = process::output::file(out_file);
  opts.err = process::output::file(err_file);
  return start(std::move(opts));
}

} // namespace epochrt::test
