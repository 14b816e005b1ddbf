#include "rail/commands/command_setup.h"

#include <exception>
#include <ostream>

namespace rail::commands {

CommandSetup::CommandSetup(std::string command, std::ostream& err)
    : command_(std::move(command)), err_(err) {}

void CommandSetup::Error(std::string_view message) const {
  err_ << "rail_exporter " << command_ << ": " << message << "\n";
}

bool CommandSetup::OutputIsOneOf(const std::string& output,
                                 std::initializer_list<std::string_view> formats) const {
  std::string expected;
  for (const std::string_view format : formats) {
    if (output == format) return true;
    expected += std::string(expected.empty() ? "" : " or ") + std::string(format);
  }
  Error("--output: expected " + expected);
  return false;
}

agent::AgentConfig CommandSetup::LoadConfig(const std::optional<std::string>& file) {
  return file ? agent::LoadConfigFile(*file) : agent::AgentConfig{};
}

std::optional<std::string> CommandSetup::SecretFile(const std::optional<std::string>& flag,
                                                    const agent::AgentConfig& config) {
  return flag ? flag : config.probing.responder.secret_file;
}

int CommandSetup::Run(const std::function<int()>& body) const {
  try {
    return body();
  } catch (const std::exception& error) {
    Error(error.what());
    return kExitCouldNotRun;
  }
}

}  // namespace rail::commands
