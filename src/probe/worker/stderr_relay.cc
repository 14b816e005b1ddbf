#include "probe/worker/stderr_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace rail::probe::worker {
namespace {

// After Finish, how long the pipe may stay quiet before the relay stops waiting for its end: a
// process the worker started could hold the write end for ever.
constexpr int kQuietAfterDeathMs = 200;
// A line longer than this is passed on in pieces and judged by its first piece.
constexpr std::size_t kMaxLine = 4096;

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the agent's stderr is gone: nothing to pass the line on to
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

bool LooksFatal(std::string_view line) {
  for (const std::string_view marker :
       {std::string_view(" Fatal: "), std::string_view("Assertion `"),
        std::string_view(" UCX  ERROR ")}) {
    if (line.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

StderrRelay::StderrRelay(base::UniqueFd stderr_read) : fd_(std::move(stderr_read)) {
  int ends[2];
  if (!fd_ || ::pipe2(ends, O_CLOEXEC) != 0) return;  // nothing to relay: Finish returns ""
  wake_read_ = base::UniqueFd(ends[0]);
  wake_write_ = base::UniqueFd(ends[1]);
  thread_ = std::thread([this] { Relay(); });
}

StderrRelay::~StderrRelay() {
  Finish();
}

std::string StderrRelay::Finish() {
  if (thread_.joinable()) {
    const char wake = 1;
    while (::write(wake_write_.get(), &wake, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  return last_fatal_;
}

void StderrRelay::Consume(std::string_view chunk) {
  // Whole lines go on as they end; the rest waits for its end of line.
  partial_.append(chunk);
  std::size_t start = 0;
  for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line(partial_.data() + start, end - start);
    WriteAll(STDERR_FILENO, std::string_view(partial_.data() + start, end - start + 1));
    if (LooksFatal(line)) {
      std::lock_guard lock(mutex_);
      last_fatal_ = std::string(line);
    }
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxLine) Consume("\n");
}

void StderrRelay::Relay() {
  char buffer[4096];
  bool worker_gone = false;
  while (true) {
    pollfd waits[2] = {{fd_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    const int ready = ::poll(waits, worker_gone ? 1 : 2, worker_gone ? kQuietAfterDeathMs : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (ready == 0 && worker_gone)) break;
    if (!worker_gone && waits[1].revents != 0) worker_gone = true;
    if (waits[0].revents == 0) continue;
    const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: every writer is gone
    Consume(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
  if (!partial_.empty()) Consume("\n");
}

}  // namespace rail::probe::worker
