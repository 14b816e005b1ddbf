// What ParseConfig says of a configuration it refuses: the tests of every section check the
// message.
#pragma once

#include <string>

#include "rail/agent/config.h"

namespace rail::agent {

// The error's text, or "" when the configuration parses.
inline std::string ErrorOf(const std::string& yaml) {
  try {
    ParseConfig(yaml, "test.yaml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace rail::agent
