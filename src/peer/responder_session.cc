#include "responder_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "rail/peer/session_messages.h"

namespace rail::peer::detail {

namespace {

using nlohmann::json;

// Bounds the courtesy error reply before a close: the peer may not be reading at all.
constexpr std::chrono::milliseconds kErrorReplyWait{200};

// Runs a handler's Serve on its own thread and always stops and joins it.
class ServeThread {
 public:
  explicit ServeThread(ProbeSessionHandler& handler)
      : thread_([this, &handler] {
          try {
            handler.Serve(stop_);
          } catch (const std::exception& e) {
            spdlog::warn("probe handler failed while serving: {}", e.what());
          }
        }) {}
  ~ServeThread() { Finish(); }
  ServeThread(const ServeThread&) = delete;
  ServeThread& operator=(const ServeThread&) = delete;

  void Finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};  // declared before thread_: it must exist when Serve starts
  std::thread thread_;
};

class Session {
 public:
  Session(const SessionContext& context, base::UniqueFd socket)
      : context_(context),
        connection_(std::move(socket), context.options.limits.max_frame_bytes),
        peer_address_(connection_.peer_address()) {
    connection_.set_cancel_fd(context.stop_fd);
  }

  void Run() {
    if (!Handshake(Deadline::After(context_.clock, context_.options.handshake_timeout))) return;
    context_.stats.SessionStarted(peer_address_, peer_versions_, authenticated_);
    while (true) {
      std::optional<json> message = ReceiveOrRefuse(
          Deadline::After(context_.clock, context_.options.handshake_timeout), "probe_setup");
      if (!message) return;
      if (MessageType(*message) != kTypeProbeSetup) {
        Refuse("protocol", "expected probe_setup, got \"" + MessageType(*message) + "\"");
        return;
      }
      if (!ServeProbe(*message)) return;
    }
  }

 private:
  // Counts `reason` and tells the peer, unless the peer is gone or we are shutting down.
  void Refuse(const std::string& reason, const std::string& message,
              std::optional<std::uint64_t> retry_after_ms = std::nullopt) {
    RefuseCountedAs(reason, reason, message, retry_after_ms);
  }

  // Counts the refusal as `counted` but tells the peer `sent`: a refusal the peer must treat as
  // one it knows (a spent budget is `busy` to the initiator) while our counters tell them apart.
  void RefuseCountedAs(const std::string& counted, const std::string& sent,
                       const std::string& message, std::optional<std::uint64_t> retry_after_ms) {
    context_.stats.Error(counted);
    spdlog::debug("responder: refusing peer {} ({}): {}", peer_address_, counted, message);
    if (sent == "closed" || sent == "io") return;
    NetError ignored;
    connection_.Send(ToJson(ErrorReply{sent, message, retry_after_ms}),
                     Deadline::After(context_.clock, kErrorReplyWait), &ignored);
  }

  // Receives the next message. A failure, or an error message from the peer, is counted and
  // ends the session (nullopt). Only "closed" while waiting between probes is a normal end.
  std::optional<json> ReceiveOrRefuse(Deadline deadline, const char* expected) {
    NetError error;
    std::optional<json> message = connection_.Receive(deadline, &error);
    if (!message) {
      if (error.reason == "cancelled") {
        Refuse("shutdown", "the responder is shutting down");
      } else if (error.reason == "closed" && std::string(expected) == "probe_setup") {
        // The initiator is done with this session.
      } else if (error.reason == "timeout") {
        Refuse("timeout", std::string("no ") + expected + " within the deadline");
      } else {
        Refuse(error.reason, error.message);
      }
      return std::nullopt;
    }
    if (MessageType(*message) == kTypeError) {
      ErrorReply reply;
      std::string parse_error;
      const bool readable = FromJson(*message, &reply, &parse_error);
      context_.stats.Error(readable ? KnownReason(reply.reason) : "peer_error");
      return std::nullopt;
    }
    return message;
  }

  bool Handshake(Deadline deadline) {
    std::optional<json> message = ReceiveOrRefuse(deadline, "hello");
    if (!message) return false;
    Hello hello;
    std::string error;
    if (MessageType(*message) != kTypeHello) {
      Refuse("protocol", "expected hello, got \"" + MessageType(*message) + "\"");
      return false;
    }
    if (!FromJson(*message, &hello, &error)) {
      Refuse("malformed", error);
      return false;
    }
    peer_versions_ = {hello.agent_version, hello.ucx_version};
    const ResponderOptions& options = context_.options;
    const bool secure = options.secret != nullptr;
    if (!secure && !options.insecure) {
      Refuse("auth",
             "this responder has no shared secret and was not started insecure; it refuses "
             "every peer");
      return false;
    }
    if (IsInsecureHello(*message)) {
      if (secure) {
        Refuse("auth", "this responder requires the shared secret; the initiator runs insecure");
        return false;
      }
      authenticated_ = false;
      return SendWelcome(deadline);
    }
    if (!secure) {
      Refuse("auth",
             "this responder runs insecure (no shared secret) and cannot authenticate itself; "
             "run the initiator insecure too, or give both agents the secret");
      return false;
    }
    return SecureHandshake(hello, deadline);
  }

