#include "test/support/node_daemons.hpp"

#include <stdexcept>

#include "tools/process/text_file.hpp"

namespace epochrt::test {

process::node_daemon
start_daemon(const std::string& dir, const std::string& name,
             const std::vector<std::string>& extra, uint16_t port) {
  process::node_daemon::options opts;
  opts.program = EPOCHRT_CLI;
  opts.root = dir + "/" + name + "-root";
  opts.port = port;
  opts.args = extra;
  opts.log_path = dir + "/" + name + ".err";
  std::string error;
  auto daemon = process::node_daemon::start(opts, error);
  if (!daemon)
    throw std::runtime_error("daemon " + name + " did not come up: " + error
                             + "; its log:\n"
                             + process::read_text(opts.log_path));
  return std::move(*daemon);
}

void restart(process::node_daemon& daemon) {
  std::string error;
  if (!daemon.restart(error))
    throw std::runtime_error("a daemon did not come up again: " + error
                             + "; its log:\n" + daemon.log());
}

} // namespace epochrt::test
