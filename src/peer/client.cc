#include "rail/peer/client.h"

#include "rail/peer/messages.h"
#include "rail/peer/session_messages.h"
#include "shared_helpers.h"

namespace rail::peer {

namespace {

using nlohmann::json;

// Bounds the courtesy error message sent before giving up.
constexpr std::chrono::milliseconds kErrorSendWait{200};

using detail::Fail;

}  // namespace

std::unique_ptr<PeerClient> PeerClient::Connect(const std::string& peer,
                                                std::chrono::milliseconds timeout,
                                                const ClientOptions& options, NetError* error) {
  const base::Clock& clock = options.clock != nullptr ? *options.clock : base::SystemClock();
  const Deadline deadline = Deadline::After(clock, timeout);
  std::string parse_error;
  std::optional<HostPort> address = ParseHostPort(peer, kDefaultResponderPort, &parse_error);
  if (!address) {
    Fail(error, "resolve", parse_error);
    return nullptr;
  }
  if (options.secret != nullptr && options.seen_responder_nonces == nullptr) {
    Fail(error, "internal", "a secure client needs a replay cache");
    return nullptr;
  }
  std::optional<Connection> connection = Connection::Connect(
      address->host, address->port, deadline, options.connect, options.max_frame_bytes, error);
  if (!connection) return nullptr;
  std::unique_ptr<PeerClient> client(new PeerClient(std::move(*connection), clock));
  client->peer_host_ = address->host;
  client->peer_port_ = address->port;
  if (!client->Handshake(options, deadline, error)) {
    error->message = "handshake with " + FormatHostPort(address->host, address->port) +
                     " failed: " + error->message;
    return nullptr;
  }
  return client;
}

bool PeerClient::Handshake(const ClientOptions& options, Deadline deadline, NetError* error) {
  if (options.secret != nullptr) return SecureHandshake(options, deadline, error);

  std::string nonce_error;
  std::optional<std::string> nonce = RandomNonce(&nonce_error);
  if (!nonce) return Fail(error, "internal", nonce_error);
  json hello = ToJson(Hello{options.versions.agent_version, options.versions.ucx_version, *nonce});
  hello[kHelloAuthField] = kAuthNone;
  if (!Send(hello, deadline, error)) return false;
  return AwaitWelcome(deadline, /*expect_authenticated=*/false, error);
}

bool PeerClient::SecureHandshake(const ClientOptions& options, Deadline deadline, NetError* error) {
  HandshakeInitiator initiator(options.secret, options.versions, options.seen_responder_nonces);
  std::string auth_error;
  std::optional<Hello> hello = initiator.Start(&auth_error);
  if (!hello) return Fail(error, "internal", auth_error);
  if (!Send(ToJson(*hello), deadline, error)) return false;

  std::optional<json> reply = Receive(deadline, error);
  if (!reply) return false;
  Challenge challenge;
  if (!FromJson(*reply, &challenge, &auth_error)) {
    SendError("protocol", "expected a challenge");
    return Fail(error, "protocol", auth_error);
  }
  std::optional<Response> response = initiator.OnChallenge(challenge, &auth_error);
  if (!response) {
    // auth.cc words a reused nonce as a "replayed handshake"; every other failure is a proof
    // that does not match.
    const std::string reason = auth_error.find("replayed") != std::string::npos ? "replay" : "auth";
    SendError(reason, "initiator refuses the responder: " + auth_error);
    return Fail(error, reason, auth_error);
  }
  if (!Send(ToJson(*response), deadline, error)) return false;
  return AwaitWelcome(deadline, /*expect_authenticated=*/true, error);
}

bool PeerClient::AwaitWelcome(Deadline deadline, bool expect_authenticated, NetError* error) {
  std::optional<json> reply = Receive(deadline, error);
  if (!reply) return false;
  if (!expect_authenticated && MessageType(*reply) == kTypeChallenge) {
    SendError("auth", "initiator runs without a shared secret (insecure)");
    return Fail(error, "auth",
                "the responder requires a shared secret, and this agent runs insecure");
  }
  Welcome welcome;
  std::string parse_error;
  if (!FromJson(*reply, &welcome, &parse_error)) {
    SendError("protocol", "expected a welcome");
    return Fail(error, "protocol", parse_error);
  }
  if (welcome.authenticated != expect_authenticated) {
    SendError("auth", "authentication modes differ");
    return Fail(error, "auth", "the responder's welcome does not match the authentication mode");
  }
  peer_versions_ = welcome.versions;
  peer_rail_mtus_ = std::move(welcome.rail_mtus);
  peer_name_ = std::move(welcome.name);
  authenticated_ = welcome.authenticated;
  return true;
}

std::optional<json> PeerClient::Request(const json& message, Deadline deadline, NetError* error) {
  if (!Send(message, deadline, error)) return std::nullopt;
  return Receive(deadline, error);
}

bool PeerClient::Send(const json& message, Deadline deadline, NetError* error) {
  return connection_.Send(message, deadline, error);
}

std::optional<json> PeerClient::Receive(Deadline deadline, NetError* error) {
  std::optional<json> message = connection_.Receive(deadline, error);
  if (!message || MessageType(*message) != kTypeError) return message;
  ErrorReply reply;
  std::string parse_error;
  if (!FromJson(*message, &reply, &parse_error)) {
    Fail(error, "protocol", "unreadable error reply: " + parse_error);
  } else {
    Fail(error, KnownReason(reply.reason), "peer says: " + reply.message);
    if (reply.retry_after_ms) error->retry_after = std::chrono::milliseconds(*reply.retry_after_ms);
  }
  return std::nullopt;
}

void PeerClient::SendError(const std::string& reason, const std::string& message) {
  NetError ignored;
  connection_.Send(ToJson(ErrorReply{reason, message, std::nullopt}),
                   Deadline::After(*clock_, kErrorSendWait), &ignored);
}

PeerConnectorFunction MakePeerConnector(ClientOptions options) {
  return [options = std::move(options)](const std::string& peer, std::chrono::milliseconds timeout,
                                        std::string* reason,
                                        std::string* message) -> std::unique_ptr<PeerClient> {
    NetError error;
    std::unique_ptr<PeerClient> client = PeerClient::Connect(peer, timeout, options, &error);
    if (client == nullptr) {
      *reason = error.reason;
      *message = error.message;
    }
    return client;
  };
}

PeerConnectorFunction MakePeerConnector(std::shared_ptr<const Secret> secret,
                                        AgentVersions versions,
                                        ReplayCache& seen_responder_nonces) {
  ClientOptions options;
  options.secret = std::move(secret);
  options.versions = std::move(versions);
  options.seen_responder_nonces = &seen_responder_nonces;
  return MakePeerConnector(std::move(options));
}

}  // namespace rail::peer
