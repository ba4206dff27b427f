#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/process/node_daemon.hpp"

namespace epochrt::test {

/// Starts the `epochrt` command built with the tests as a node daemon on
/// 127.0.0.1 with `extra` arguments: its checkpoint root `dir`/NAME-root,
/// its log (stderr) `dir`/NAME.err. `port` 0 picks a free one. Destroying
/// it kills it. Throws std::runtime_error, with its log, when it does not
/// listen within 10 s.
process::node_daemon
start_daemon(const std::string& dir, const std::string& name,
             const std::vector<std::string>& extra = {}, uint16_t port = 0);

/// Starts `daemon` again on its port with its arguments. Throws
/// std::runtime_error when it does not come up.
void restart(process::node_daemon& daemon);

} // namespace epochrt::test
