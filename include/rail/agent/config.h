// The agent's YAML configuration (--config.file). Validated when loaded: every error names the
// offending key, so a typo never silently turns into a default.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "rail/health/checks.h"
#include "rail/probing/config.h"

namespace rail::agent {

using probing::ConfigError;
using probing::FleetConfig;
using probing::PeerConfig;
using probing::ProbeConfig;
using probing::ResponderConfig;

// The whole file: what the probing service runs from (every section but health), and the health
// checks' thresholds.
struct AgentConfig {
  probing::ProbingConfig probing;
  health::Thresholds health;
};

// "250ms", "2s", "5m", "1h" (a bare number is seconds). nullopt when malformed, negative, not
// finite or longer than kMaxDuration.
inline constexpr std::chrono::hours kMaxDuration{10 * 365 * 24};
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Parses YAML text; `source` names the file in error messages. Throws ConfigError.
AgentConfig ParseConfig(std::string_view yaml_text, const std::string& source);
// Reads and parses a file. Throws ConfigError, also when the file cannot be read.
AgentConfig LoadConfigFile(const std::string& path);

}  // namespace rail::agent
