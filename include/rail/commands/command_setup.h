// What the subcommands (`probe`, `doctor`, `plan`) do alike: check --output, load the
// configuration file, settle the secret file, and turn anything they throw into one line and
// exit status 2. Each command's entry point runs its body through one CommandSetup.
#pragma once

#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "rail/agent/config.h"

namespace rail::commands {

// Exit statuses every subcommand shares; what "failed" means is the command's own.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitCouldNotRun = 2;

class CommandSetup {
 public:
  // `command` names the subcommand in each error line: "rail_exporter <command>: ...".
  CommandSetup(std::string command, std::ostream& err);

  // Writes one error line.
  void Error(std::string_view message) const;

  // True when `output` is one of `formats`; otherwise writes "--output: expected a or b".
  bool OutputIsOneOf(const std::string& output,
                     std::initializer_list<std::string_view> formats) const;

  // The configuration file's settings, or the defaults without one. Throws agent::ConfigError.
  static agent::AgentConfig LoadConfig(const std::optional<std::string>& file);

  // --peer.secret-file when given, else the configuration's responder.secret_file.
  static std::optional<std::string> SecretFile(const std::optional<std::string>& flag,
                                               const agent::AgentConfig& config);

  // body()'s exit status; kExitCouldNotRun, with its message on one line, when it throws.
  int Run(const std::function<int()>& body) const;

 private:
  std::string command_;
  std::ostream& err_;
};

}  // namespace rail::commands
