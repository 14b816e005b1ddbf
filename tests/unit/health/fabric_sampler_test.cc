// The fabric sampler: a baseline at start and samples whenever nobody read the counters for its
// interval, so that a link that flaps after the agent started and before anyone scraped shows on
// the first scrape; the scrapes' own readings go into the same history and put its samples off.
#include "rail/health/fabric_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "rail/health/snapshot_checks.h"
#include "rail/nic/rdma_counters.h"
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
  }

  // A sampler of sources_ into the scrapes' history on `clock`, with the scrapes' interval; a zero
  // interval: the test takes every sample, and every scrape records its reading.
  std::unique_ptr<FabricSampler> Sampler(base::Duration interval = base::Duration::zero(),
                                         const base::Clock* clock = nullptr) {
    context_.thresholds.fabric_sample_interval = interval;
    return std::make_unique<FabricSampler>(sources_, context_.thresholds, context_.counter_history,
                                           clock ? *clock : clock_);
  }

  // A scrape's verdict of `check` on the rail whose netdev flaps, or nullptr.
  std::optional<CheckResult> Verdict(const std::string& check) {
    const auto readings_before = context_.counter_history->Readings();
    sysfs::ReadErrors errors;
    inventory::Snapshot snapshot(sources_, errors);
    const auto checks = EvaluateSnapshot(snapshot, context_, readings_before).checks;
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
  auto sampler = Sampler();
  sampler->Start();  // the baseline: carrier_down_count 3
  EXPECT_EQ(sampler->Samples(), 1u);
  EXPECT_FALSE(Verdict("link_flaps")) << "one sample: nothing to compare with yet";
  clock_.Advance(10s);
  sys_.AddFile(kCarrier, "6\n");  // down and up three times
  // The first scrape.
  const auto verdict = Verdict("link_flaps");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_NE(verdict->reason.find("link went down 3 time(s) in the last 10s (enp1s0f0np0 "
                                 "carrier_down_count)"),
            std::string::npos)
      << verdict->reason;
}

TEST_F(FabricSamplerTest, AScrapeRecordsWhatItReadAndPutsTheNextSampleOff) {
  auto sampler = Sampler(10s);
  sampler->SampleOnce();  // Start() without its thread: the baseline, carrier_down_count 3
  EXPECT_EQ(sampler->NextSampleIn(), 10s);
  clock_.Advance(6s);
  EXPECT_EQ(sampler->NextSampleIn(), 4s);
  sys_.AddFile(kCarrier, "5\n");
  const auto verdict = Verdict("link_flaps");  // a scrape's reading at 6 s
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok) << "the scrape judged on its own reading";
  EXPECT_EQ(context_.counter_history->Readings(), 2u);
  EXPECT_EQ(sampler->NextSampleIn(), 10s) << "nobody needs to read again for the interval";
  // A scrape within half the interval of the latest reading shares it: no sample a scrape.
  clock_.Advance(4s);
  sys_.AddFile(kCarrier, "9\n");
  EXPECT_NE(Verdict("link_flaps")->reason.find("2 time(s)"), std::string::npos);
  EXPECT_EQ(context_.counter_history->Readings(), 2u);
  EXPECT_EQ(sampler->NextSampleIn(), 6s);
  clock_.Advance(1s);
  EXPECT_NE(Verdict("link_flaps")->reason.find("6 time(s)"), std::string::npos)
      << "half the interval after the latest reading, the scrape's is recorded";
  EXPECT_EQ(context_.counter_history->Readings(), 3u);
  EXPECT_EQ(sampler->Samples(), 1u);
}

// A scrape that read while the sampler's reading was recorded is not recorded: it may hold older
// values under a later time, which would look like a reset and lose the rise.
TEST_F(FabricSamplerTest, OfTwoReadingsAtOnceTheSecondIsNotRecorded) {
  auto sampler = Sampler();
  sampler->SampleOnce();  // carrier_down_count 3
  clock_.Advance(10s);
  sys_.AddFile(kCarrier, "6\n");
  const auto scrape_began = context_.counter_history->Readings();
  sysfs::ReadErrors errors;
  inventory::Snapshot scrape(sources_, errors);
  scrape.NetDevices();  // the scrape reads 6 ...
  sys_.AddFile(kCarrier, "7\n");
  sampler->SampleOnce();  // ... the sampler reads 7 and records it first
  clock_.Advance(1s);
  EvaluateSnapshot(scrape, context_, scrape_began);
  EXPECT_EQ(context_.counter_history->Readings(), 2u) << "the scrape's reading was recorded";
  const auto rise = context_.counter_history->Delta("carrier_down_count/rocep1s0f0:1/enp1s0f0np0",
                                                    Thresholds{}.fabric_window);
  ASSERT_TRUE(rise) << "a reset was seen";
  EXPECT_EQ(rise->increase, 4.0);
}

// Passes every call to the fixture tree and remembers which files were read.
class RecordingFilesystem final : public sysfs::Filesystem {
 public:
  explicit RecordingFilesystem(const sysfs::Filesystem& base) : base_(base) {}
  int ReadFile(std::string_view path, std::string* contents) const override {
    read.emplace_back(path);
    return base_.ReadFile(path, contents);
  }
  int ListDirectory(std::string_view path, std::vector<std::string>* names) const override {
    return base_.ListDirectory(path, names);
  }
  bool IsDirectory(std::string_view path) const override { return base_.IsDirectory(path); }
  bool Exists(std::string_view path) const override { return base_.Exists(path); }
  int ResolvePath(std::string_view path, std::string* resolved) const override {
    return base_.ResolvePath(path, resolved);
  }
  int LinkTargetName(std::string_view path, std::string* name) const override {
    return base_.LinkTargetName(path, name);
  }
  mutable std::vector<std::string> read;

