#include "probe/worker/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

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

}  // namespace

Spawned SpawnWorker(const std::string& executable, const std::vector<std::string>& arguments,
                    std::string* error) {
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
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(executable.c_str()));
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
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
                                 argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (status != 0) {
    *error = executable + ": " + std::strerror(status);
    return {};
  }
  spawned.channel = std::move(ours);
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
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(executable.c_str()));
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
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
