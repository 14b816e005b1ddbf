// The fabric sampler: a baseline at start and samples on its own cadence, so that a link that
// flaps after the agent started and before anyone scraped shows on the first scrape, and a scrape
// that does not sample (observe_fabric off) judges the sampler's evidence alone.
#include "rail/health/fabric_sampler.h"

#include <gtest/gtest.h>

#include "rail/health/snapshot_checks.h"
#include "support/fake_clock.h"
#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::health {
namespace {

using namespace std::chrono_literals;

using rail::test::kSparkTree;
const std::string kCarrier = "class/net/enp1s0f0np0/carrier_down_count";

class FabricSamplerTest : public ::testing::Test {
 protected:
  FabricSamplerTest() : sys_(kSparkTree + "/sys"), proc_(kSparkTree + "/proc") {
    sources_.sys = &sys_;
    sources_.proc = &proc_;
    sys_.AddFile(kCarrier, "3\n");
    context_.clock = &clock_;
    context_.observe_fabric = false;
  }

  // A scrape's verdict of `check` on the rail whose netdev flaps, or nullptr.
  std::optional<CheckResult> Verdict(const std::string& check) {
    sysfs::ReadErrors errors;
    inventory::Snapshot snapshot(sources_, errors);
    const auto checks = EvaluateSnapshot(snapshot, context_).checks;
    for (const auto& result : checks) {
      if (result.check == check && result.reason.find("enp1s0f0np0") != std::string::npos) {
        return result;
      }
      if (result.check == check && result.ok && result.rail == "rocep1s0f0:1") return result;
    }
    return std::nullopt;
  }

  rail::test::FakeFilesystem sys_;
  sysfs::RootedFilesystem proc_;
  rail::test::FakeClock clock_;
  inventory::Sources sources_;
  Context context_;
};

TEST_F(FabricSamplerTest, AFlapBeforeTheFirstScrapeShowsOnIt) {
  Thresholds thresholds;
  thresholds.fabric_sample_interval = base::Duration::zero();  // samples taken by the test
  FabricSampler sampler(sources_, thresholds, context_.counter_history, clock_);
  sampler.Start();  // the baseline: carrier_down_count 3
  EXPECT_EQ(sampler.Samples(), 1u);
  EXPECT_FALSE(Verdict("link_flaps")) << "one sample: nothing to compare with yet";
  clock_.Advance(10s);
  sys_.AddFile(kCarrier, "6\n");  // down and up three times
  sampler.SampleOnce();
  // The first scrape, which samples nothing itself.
  const auto verdict = Verdict("link_flaps");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_NE(verdict->reason.find("link went down 3 time(s) in the last 10s (enp1s0f0np0 "
                                 "carrier_down_count)"),
            std::string::npos)
      << verdict->reason;
}

TEST_F(FabricSamplerTest, ScrapesThatDoNotSampleChangeNothing) {
  Thresholds thresholds;
  thresholds.fabric_sample_interval = base::Duration::zero();
  FabricSampler sampler(sources_, thresholds, context_.counter_history, clock_);
  sampler.Start();
  clock_.Advance(10s);
  sampler.SampleOnce();
  const auto once = Verdict("link_flaps");
  ASSERT_TRUE(once);
  EXPECT_TRUE(once->ok);
  // Scrape after scrape while the counter rises: no sample, no new evidence.
  sys_.AddFile(kCarrier, "9\n");
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(1s);
    EXPECT_TRUE(Verdict("link_flaps")->ok);
  }
  sampler.SampleOnce();
  EXPECT_FALSE(Verdict("link_flaps")->ok) << "the sampler's next sample sees the flaps";
}

TEST_F(FabricSamplerTest, ItsThreadSamplesAndStopsAtOnce) {
  Thresholds thresholds;
  thresholds.fabric_sample_interval = 1ms;
  FabricSampler sampler(sources_, thresholds, context_.counter_history, clock_);
  sampler.Start();
  while (sampler.Samples() < 3) std::this_thread::yield();
  sampler.Stop();
  const auto taken = sampler.Samples();
  sampler.Stop();  // idempotent
  EXPECT_EQ(sampler.Samples(), taken) << "no sample after Stop";
}

TEST_F(FabricSamplerTest, AStopDuringALongIntervalDoesNotWaitItOut) {
  Thresholds thresholds;
  thresholds.fabric_sample_interval = std::chrono::hours(1);
  FabricSampler sampler(sources_, thresholds, context_.counter_history, clock_);
  sampler.Start();
  sampler.Stop();  // would block for an hour (and ctest's timeout fail it) if it waited
  EXPECT_EQ(sampler.Samples(), 1u);
}

}  // namespace
}  // namespace rail::health
