#include "probe/worker/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include "rail/probe/worker.h"

extern char** environ;

namespace rail::probe::worker {
namespace {

// Owns posix_spawn_file_actions_t.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// The agent's environment with `extra` added, each replacing a variable of its name.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    const auto name = variable.substr(0, variable.find('=') + 1);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& added) {
      return std::string_view(added).starts_with(name);
    });
    if (!replaced) merged.emplace_back(variable);
  }
  merged.insert(merged.end(), extra.begin(), extra.end());
  return merged;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& string : strings) pointers.push_back(string.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

Spawned SpawnWorker(const std::string& executable, const std::vector<std::string>& arguments,
                    const std::vector<std::string>& environment, std::string* error) {
  int log_ends[2];
  if (::pipe2(log_ends, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return {};
  }
  base::UniqueFd log_read(log_ends[0]);
  base::UniqueFd log_write(log_ends[1]);
  int ends[2];
  // Close-on-exec on both ends: only the dup2'd copy reaches the worker, and no other child of
  // the agent inherits the pipe (a leaked copy would keep it open after the worker died).
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    *error = std::string("socketpair: ") + std::strerror(errno);
    return {};
  }
  base::UniqueFd ours(ends[0]);
  base::UniqueFd theirs(ends[1]);
  FileActions actions;
  posix_spawn_file_actions_adddup2(actions.get(), theirs.get(), kWorkerChannelFd);
  posix_spawn_file_actions_adddup2(actions.get(), log_write.get(), STDERR_FILENO);
  std::vector<std::string> argument_strings = {executable};
  argument_strings.insert(argument_strings.end(), arguments.begin(), arguments.end());
  auto argv = Pointers(argument_strings);
  auto environment_strings = MergedEnvironment(environment);
  auto envp = Pointers(environment_strings);
  // The agent blocks SIGINT and SIGTERM in every thread (it sigwaits for them); the worker starts
  // with no signal blocked, so that SIGTERM from a person or the service manager ends it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  Spawned spawned;
  const int status = posix_spawn(&spawned.pid, executable.c_str(), actions.get(), &attributes,
                                 argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (status != 0) {
    *error = executable + ": " + std::strerror(status);
    return {};
  }
  spawned.channel = std::move(ours);
  spawned.stderr_read = std::move(log_read);
  return spawned;
}

std::optional<std::string> RunForOutput(const std::string& executable,
                                        const std::vector<std::string>& arguments,
                                        std::string* error) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  base::UniqueFd read_end(ends[0]);
  base::UniqueFd write_end(ends[1]);
  FileActions actions;
  posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argument_strings = {executable};
  argument_strings.insert(argument_strings.end(), arguments.begin(), arguments.end());
  auto argv = Pointers(argument_strings);
  pid_t pid = -1;
  const int status =
      posix_spawn(&pid, executable.c_str(), actions.get(), nullptr, argv.data(), environ);
  write_end = base::UniqueFd();
  if (status != 0) {
    *error = executable + ": " + std::strerror(status);
    return std::nullopt;
  }
  std::string output;
  char chunk[4096];
  for (ssize_t n; (n = ::read(read_end.get(), chunk, sizeof chunk)) != 0;) {
    if (n > 0)
      output.append(chunk, static_cast<std::size_t>(n));
    else if (errno != EINTR)
      break;
  }
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    *error = executable + " ended with " + DeathReason(wait_status);
    return std::nullopt;
  }
  return output;
}

std::string DeathReason(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit_" + std::to_string(WEXITSTATUS(wait_status));
  if (!WIFSIGNALED(wait_status)) return "unknown";
  const char* name = sigabbrev_np(WTERMSIG(wait_status));
  if (name == nullptr) return "signal_" + std::to_string(WTERMSIG(wait_status));
  std::string reason = "sig";
  for (const char* c = name; *c != '\0'; ++c) {
    reason += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  }
  return reason;
}

}  // namespace rail::probe::worker