  bool SecureHandshake(const Hello& hello, Deadline deadline) {
    const ResponderOptions& options = context_.options;
    HandshakeResponder responder(options.secret, options.versions, &context_.seen_initiator_nonces);
    std::string error;
    std::optional<Challenge> challenge = responder.OnHello(hello, &error);
    if (!challenge) {
      // auth.cc words a reused nonce as a "replayed handshake"; otherwise OpenSSL failed.
      Refuse(error.find("replayed") != std::string::npos ? "replay" : "internal", error);
      return false;
    }
    NetError net_error;
    if (!connection_.Send(ToJson(*challenge), deadline, &net_error)) {
      Refuse(net_error.reason, net_error.message);
      return false;
    }
    std::optional<json> message = ReceiveOrRefuse(deadline, "response");
    if (!message) return false;
    Response response;
    if (!FromJson(*message, &response, &error)) {
      Refuse("malformed", error);
      return false;
    }
    if (!responder.OnResponse(response, &error)) {
      Refuse("auth", error);
      return false;
    }
    authenticated_ = true;
    return SendWelcome(deadline);
  }

  bool SendWelcome(Deadline deadline) {
    NetError error;
    Welcome welcome{context_.options.versions, authenticated_, {}, context_.options.name};
    if (context_.options.rail_mtus) welcome.rail_mtus = context_.options.rail_mtus();
    if (!connection_.Send(ToJson(welcome), deadline, &error)) {
      Refuse(error.reason, error.message);
      return false;
    }
    return true;
  }

  // One probe from setup to report; false ends the session.
  bool ServeProbe(const json& message) {
    ProbeSetup setup;
    if (!AdmitProbe(message, &setup)) return false;
    std::optional<BulkGate::Pass> bulk_pass;  // held until this probe ends
    if (!AdmitBulk(setup, &bulk_pass)) return false;
    std::optional<std::uint64_t> budget_ticket;  // a bulk probe's charge, settled once it ended
    if (!WithinServedBudget(setup, &budget_ticket)) return false;
    json reply_fields = json::object();
    const std::unique_ptr<ProbeSessionHandler> handler = SetUpHandler(setup, &reply_fields);
    if (handler == nullptr) return false;
    NetError net_error;
    if (!connection_.Send(ToJson(ProbeSetupReply{context_.options.versions, reply_fields}),
                          Deadline::After(context_.clock, context_.options.handshake_timeout),
                          &net_error)) {
      Refuse(net_error.reason, net_error.message);
      return false;
    }
    json measured;
    if (!ServeUntilDone(*handler, setup, bulk_pass, &measured)) return false;
    // The transfer is over: the gate is free before the initiator reads the report, so that a
    // peer that goes on with another bulk probe finds it free.
    bulk_pass.reset();
    json report;
    if (!MakeReport(*handler, &report)) return false;
    // Settled before the report goes out: an initiator that reads it and asks for its next probe
    // at once must find the budget as this one left it.
    if (budget_ticket) {
      if (const auto moved = BytesMoved(measured, report)) {
        context_.served_budget.Settle(*budget_ticket, *moved);
      }
    }
    return SendReport(report);
  }

  // A well-formed probe_setup within this peer's rate and the responder's limits.
  bool AdmitProbe(const json& message, ProbeSetup* setup) {
    std::string error;
    if (!FromJson(message, setup, &error)) {
      Refuse("malformed", error);
      return false;
    }
    const RateDecision rate = context_.rate_limiter.TryAcquire(peer_address_);
    if (!rate.allowed) {
      // With the wait, so that an initiator run by hand can come back in time.
      Refuse("rate", rate.error,
             static_cast<std::uint64_t>(
                 std::chrono::ceil<std::chrono::milliseconds>(rate.retry_after).count()));
      return false;
    }
    if (std::optional<std::string> over = CheckProbeSetup(context_.options.limits, *setup)) {
      Refuse("limit", *over);
      return false;
    }
    return true;
  }

  // A setup passes the gate before its handler is set up (no UCX context, no sink for a probe
  // that cannot run now): a bulk one alone in its scope, a latency one beside other latency
  // ones only (bulk_gate.h); a refused one is answered busy with the gate's retry hint.
  bool AdmitBulk(const ProbeSetup& setup, std::optional<BulkGate::Pass>* pass) {
    const auto& is_bulk = context_.options.is_bulk_kind;
    if (!is_bulk) return true;
    BulkRequest request;
    request.latency = !is_bulk(setup.kind);
    request.run =
        peer_address_ + (setup.run_id.empty() ? " kind " + setup.kind : " run " + setup.run_id);
    request.rails = SplitRails(setup.rail);
    request.expected = std::chrono::duration_cast<base::Duration>(
        std::chrono::duration<double>(setup.duration_seconds));
    base::Duration retry_after{};
    std::optional<BulkGate::Pass> admitted = context_.bulk_gate.TryEnter(request, &retry_after);
    if (admitted) {
      pass->emplace(std::move(*admitted));
      return true;
    }
    const auto retry_ms = std::chrono::ceil<std::chrono::milliseconds>(retry_after).count();
    Refuse(
        "busy",
        "a bulk transfer" + std::string(request.latency ? "" : " or a latency probe") +
            " is running on this " +
            std::string(context_.options.limits.bulk_concurrency == base::BulkConcurrency::kPerRail
                            ? "rail"
                            : "host") +
            "; retry in " + std::to_string(retry_ms) + " ms",
        static_cast<std::uint64_t>(retry_ms));
    return false;
  }

