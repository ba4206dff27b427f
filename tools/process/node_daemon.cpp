#include "tools/process/node_daemon.hpp"

#include "tools/process/text_file.hpp"

namespace epochrt::process {

std::optional<node_daemon>
node_daemon::start(const options& opts, std::string& error, failure* why) {
  auto launch = opts.launch;
  launch.argv = {opts.program,        "node",
                 "--listen",          "127.0.0.1:" + std::to_string(opts.port),
                 "--checkpoint-root", opts.root};
  launch.argv.insert(launch.argv.end(), opts.args.begin(), opts.args.end());
  launch.out = output::pipe();
  launch.err = output::file(opts.log_path);
  auto proc = child_process::start(launch, error);
  if (!proc) {
    if (why != nullptr)
      *why = failure::cannot_start;
    return std::nullopt;
  }
  if (proc->await_listening(opts.ready_timeout, error) == 0) {
    if (why != nullptr)
      *why = proc->running() ? failure::silent : failure::ended;
    proc->kill();
    return std::nullopt;
  }
  return node_daemon{std::move(*proc), opts};
}

bool node_daemon::restart(std::string& error) {
  auto opts = opts_;
  opts.port = port();
  stop();
  auto again = start(opts, error);
  if (!again)
    return false;
  *this = std::move(*again);
  return true;
}

std::string node_daemon::address() const {
  return "127.0.0.1:" + std::to_string(port());
}

std::string node_daemon::log() const {
  return read_text(opts_.log_path);
}

} // namespace epochrt::process
