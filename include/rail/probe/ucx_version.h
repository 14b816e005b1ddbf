#pragma once

#include <string>

namespace rail::probe {

// The version of the libucp the agent runs with (not the one it was built against): a UCX the
// user installed with the same ABI is what the peers' handshake and the checks compare.
const std::string& UcxRuntimeVersion();

}  // namespace rail::probe
