// The initiating side of a control session: connects to a peer's responder, runs the handshake
// (auth.h) and then carries the probe messages (responder.h describes the exchange).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rail/peer/auth.h"
#include "rail/peer/connection.h"
#include "rail/peer/secret.h"

namespace rail::peer {

struct ClientOptions {
  // nullptr: insecure. The hello then says "auth": "none", and only a responder started with its
  // insecure option accepts it; a responder with a secret refuses it with reason "auth".
  std::shared_ptr<const Secret> secret;
  AgentVersions versions;
  // Responder nonces seen recently; required with a secret, must outlive the client.
  ReplayCache* seen_responder_nonces = nullptr;
  std::size_t max_frame_bytes = kDefaultMaxFrameBytes;
  ConnectOptions connect;  // e.g. bind the control connection to a local address
  // What every deadline of the client is measured on; nullptr: base::SystemClock().
  const base::Clock* clock = nullptr;
};

class PeerClient {
 public:
  // Connects to `peer` ("host", "host:port", "[v6]:port"; default port kDefaultResponderPort)
  // and completes the handshake, all within `timeout`. On failure returns nullptr with a reason
  // token in `error`: resolve, refused, unreachable, timeout, closed, auth (wrong secret, or one
  // side insecure), replay, limit (the responder is full), version, malformed, protocol, ...
  static std::unique_ptr<PeerClient> Connect(const std::string& peer,
                                             std::chrono::milliseconds timeout,
                                             const ClientOptions& options, NetError* error);

  const AgentVersions& peer_versions() const { return peer_versions_; }
  // The name the responder gave in its welcome; empty when it predates the field.
  const std::string& peer_name() const { return peer_name_; }
  // The MTUs of the peer's rails from its welcome; empty when it did not send them.
  const std::map<std::string, std::uint64_t>& peer_rail_mtus() const { return peer_rail_mtus_; }
  // False when both sides run insecure.
  bool authenticated() const { return authenticated_; }
  // Where the control connection goes: a probe's data streams go to the address the responder
  // names in its setup reply, and here when it names none.
  const std::string& peer_host() const { return peer_host_; }
  std::uint16_t peer_port() const { return peer_port_; }
  std::string local_address() const { return LocalAddress(connection_.fd()); }

  // Sends `message` and returns the next message from the peer. An error reply (type "error")
  // becomes a failure whose reason is the peer's (KnownReason) and whose message is the peer's.
  std::optional<nlohmann::json> Request(const nlohmann::json& message, Deadline deadline,
                                        NetError* error);
  bool Send(const nlohmann::json& message, Deadline deadline, NetError* error);
  // The next message; error replies handled as in Request.
  std::optional<nlohmann::json> Receive(Deadline deadline, NetError* error);

  // Tells the peer why this side gives up (best effort, bounded by a short wait), so that it can
  // count the reason instead of seeing a bare close.
  void SendError(const std::string& reason, const std::string& message);

 private:
  PeerClient(Connection connection, const base::Clock& clock)
      : connection_(std::move(connection)), clock_(&clock) {}
  bool Handshake(const ClientOptions& options, Deadline deadline, NetError* error);
  bool SecureHandshake(const ClientOptions& options, Deadline deadline, NetError* error);
  bool AwaitWelcome(Deadline deadline, bool expect_authenticated, NetError* error);

  Connection connection_;
  const base::Clock* clock_;
  AgentVersions peer_versions_;
  std::string peer_host_;
  std::map<std::string, std::uint64_t> peer_rail_mtus_;
  bool authenticated_ = false;
  std::string peer_name_;
  std::uint16_t peer_port_ = 0;
};

// The signature of rail::probe::PeerConnector (probe.h), spelled out here so that this layer
// does not depend on the probe layer: (peer, timeout, reason, message) -> client or nullptr.
using PeerConnectorFunction = std::function<std::unique_ptr<PeerClient>(
    const std::string& peer, std::chrono::milliseconds timeout, std::string* reason,
    std::string* message)>;

// `secret` nullptr: insecure. `seen_responder_nonces` must outlive the returned function.
PeerConnectorFunction MakePeerConnector(std::shared_ptr<const Secret> secret,
                                        AgentVersions versions, ReplayCache& seen_responder_nonces);
PeerConnectorFunction MakePeerConnector(ClientOptions options);

}  // namespace rail::peer
