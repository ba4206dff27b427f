#pragma once

// Forward declarations of the node's services, which the actors' headers
// name by reference or pointer only (as caf/fwd.hpp does for CAF's types).

namespace epochrt {

class exchange_hub;
class fault_injector;
class op_registry;
class worker_pool;
class workspace;

} // namespace epochrt
