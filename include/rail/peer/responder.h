// The responder: every agent answers probes from its peers on a TCP control port.
//
// A session, initiator (I) and responder (R), one length-prefixed JSON frame per arrow
// (framing.h); either side may send an `error` {reason, message} instead of what is expected and
// then close:
//
//   I -> R  hello              {agent_version, ucx_version, nonce[, auth: "none"]}
//   R -> I  challenge          {agent_version, ucx_version, nonce, proof}    (secure only)
//   I -> R  response           {proof}                                       (secure only)
//   R -> I  welcome            {agent_version, ucx_version, authenticated}
//   then, any number of times while the session lasts:
//   I -> R  probe_setup        {kind, rail, message_sizes_bytes, duration_seconds, max_bytes,
//                               streams, ucx_worker_address, ucx_rkey, tcp_port, run_id}
//                                                                               (messages.h)
//           a bulk kind (options.is_bulk_kind) first passes the bulk gate (bulk_gate.h): one
//           run at a time per host, or per rail (limits.bulk_concurrency). Otherwise:
//   R -> I  error              {reason: "busy", message, retry_after_ms}, and R closes. The
//           hint is the running transfer's expected remaining time plus limits.bulk_retry_grace;
//           the initiator tries again later in a new session and counts `busy` apart from
//           failures. The sessions of one run (a multi-rail run opens one per rail) carry the
//           same run_id and are admitted together; a setup without run_id (an older agent) is
//           one run per (peer address, kind). An admitted bulk setup then passes the
//           served-bulk budget (served_budget.h), refused the same way (counted "budget").
//   R -> I  probe_setup_reply  {agent_version, ucx_version, setup: {handler's fields}}
//           R runs handler->Serve(stop) on a worker thread; I runs its half of the probe
//   I -> R  probe_done         {measured: {what I measured}}
//   R -> I  probe_report       {report: {what R measured, e.g. cpu_seconds, bytes_received}}
//
// `rail` may name several rails, comma-separated, for multi-rail kinds; the handler factory
// interprets it. An insecure hello ("auth": "none") is accepted only by a responder started with
// the insecure option, which answers it with a welcome at once; see session_messages.h.
//
// Limits (limits.h), each refusal answered with an error reply and counted by reason:
//   the whole handshake, and the wait for each probe_setup, end after handshake_timeout
//   ("timeout": a silent or one-byte-per-second client is dropped); frames are bounded by
//   max_frame_bytes ("oversized"); frames that are not JSON or lack the envelope ("malformed"),
//   another protocol version ("version"); a wrong proof ("auth"), a nonce seen recently
//   ("replay"); more sessions than max_concurrent_sessions ("limit", sent by the accept thread
//   without starting a session), more connections from one address than max_connections_per_ip
//   ("ip_limit", likewise); a peer outside allowed_networks ("not_allowed": closed at accept
//   without a reply); probe setups beyond the per-peer-IP token bucket ("rate"); a
//   probe beyond the bytes or seconds allowed ("limit"); a kind or rail without handler
//   ("unknown_kind"); probe_done not arriving within the probe's duration + probe_grace
//   ("timeout"); a bulk setup while another run's bulk transfer holds the gate ("busy"); a bulk
//   setup past the served-bulk budget (served_budget.h: limits.max_served_bulk_time_fraction_
//   per_rail, limits.max_served_bytes_per_hour), answered "busy" with the time until it fits
//   and counted as "budget".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/peer/allow_list.h"
#include "rail/peer/auth.h"
#include "rail/peer/connection.h"
#include "rail/peer/limits.h"
#include "rail/peer/messages.h"
#include "rail/peer/secret.h"

