// The responder's counters (StatsRecorder, responder_session.h), apart from the session protocol.
#include <algorithm>

#include "rail/peer/session_messages.h"
#include "responder_session.h"

namespace rail::peer::detail {

void StatsRecorder::ConnectionAccepted() {
  const std::lock_guard lock(mutex_);
  ++stats_.connections_total;
}

void StatsRecorder::SessionStarted(const std::string& address, const AgentVersions& versions,
                                   bool authenticated) {
  const std::lock_guard lock(mutex_);
  ++stats_.sessions_total;
  auto& peers = stats_.peers;
  if (!peers.contains(address) && peers.size() >= max_tracked_peers_ && !peers.empty()) {
    const auto oldest = std::min_element(
        peers.begin(), peers.end(),
        [](const auto& a, const auto& b) { return a.second.last_seen < b.second.last_seen; });
    peers.erase(oldest);
  }
  PeerInfo& peer = peers[address];
  peer.address = address;
  peer.versions = versions;
  peer.authenticated = authenticated;
  ++peer.sessions;
  peer.last_seen = std::chrono::system_clock::now();
}

void StatsRecorder::ProbeServed(const std::string& address) {
  const std::lock_guard lock(mutex_);
  ++stats_.probes_total;
  const auto peer = stats_.peers.find(address);
  if (peer != stats_.peers.end()) {
    ++peer->second.probes;
    peer->second.last_seen = std::chrono::system_clock::now();
  }
}

void StatsRecorder::Error(const std::string& reason) {
  const std::lock_guard lock(mutex_);
  ++stats_.errors_by_reason[KnownReason(reason)];
}

ResponderStats StatsRecorder::Snapshot(std::uint64_t active_sessions) const {
  const std::lock_guard lock(mutex_);
  ResponderStats copy = stats_;
  copy.active_sessions = active_sessions;
  return copy;
}

}  // namespace rail::peer::detail
