#include "test/remote/daemon_process.hpp"

#include <csignal>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

namespace epochrt::test {

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

daemon_process::daemon_process(const std::string& dir, const std::string& name,
                               const std::vector<std::string>& extra, int port)
  : dir_(dir), name_(name), extra_(extra), port_(port),
    root_(dir + "/" + name + "-root") {
  start();
}

void daemon_process::start() {
  auto out = dir_ + "/" + name_ + ".out";
  // A restarted daemon announces itself again: wait for the new line only.
  std::ofstream{out, std::ios::trunc};
  std::vector<std::string> args{"node", "--listen",
                                "127.0.0.1:" + std::to_string(port_),
                                "--checkpoint-root", root_};
  args.insert(args.end(), extra_.begin(), extra_.end());
  process_ = std::make_unique<background_process>(EPOCHRT_CLI, args, out,
                                                  dir_ + "/" + name_ + ".err");
  std::string line;
  auto up = eventually(
    [&] {
      auto text = read_text(out);
      auto at = text.find("listening on 127.0.0.1:");
      if (at == std::string::npos || text.find('\n', at) == std::string::npos)
        return !process_->running();
      line = text.substr(at);
      return true;
    },
    std::chrono::seconds(10));
  if (!up || line.empty())
    throw std::runtime_error("daemon " + name_ + " did not come up: " + log());
  port_ = std::stoi(line.substr(line.rfind(':') + 1));
}

std::string daemon_process::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

std::string daemon_process::log() const {
  return read_text(dir_ + "/" + name_ + ".err");
}

void daemon_process::kill() {
  process_->signal(SIGKILL);
  process_->wait(std::chrono::seconds(10));
}

void daemon_process::restart() {
  start();
}

} // namespace epochrt::test
