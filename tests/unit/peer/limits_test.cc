#include "rail/peer/limits.h"

#include <gtest/gtest.h>

#include <chrono>

#include "support/fake_clock.h"

namespace rail::peer {
namespace {

using namespace std::chrono_literals;
using test::FakeClock;

TEST(PeerRateLimiter, AllowsTheBurstThenTheSustainedRate) {
  FakeClock clock;
  PeerRateLimiter limiter(clock, /*per_minute=*/6, /*burst=*/3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryAcquire("10.200.0.2").allowed) << i;

  RateDecision refused = limiter.TryAcquire("10.200.0.2");
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, 10s);  // 6 per minute: one token every 10 s
  EXPECT_EQ(refused.error,
            "rate limit: at most 6 probes per minute per peer (burst 3); retry in 10 s");

  clock.Advance(9s);
  EXPECT_FALSE(limiter.TryAcquire("10.200.0.2").allowed);
  clock.Advance(1s);
  EXPECT_TRUE(limiter.TryAcquire("10.200.0.2").allowed);
  EXPECT_FALSE(limiter.TryAcquire("10.200.0.2").allowed);
}

TEST(PeerRateLimiter, RefusedAttemptsDoNotDelayTheNextToken) {
  FakeClock clock;
  PeerRateLimiter limiter(clock, 60, 1);
  EXPECT_TRUE(limiter.TryAcquire("p").allowed);
  for (int i = 0; i < 5; ++i) {
    clock.Advance(100ms);
    EXPECT_FALSE(limiter.TryAcquire("p").allowed);
  }
  clock.Advance(500ms);
  EXPECT_TRUE(limiter.TryAcquire("p").allowed);
}

TEST(PeerRateLimiter, SustainedRateOverAnHourMatchesTheLimit) {
  FakeClock clock;
  PeerRateLimiter limiter(clock, 12, 4);
  int allowed = 0;
  for (int second = 0; second < 3600; ++second) {
    if (limiter.TryAcquire("p").allowed) ++allowed;
    clock.Advance(1s);
  }
  EXPECT_EQ(allowed, 4 + 12 * 60 - 1);  // the burst, then one every 5 s (the last not yet due)
}

TEST(PeerRateLimiter, PeersHaveIndependentBuckets) {
  FakeClock clock;
  PeerRateLimiter limiter(clock, 1, 1);
  EXPECT_TRUE(limiter.TryAcquire("a").allowed);
  EXPECT_FALSE(limiter.TryAcquire("a").allowed);
  EXPECT_TRUE(limiter.TryAcquire("b").allowed);
}

TEST(PeerRateLimiter, TrackedPeersAreBounded) {
  FakeClock clock;
  PeerRateLimiter limiter(clock, 60, 2, /*max_tracked_peers=*/2);
  EXPECT_TRUE(limiter.TryAcquire("a").allowed);
  EXPECT_TRUE(limiter.TryAcquire("b").allowed);
  RateDecision third = limiter.TryAcquire("c");
  EXPECT_FALSE(third.allowed);
  EXPECT_EQ(third.error, "too many peers probing at once (2 tracked); retry later");
  EXPECT_EQ(limiter.tracked_peers(), 2u);

  // Once a bucket has refilled it is forgotten, which makes room.
  clock.Advance(1s);
  EXPECT_TRUE(limiter.TryAcquire("c").allowed);
  EXPECT_EQ(limiter.tracked_peers(), 1u);
}

TEST(Limits, DefaultsAreValid) {
  EXPECT_EQ(ValidateLimits(Limits{}), std::nullopt);
}

TEST(Limits, ValidationNamesTheField) {
  Limits limits;
  limits.max_concurrent_sessions = 0;
  EXPECT_EQ(ValidateLimits(limits), "limits.max_concurrent_sessions must be at least 1");
  limits = Limits{};
  limits.probes_per_minute_per_peer = -1;
  EXPECT_EQ(ValidateLimits(limits), "limits.probes_per_minute_per_peer must be a positive number");
  limits = Limits{};
  limits.max_frame_bytes = 10;
  EXPECT_NE(ValidateLimits(limits)->find("limits.max_frame_bytes"), std::string::npos);
}

TEST(Limits, ServedBudgetMustHoldOneProbeOfTheOtherLimits) {
  Limits limits;
  limits.max_served_bulk_time_fraction_per_rail = 0;
  EXPECT_NE(ValidateLimits(limits)->find("max_served_bulk_time_fraction_per_rail"),
            std::string::npos);
  limits.max_served_bulk_time_fraction_per_rail = 1.5;
  EXPECT_NE(ValidateLimits(limits)->find("at most 1"), std::string::npos);
  // 0.5 % of an hour is 18 s, less than one probe of 30 s.
  limits.max_served_bulk_time_fraction_per_rail = 0.005;
  EXPECT_NE(ValidateLimits(limits)->find("less than one probe"), std::string::npos);
  limits.max_seconds_per_probe = 18;
  EXPECT_EQ(ValidateLimits(limits), std::nullopt);

  limits = Limits{};
  limits.max_served_bytes_per_hour = limits.max_bytes_per_probe - 1;
  EXPECT_NE(ValidateLimits(limits)->find("limits.max_served_bytes_per_hour"), std::string::npos);
  limits.max_served_bytes_per_hour = limits.max_bytes_per_probe;
  EXPECT_EQ(ValidateLimits(limits), std::nullopt);
}

TEST(Limits, ProbeSetupOverLimitsGetsAClearMessage) {
  Limits limits;
  limits.max_bytes_per_probe = 1000;
  limits.max_seconds_per_probe = 5;
  ProbeSetup setup;
  setup.message_sizes_bytes = {8};
  setup.duration_seconds = 5;
  setup.max_bytes = 1000;
  EXPECT_EQ(CheckProbeSetup(limits, setup), std::nullopt);

  setup.max_bytes = 1001;
  EXPECT_EQ(CheckProbeSetup(limits, setup),
            "probe would move up to 1001 bytes; this responder allows at most 1000 bytes per "
            "probe");
  setup.max_bytes = 10;
  setup.duration_seconds = 7.5;
  EXPECT_EQ(CheckProbeSetup(limits, setup),
            "probe would last 7.5 s; this responder allows at most 5 s per probe");
}

TEST(SessionSlots, SlotsAreGivenBackWhenDestroyed) {
  SessionSlots slots(2);
  {
    auto first = slots.TryAcquire();
    auto second = slots.TryAcquire();
    ASSERT_TRUE(first && second);
    EXPECT_FALSE(slots.TryAcquire());
    EXPECT_EQ(slots.in_use(), 2u);
    auto moved = std::move(*first);
    first.reset();  // the moved-from slot gives nothing back
    EXPECT_EQ(slots.in_use(), 2u);
  }
  EXPECT_EQ(slots.in_use(), 0u);
  EXPECT_TRUE(slots.TryAcquire());
}

}  // namespace
}  // namespace rail::peer
