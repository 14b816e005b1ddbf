// The responder's bulk gate end to end over loopback: a second run's bulk setup is answered busy
// with a retry hint while the first run's transfer lasts, the sessions of one run are admitted
// together, and nothing overlaps.
#include <gtest/gtest.h>

#include "rail/peer/responder.h"
#include "responder_fixture.h"

namespace rail::peer::testing {
namespace {

class ResponderBusyTest : public ResponderTest {
 protected:
  void StartBulkResponder() {
    auto options = Options();
    options.is_bulk_kind = [](const std::string& kind) { return kind == "fake"; };
    StartResponder(std::move(options));
  }

  std::unique_ptr<PeerClient> Client() {
    NetError error;
    auto client = Connect(ClientWith(secret_), &error);
    EXPECT_NE(client, nullptr) << error.reason << ": " << error.message;
    return client;
  }

  // Sends a bulk setup and returns whether it was admitted; `error` holds the refusal.
  static bool Setup(PeerClient& client, const std::string& run_id, const std::string& rail,
                    NetError* error) {
    ProbeSetup setup = FakeSetup(1.0);
    setup.run_id = run_id;
    setup.rail = rail;
    return client.Request(ToJson(setup), Clock::now() + 2s, error).has_value();
  }

  static void Done(PeerClient& client) {
    NetError error;
    ASSERT_TRUE(client.Request(ToJson(ProbeDone{}), Clock::now() + 2s, &error))
        << error.reason << ": " << error.message;
  }
};

TEST_F(ResponderBusyTest, AnotherRunIsToldBusyWithARetryHintUntilTheFirstEnds) {
  StartBulkResponder();
  auto first = Client();
  auto second = Client();
  ASSERT_TRUE(first && second);
  NetError error;
  ASSERT_TRUE(Setup(*first, "run-1", "rail0", &error)) << error.message;

  EXPECT_FALSE(Setup(*second, "run-2", "rail1", &error));
  EXPECT_EQ(error.reason, "busy");
  ASSERT_TRUE(error.retry_after.has_value());
  // At most the probe's 1 s plus the grace: a bound, not a timing.
  EXPECT_GT(error.retry_after->count(), 0);
  EXPECT_LE(*error.retry_after, 1s + Limits{}.bulk_retry_grace);
  EXPECT_EQ(Errors("busy"), 1u);

  Done(*first);  // the gate is free once the report is back
  auto again = Client();
  ASSERT_TRUE(again);
  ASSERT_TRUE(Setup(*again, "run-2", "rail1", &error)) << error.reason << ": " << error.message;
  Done(*again);
  const ResponderStats stats = responder_->Snapshot();
  EXPECT_EQ(stats.bulk_transfers_total, 2u);
  EXPECT_EQ(stats.bulk_overlaps_total, 0u);
}

TEST_F(ResponderBusyTest, TheSessionsOfOneRunAreAdmittedTogether) {
  StartBulkResponder();
  auto rail0 = Client();
  auto rail1 = Client();
  auto stranger = Client();
  ASSERT_TRUE(rail0 && rail1 && stranger);
  NetError error;
  ASSERT_TRUE(Setup(*rail0, "run-7", "rail0", &error)) << error.message;
  ASSERT_TRUE(Setup(*rail1, "run-7", "rail1", &error)) << error.message;
  EXPECT_FALSE(Setup(*stranger, "run-8", "rail0", &error));
  EXPECT_EQ(error.reason, "busy");
  Done(*rail0);
  Done(*rail1);
  EXPECT_EQ(responder_->Snapshot().bulk_overlaps_total, 0u);
}

TEST_F(ResponderBusyTest, WithoutTheBulkRuleNothingIsGated) {
  StartResponder(Options());  // no is_bulk_kind: nothing is bulk
  auto first = Client();
  auto second = Client();
  ASSERT_TRUE(first && second);
  NetError error;
  ASSERT_TRUE(Setup(*first, "run-1", "rail0", &error)) << error.message;
  ASSERT_TRUE(Setup(*second, "run-2", "rail0", &error)) << error.message;
  Done(*first);
  Done(*second);
  EXPECT_EQ(Errors("busy"), 0u);
  EXPECT_EQ(responder_->Snapshot().bulk_transfers_total, 0u);
}

}  // namespace
}  // namespace rail::peer::testing