 private:
  const sysfs::Filesystem& base_;
};

// A sample reads what its history records and no other counter: on a large host the scrapes'
// ~3,000 counter files every interval would cost more than the scrapes.
TEST_F(FabricSamplerTest, ASampleReadsOnlyTheCountersItRecords) {
  RecordingFilesystem recording(sys_);
  sources_.sys = &recording;
  auto sampler = Sampler();
  sampler->SampleOnce();
  const auto sampled = nic::FabricHwCounterFiles();
  // What a device is, a port's rate and LIDs and a netdev's link attributes: the scrapes' reads.
  const std::vector<std::string> scrapes_only = {
      "node_guid",       "sys_image_guid", "fw_ver",  "board_id",
      "hca_type",        "node_type",      "rate",    "lid",
      "sm_lid",          "operstate",      "carrier", "mtu",
      "speed",           "address",        "type",    "carrier_changes",
      "carrier_up_count"};
  std::size_t hw_counters = 0, link_downed = 0;
  for (const std::string& path : recording.read) {
    EXPECT_EQ(path.find("/statistics/"), std::string::npos) << path;
    const std::string name = path.substr(path.rfind('/') + 1);
    EXPECT_EQ(std::find(scrapes_only.begin(), scrapes_only.end(), name), scrapes_only.end())
        << path;
    if (path.find("/hw_counters/") != std::string::npos) {
      ++hw_counters;
      EXPECT_NE(std::find(sampled.begin(), sampled.end(), name), sampled.end()) << path;
    } else if (path.find("/counters/") != std::string::npos) {
      EXPECT_EQ(name, "link_downed") << path;
      ++link_downed;
    }
  }
  EXPECT_GE(hw_counters, 4u * 8) << "each port carries the loss and CNP counters";
  EXPECT_EQ(link_downed, 4u) << "one a port: the spark tree has four RDMA devices";
  clock_.Advance(10s);
  sys_.AddFile(kCarrier, "4\n");
  sampler->SampleOnce();
  const auto verdict = Verdict("link_flaps");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok) << "carrier_down_count is still read";
}

const std::string kOutOfSequence =
    "class/infiniband/rocep1s0f0/ports/1/hw_counters/out_of_sequence";

// Between two discoveries a sample lists nothing, reads no port attribute and no GID, and still
// records what the counters say.
TEST_F(FabricSamplerTest, BetweenDiscoveriesASampleRereadsTheCounterValuesAlone) {
  auto sampler = Sampler();
  sampler->Start();
  EXPECT_EQ(sampler->Discoveries(), 1u);
  const std::size_t before = sys_.accessed().size();
  clock_.Advance(10s);
  sys_.AddFile(kOutOfSequence, "12\n");
  sampler->SampleOnce();
  EXPECT_EQ(sampler->Discoveries(), 1u);
  bool reread = false;
  for (std::size_t i = before; i < sys_.accessed().size(); ++i) {
    const std::string& path = sys_.accessed()[i];
    EXPECT_NE(path, "class/infiniband") << "no device listing";
    EXPECT_FALSE(path.ends_with("/ports") || path.ends_with("/state") ||
                 path.find("/gids/") != std::string::npos)
        << path;
    reread = reread || path == kOutOfSequence;
  }
  EXPECT_TRUE(reread);
  // The history's key for a port counter: hw_counters/<rail>/<file>.
  const auto rise = context_.counter_history->Delta("hw_counters/rocep1s0f0:1/out_of_sequence",
                                                    Thresholds{}.fabric_window);
  ASSERT_TRUE(rise);
  EXPECT_EQ(rise->increase, 10.0) << "2 at the discovery, 12 at the re-read";
  clock_.Advance(FabricSampler::kRediscoverAfter);
  sampler->SampleOnce();
  EXPECT_EQ(sampler->Discoveries(), 2u) << "the rails found again after a minute";
}

TEST_F(FabricSamplerTest, ACounterThatCannotBeReadAgainFindsTheRailsAgain) {
  auto sampler = Sampler();
  sampler->Start();
  clock_.Advance(10s);
  sys_.Remove(kOutOfSequence);  // a device re-created without it, or gone
  sampler->SampleOnce();
  EXPECT_EQ(sampler->Discoveries(), 2u);
  clock_.Advance(10s);
  sampler->SampleOnce();
  EXPECT_EQ(sampler->Discoveries(), 2u) << "what the new discovery found reads again";
}

// On the system's clock: the thread waits until a sample is due on the sampler's clock.
TEST_F(FabricSamplerTest, ItsThreadSamplesAndStopsAtOnce) {
  auto sampler = Sampler(1ms, &base::SystemClock());
  sampler->Start();
  while (sampler->Samples() < 3) std::this_thread::yield();
  sampler->Stop();
  const auto taken = sampler->Samples();
  sampler->Stop();  // idempotent
  EXPECT_EQ(sampler->Samples(), taken) << "no sample after Stop";
}

TEST_F(FabricSamplerTest, AStopDuringALongIntervalDoesNotWaitItOut) {
  auto sampler = Sampler(std::chrono::hours(1));
  sampler->Start();
  sampler->Stop();  // would block for an hour (and ctest's timeout fail it) if it waited
  EXPECT_EQ(sampler->Samples(), 1u);
}

}  // namespace
}  // namespace rail::health