  // A bulk probe past this responder's served-bulk budget (served_budget.h) is answered `busy`
  // with the time until it fits, so that the initiator retries, and counted as "budget".
  bool WithinServedBudget(const ProbeSetup& setup, std::optional<std::uint64_t>* ticket) {
    const auto& is_bulk = context_.options.is_bulk_kind;
    if (!is_bulk || !is_bulk(setup.kind)) return true;
    const BudgetDecision decision = context_.served_budget.TryAdmit(ServedProbeOf(setup));
    if (decision.allowed) {
      *ticket = decision.ticket;
      return true;
    }
    const auto retry_ms =
        std::chrono::ceil<std::chrono::milliseconds>(decision.retry_after).count();
    RefuseCountedAs("budget", "busy",
                    "this responder's served-bulk budget is spent: " + decision.error +
                        "; retry in " + std::to_string(retry_ms) + " ms",
                    static_cast<std::uint64_t>(retry_ms));
    return false;
  }

  // The kind's handler, set up for this probe; nullptr (the peer told why) when there is none.
  std::unique_ptr<ProbeSessionHandler> SetUpHandler(const ProbeSetup& setup, json* reply_fields) {
    std::string reason;
    std::string reason_message;
    try {
      auto handler = context_.factory ? context_.factory(setup.kind, setup.rail) : nullptr;
      if (handler == nullptr) {
        Refuse("unknown_kind", "this responder has no handler for kind \"" + setup.kind +
                                   "\" on rail \"" + setup.rail + "\"");
        return nullptr;
      }
      if (!handler->Setup(setup, reply_fields, &reason, &reason_message)) {
        Refuse(KnownReason(reason.empty() ? "setup" : reason), reason_message);
        return nullptr;
      }
      return handler;
    } catch (const std::exception& e) {
      Refuse("internal", std::string("probe setup failed: ") + e.what());
      return nullptr;
    }
  }

  // Serves the probe until the peer says probe_done (or its time and grace are up).
  // `measured` gets what the initiator says it measured.
  bool ServeUntilDone(ProbeSessionHandler& handler, const ProbeSetup& setup,
                      std::optional<BulkGate::Pass>& bulk_pass, json* measured) {
    const auto probe_time = std::chrono::duration_cast<base::Duration>(
        std::chrono::duration<double>(setup.duration_seconds));
    std::optional<json> done;
    {
      if (bulk_pass) bulk_pass->TransferStarted();
      ServeThread serving(handler);
      done = ReceiveOrRefuse(
          Deadline::After(context_.clock, probe_time + context_.options.probe_grace), "probe_done");
    }  // stops and joins Serve before its Report is read
    if (!done) return false;
    if (MessageType(*done) != kTypeProbeDone) {
      Refuse("protocol", "expected probe_done, got \"" + MessageType(*done) + "\"");
      return false;
    }
    ProbeDone probe_done;
    std::string ignored;
    if (FromJson(*done, &probe_done, &ignored)) *measured = std::move(probe_done.measured);
    return true;
  }

  bool MakeReport(ProbeSessionHandler& handler, json* report) {
    try {
      *report = handler.Report();
    } catch (const std::exception& e) {
      Refuse("internal", std::string("probe report failed: ") + e.what());
      return false;
    }
    return true;
  }

  bool SendReport(const json& report) {
    NetError net_error;
    if (!connection_.Send(ToJson(ProbeReport{report}),
                          Deadline::After(context_.clock, context_.options.handshake_timeout),
                          &net_error)) {
      Refuse(net_error.reason, net_error.message);
      return false;
    }
    context_.stats.ProbeServed(peer_address_);
    return true;
  }

  const SessionContext& context_;
  Connection connection_;
  const std::string peer_address_;
  AgentVersions peer_versions_;
  bool authenticated_ = false;
};

}  // namespace

void RunSession(const SessionContext& context, base::UniqueFd socket) {
  Session session(context, std::move(socket));
  session.Run();
}

void RefuseConnection(base::UniqueFd socket, const std::string& reason, const std::string& message,
                      std::size_t max_frame_bytes, const base::Clock& clock) {
  Connection connection(std::move(socket), max_frame_bytes);
  NetError ignored;
  // A fresh socket's send buffer takes a short reply at once; the wait only guards the rare case.
  connection.Send(ToJson(ErrorReply{reason, message, std::nullopt}),
                  Deadline::After(clock, std::chrono::milliseconds(50)), &ignored);
}

}  // namespace rail::peer::detail
