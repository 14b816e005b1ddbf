// Internals of the responder (rail/peer/responder.h): the state shared by every session, and one
// session's protocol. Kept apart from the accept loop so that each file reads on its own.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "rail/peer/auth.h"
#include "rail/peer/bulk_gate.h"
#include "rail/peer/connection.h"
#include "rail/peer/limits.h"
#include "rail/peer/responder.h"
#include "rail/peer/served_budget.h"

namespace rail::peer::detail {

// Thread-safe counters behind Responder::Snapshot().
class StatsRecorder {
 public:
  explicit StatsRecorder(std::size_t max_tracked_peers) : max_tracked_peers_(max_tracked_peers) {}

  void ConnectionAccepted();
  void SessionStarted(const std::string& address, const AgentVersions& versions,
                      bool authenticated);
  void ProbeServed(const std::string& address);
  void Error(const std::string& reason);
  ResponderStats Snapshot(std::uint64_t active_sessions) const;

 private:
  const std::size_t max_tracked_peers_;
  mutable std::mutex mutex_;
  ResponderStats stats_;
};

// Shared by every session of one responder; outlives them all.
struct SessionContext {
  const ResponderOptions& options;
  const base::Clock& clock;  // every deadline of the sessions
  const ProbeHandlerFactory& factory;
  ReplayCache& seen_initiator_nonces;
  PeerRateLimiter& rate_limiter;
  StatsRecorder& stats;
  BulkGate& bulk_gate;
  ServedBudget& served_budget;
  int stop_fd;  // readable once the responder stops
};

// Runs one accepted connection's session to its end (the socket is closed on return).
void RunSession(const SessionContext& context, base::UniqueFd socket);

// Refuses a connection without a session (over the session limit): a short error reply, then
// close. Never waits long: it runs on the accept thread.
void RefuseConnection(base::UniqueFd socket, const std::string& reason, const std::string& message,
                      std::size_t max_frame_bytes, const base::Clock& clock);

}  // namespace rail::peer::detail
