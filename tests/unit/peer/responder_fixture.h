// A responder on 127.0.0.1, port 0, with a fake probe handler, and clients for it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "rail/peer/client.h"
#include "rail/peer/connection.h"
#include "rail/peer/responder.h"
#include "rail/peer/session_messages.h"
#include "support/deadline.h"
#include "support/fake_clock.h"

namespace rail::peer::testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Serves until stopped and reports the kind and rail it was set up for.
class FakeHandler final : public ProbeSessionHandler {
 public:
  bool Setup(const ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
             std::string* message) override {
    if (request.rail == "broken") {
      *reason = "setup";
      *message = "rail broken";
      return false;
    }
    kind_ = request.kind;
    (*reply_fields)["kind"] = request.kind;
    (*reply_fields)["rail"] = request.rail;
    return true;
  }
  void Serve(const std::atomic<bool>& stop) override {
    while (!stop.load()) std::this_thread::sleep_for(2ms);
    served_ = true;
  }
  nlohmann::json Report() override { return {{"served", served_}, {"cpu_seconds", 0.001}}; }

 private:
  std::string kind_;
  bool served_ = false;
};

inline ProbeHandlerFactory FakeFactory() {
  return [](const std::string& kind, const std::string&) -> std::unique_ptr<ProbeSessionHandler> {
    if (kind != "fake") return nullptr;
    return std::make_unique<FakeHandler>();
  };
}

inline ProbeSetup FakeSetup(double seconds = 0.05) {
  ProbeSetup setup;
  setup.kind = "fake";
  setup.rail = "r0";
  setup.message_sizes_bytes = {8};
  setup.duration_seconds = seconds;
  setup.max_bytes = 1024;
  return setup;
}

class ResponderTest : public ::testing::Test {
 protected:
  ResponderOptions Options() const {
    ResponderOptions options;
    options.listen_host = "127.0.0.1";
    options.port = 0;
    options.secret = secret_;
    options.versions = {"responder-1.0", "1.13.1"};
    // Far above what a handshake takes, even under a sanitizer on a loaded machine (300 ms was
    // not); the tests of the deadlines themselves set theirs on stepping_clock_.
    options.handshake_timeout = 10s;
    options.probe_grace = 10s;
    return options;
  }

  void StartResponder(ResponderOptions options) {
    responder_ = std::make_unique<Responder>(std::move(options), FakeFactory());
    std::string error;
    ASSERT_TRUE(responder_->Start(&error)) << error;
    ASSERT_NE(responder_->ListeningPort(), 0);
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(responder_->ListeningPort()); }

  ClientOptions ClientWith(std::shared_ptr<const Secret> secret) {
    ClientOptions options;
    options.secret = std::move(secret);
    options.versions = {"initiator-1.0", "1.12.0"};
    options.seen_responder_nonces = &client_nonces_;
    return options;
  }

  std::unique_ptr<PeerClient> Connect(const ClientOptions& options, NetError* error) {
    return PeerClient::Connect(Address(), 2s, options, error);
  }

  // A raw framed connection, for speaking the protocol badly on purpose.
  Connection Raw() {
    NetError error;
    auto connection = Connection::Connect("127.0.0.1", responder_->ListeningPort(),
                                          rail::test::In(1s), {}, 64 * 1024, &error);
    EXPECT_TRUE(connection) << error.message;
    return std::move(*connection);
  }

  // Counters are updated by session threads; wait for them (bounded).
  bool WaitFor(const std::function<bool(const ResponderStats&)>& condition) {
    const auto deadline = Clock::now() + 3s;
    while (Clock::now() < deadline) {
      if (condition(responder_->Snapshot())) return true;
      std::this_thread::sleep_for(5ms);
    }
    return condition(responder_->Snapshot());
  }

  std::uint64_t Errors(const std::string& reason) {
    const ResponderStats stats = responder_->Snapshot();
    const auto it = stats.errors_by_reason.find(reason);
    return it == stats.errors_by_reason.end() ? 0 : it->second;
  }

  bool WaitForError(const std::string& reason, std::uint64_t count = 1) {
    return WaitFor([&](const ResponderStats& stats) {
      const auto it = stats.errors_by_reason.find(reason);
      return it != stats.errors_by_reason.end() && it->second >= count;
    });
  }

  // Runs one fake probe over an established client.
  static void RunFakeProbe(PeerClient& client, double seconds = 0.05) {
    NetError error;
    auto reply = client.Request(ToJson(FakeSetup(seconds)), rail::test::In(2s), &error);
    ASSERT_TRUE(reply) << error.reason << ": " << error.message;
    ProbeSetupReply setup_reply;
    std::string parse_error;
    ASSERT_TRUE(FromJson(*reply, &setup_reply, &parse_error)) << parse_error;
    EXPECT_EQ(setup_reply.setup["kind"], "fake");
    EXPECT_EQ(setup_reply.versions.agent_version, "responder-1.0");
    auto report = client.Request(ToJson(ProbeDone{}), rail::test::In(2s), &error);
    ASSERT_TRUE(report) << error.reason << ": " << error.message;
    ProbeReport parsed;
    ASSERT_TRUE(FromJson(*report, &parsed, &parse_error)) << parse_error;
    EXPECT_EQ(parsed.report["served"], true);
  }

  std::shared_ptr<const Secret> secret_ = std::make_shared<const Secret>("the right secret");
  base::SteadyClock clock_;
  ReplayCache client_nonces_{clock_, 1024, std::chrono::minutes(10)};
  // Clocks a test may hand the responder (options.clock): declared before it, so that they
  // outlive its sessions.
  rail::test::FakeClock fake_clock_;
  const rail::test::SteppingClock stepping_clock_{std::chrono::hours(1)};
  std::unique_ptr<Responder> responder_;
};

}  // namespace rail::peer::testing