namespace rail::peer {

// The responder's half of one probe kind.
class ProbeSessionHandler {
 public:
  virtual ~ProbeSessionHandler() = default;
  // Prepares the responder's half and fills the reply (worker address, rkey, remote buffer
  // address, tcp port...). false + reason/message refuses the probe.
  virtual bool Setup(const ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
                     std::string* message) = 0;
  // Runs the responder's half until `stop` is set (the initiator's probe_done arrived, or the
  // probe's deadline passed). Must notice `stop` within a fraction of a second; it may then take
  // a short bounded time to drain what is already in flight.
  virtual void Serve(const std::atomic<bool>& stop) = 0;
  // After Serve: what the responder measured, e.g. {"cpu_seconds": .., "bytes_received": ..}.
  virtual nlohmann::json Report() = 0;
};

// (kind, rail) -> handler; nullptr refuses the probe with reason "unknown_kind".
using ProbeHandlerFactory = std::function<std::unique_ptr<ProbeSessionHandler>(
    const std::string& kind, const std::string& rail)>;

struct ResponderOptions {
  // Numeric address to listen on; "" listens on every address (IPv6 dual-stack where available,
  // else IPv4).
  std::string listen_host;
  std::uint16_t port = kDefaultResponderPort;  // 0: an ephemeral port, see ListeningPort()
  // With a secret every peer must prove it. Without one every peer is refused, unless `insecure`
  // is set explicitly (then only insecure initiators are served). A secret overrides `insecure`.
  std::shared_ptr<const Secret> secret;
  bool insecure = false;
  AgentVersions versions;
  // This agent's rails' MTUs by rail name, sent in every welcome (read per session, so a changed
  // MTU shows up without a restart). Empty function: not sent.
  std::function<std::map<std::string, std::uint64_t>()> rail_mtus;
  // This agent's name (responder.name, else its host name), sent in every welcome; empty: not
  // sent.
  std::string name;
  Limits limits;
  // responder.allowed_networks; empty: every peer address may connect.
  std::vector<Network> allowed_networks;
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds probe_grace{5000};  // beyond a probe's duration
  std::size_t max_tracked_peers = 1024;         // in the stats; least recently seen evicted
  const base::Clock* clock = nullptr;  // rate limits, replay cache, bulk gate; nullptr: steady
  // Whether a kind is bulk (a throughput transfer): its setups pass the bulk gate
  // (limits.bulk_concurrency). The agent passes the probe layer's rule; empty: no kind is.
  std::function<bool(const std::string& kind)> is_bulk_kind;
};

struct PeerInfo {
  std::string address;
  AgentVersions versions;
  bool authenticated = false;  // false: an insecure session
  std::uint64_t sessions = 0;
  std::uint64_t probes = 0;
  std::chrono::system_clock::time_point last_seen;
};

struct ResponderStats {
  std::uint64_t connections_total = 0;     // TCP connections accepted (including those refused)
  std::uint64_t sessions_total = 0;        // handshakes completed
  std::uint64_t active_sessions = 0;       // sessions holding a slot now
  std::uint64_t active_sources = 0;        // distinct peer addresses holding those slots
  std::uint64_t probes_total = 0;          // probes served through to the report
  std::uint64_t bulk_transfers_total = 0;  // bulk transfers that started serving
  // Bulk transfers that overlapped another run's in the gate's scope: the gate's tripwire, 0
  // unless something let two runs through at once.
  std::uint64_t bulk_overlaps_total = 0;
  std::map<std::string, std::uint64_t> errors_by_reason;  // refusals and failures, by token
  std::map<std::string, PeerInfo> peers;                  // peers that completed a handshake
};

class Responder {
 public:
  Responder(ResponderOptions options, ProbeHandlerFactory factory);
  ~Responder();  // Stop()
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // Validates the options, binds, listens and starts the accept thread. false + `error` when the
  // options are unusable or the address cannot be bound.
  bool Start(std::string* error);
  // Closes the listener, ends every session (their waits are cancelled, their probes stopped)
  // and joins every thread. Prompt: bounded by a probe handler's drain, not by any timeout.
  void Stop();

  std::uint16_t ListeningPort() const;
  ResponderStats Snapshot() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rail::peer
