#pragma once

#include <string>

namespace rail {

// --log.level: debug, info, warn, error. --log.format: logfmt or json. Logs go to stderr.
// Throws AgentError for values outside those.
void ConfigureLogging(const std::string& level, const std::string& format);

}  // namespace rail
