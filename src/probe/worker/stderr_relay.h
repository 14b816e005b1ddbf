// The probe worker's stderr, read by the agent: every line goes on to the agent's own stderr
// unchanged (the worker's and UCX's log lines stay in the journal), and the last line that looks
// fatal is kept, so that the calls its death ends can say what UCX said before it aborted.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "rail/base/unique_fd.h"

namespace rail::probe::worker {

// Whether `line` is one UCX writes when something fatal happens: its "<file>:<line> Fatal: ..."
// and "<file>:<line> Assertion `...' failed: ..." (ucs_fatal_error_message, before it aborts)
// and its "UCX  ERROR" log lines. The one rule for it. (The worker's own errors reach the agent
// in its replies.)
bool LooksFatal(std::string_view line);

// Reads `stderr_read` on a thread of its own, sleeping in poll, until the worker and every copy
// of its write end are gone (end of file), or, after Finish, until the pipe has been quiet for a
// moment (a process the worker started could hold the write end for ever).
class StderrRelay {
 public:
  explicit StderrRelay(base::UniqueFd stderr_read);
  ~StderrRelay();  // Finish()
  StderrRelay(const StderrRelay&) = delete;
  StderrRelay& operator=(const StderrRelay&) = delete;

  // Call once the worker has been reaped: reads what is left and ends the thread. Returns the
  // last fatal-looking line (without its end of line), "" when there was none.
  std::string Finish();

 private:
  void Relay();
  void Consume(std::string_view chunk);

  base::UniqueFd fd_;
  base::UniqueFd wake_read_;  // Finish writes a byte into wake_write_
  base::UniqueFd wake_write_;
  std::mutex mutex_;
  std::string partial_;     // a line not yet ended
  std::string last_fatal_;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace rail::probe::worker
