// The responder's bulk gate end to end over loopback: a second run's bulk setup is answered busy
// with a retry hint while the first run's transfer lasts, the sessions of one run are admitted
// together, and nothing overlaps.
#include <gtest/gtest.h>

#include "rail/peer/responder.h"
#include "responder_fixture.h"
#include "support/deadline.h"
#include "support/fake_clock.h"

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
    return client.Request(ToJson(setup), rail::test::In(2s), error).has_value();
  }

  static void Done(PeerClient& client) {
    NetError error;
    ASSERT_TRUE(client.Request(ToJson(ProbeDone{}), rail::test::In(2s), &error))
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

// The served-bulk budget over loopback: past it a bulk setup is answered `busy` (what initiators
// retry) with the time until it fits, and counted as "budget"; the clock is fake so the hour can
// pass.
class ResponderBudgetTest : public ResponderBusyTest {
 protected:
  void StartBudgetResponder(double fraction, std::uint64_t bytes_per_hour) {
    auto options = Options();
    options.is_bulk_kind = [](const std::string& kind) { return kind == "fake"; };
    options.clock = &fake_clock_;
    options.limits.max_seconds_per_probe = 2;
    options.limits.max_bytes_per_probe = 1024;
    options.limits.max_served_bulk_time_fraction_per_rail = fraction;
    options.limits.max_served_bytes_per_hour = bytes_per_hour;
    StartResponder(std::move(options));
  }

  // One whole bulk probe of FakeSetup (1024 bytes declared) lasting `seconds`, which says it
  // moved `bytes` when given; false with `error` when refused.
  bool Probe(const std::string& rail, double seconds, std::optional<std::uint64_t> bytes,
             NetError* error) {
    auto client = Client();
    if (!client) return false;
    ProbeSetup setup = FakeSetup(seconds);
    setup.rail = rail;
    if (!client->Request(ToJson(setup), rail::test::In(2s), error)) return false;
    ProbeDone done;
    if (bytes) done.measured["bytes"] = *bytes;
    return client->Request(ToJson(done), rail::test::In(2s), error).has_value();
  }
};

TEST_F(ResponderBudgetTest, ARailPastItsTimeFractionAnswersBusyCountedAsBudget) {
  StartBudgetResponder(/*fraction=*/3.0 / 3600, /*bytes_per_hour=*/1 << 20);  // 3 s per hour
  NetError error;
  ASSERT_TRUE(Probe("rail0", 2.0, std::nullopt, &error)) << error.reason << ": " << error.message;
  fake_clock_.Advance(10min);

  EXPECT_FALSE(Probe("rail0", 2.0, std::nullopt, &error));
  EXPECT_EQ(error.reason, "busy");
  EXPECT_NE(error.message.find("budget"), std::string::npos) << error.message;
  ASSERT_TRUE(error.retry_after.has_value());
  EXPECT_EQ(*error.retry_after, 50min);
  EXPECT_EQ(Errors("budget"), 1u);
  EXPECT_EQ(Errors("busy"), 0u);

  ASSERT_TRUE(Probe("rail1", 2.0, std::nullopt, &error)) << error.message;  // its own budget
  fake_clock_.Advance(50min);
  EXPECT_TRUE(Probe("rail0", 2.0, std::nullopt, &error)) << error.message;
  EXPECT_EQ(responder_->Snapshot().bulk_transfers_total, 3u);
}

TEST_F(ResponderBudgetTest, TheHostsBytesAreSettledToWhatTheProbeSaysItMoved) {
  StartBudgetResponder(/*fraction=*/1.0, /*bytes_per_hour=*/1536);  // FakeSetup declares 1024
  NetError error;
  ASSERT_TRUE(Probe("rail0", 0.05, 100, &error)) << error.message;
  // Charged 1024 + 1024 without the settlement; 100 + 1024 with it.
  ASSERT_TRUE(Probe("rail1", 0.05, std::nullopt, &error)) << error.message;
  EXPECT_FALSE(Probe("rail2", 0.05, std::nullopt, &error));
  EXPECT_EQ(error.reason, "busy");
  EXPECT_NE(error.message.find("bytes"), std::string::npos) << error.message;
  EXPECT_EQ(Errors("budget"), 1u);
}

TEST_F(ResponderBudgetTest, LatencyProbesAreNotCharged) {
  auto options = Options();
  options.is_bulk_kind = [](const std::string&) { return false; };
  options.clock = &fake_clock_;
  options.limits.max_seconds_per_probe = 2;
  options.limits.max_served_bulk_time_fraction_per_rail = 3.0 / 3600;
  StartResponder(std::move(options));
  NetError error;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(Probe("rail0", 2.0, std::nullopt, &error)) << i << ": " << error.message;
  }
  EXPECT_EQ(Errors("budget"), 0u);
}

}  // namespace
}  // namespace rail::peer::testing
