// The qos collector on the spark-dual-rail tree's recorded DCB answers: its families, the
// qos_config verdicts it enables, and no DCB request at all once it is switched off.
#include <gtest/gtest.h>

#include <atomic>

#include "rail/collectors/collector_set.h"
#include "rail/nic/dcb.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using test::SampleCount;

using rail::test::kSparkTree;

// The recorded answers, counting the requests.
class CountingDcbReader final : public nic::DcbReader {
 public:
  nic::DcbConfig Read(const std::string& netdev) const override {
    ++reads;
    return recorded_.Read(netdev);
  }
  mutable std::atomic<int> reads{0};

 private:
  nic::RecordedDcbReader recorded_{kSparkTree + "/dcb"};
};

struct QosScrape {
  explicit QosScrape(std::vector<std::string> collectors, const sysfs::Filesystem* tree = nullptr) {
    sources.inventory.sys = tree != nullptr ? tree : &sys;
    sources.inventory.proc = &proc;
    sources.inventory.dcb = &dcb;
    families = CollectorSet(sources, collectors).Collect();
  }
  sysfs::RootedFilesystem sys{kSparkTree + "/sys"};
  sysfs::RootedFilesystem proc{kSparkTree + "/proc"};
  CountingDcbReader dcb;
  Sources sources;
  std::vector<prometheus::MetricFamily> families;
};

TEST(QosCollectorTest, PublishesPfcTrustAndDscpMapPerRail) {
  const QosScrape scrape({"qos", "health"});
  EXPECT_EQ(scrape.dcb.reads, 4) << "one request per RoCE rail, once per scrape";
  const test::LabelMap rail = {{"rail", "rocep1s0f0:1"}, {"netdev", "enp1s0f0np0"}};
  auto with = [&](test::LabelMap more) {
    more.insert(rail.begin(), rail.end());
    return more;
  };
  EXPECT_EQ(Sample(scrape.families, "rail_qos_dcb_info", with({{"state", "available"}})), 1);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_pfc_enabled", with({{"priority", "3"}})), 1);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_pfc_enabled", with({{"priority", "4"}})), 0);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_pfc_indications_total", with({{"priority", "3"}})),
            98211);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_trust_info", with({{"trust", "dscp"}})), 1);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_dscp_priority", with({{"dscp", "26"}})), 3);
  EXPECT_EQ(SampleCount(scrape.families, "rail_qos_pfc_enabled"), 4u * 8);
  // The in-box mlx5 exposes no ECN files: no series, rather than "off".
  EXPECT_EQ(SampleCount(scrape.families, "rail_qos_roce_ecn_enabled"), 0u);
  // enP2p1s0f1np1 is left at the driver's defaults: PFC off, unlike its three siblings.
  EXPECT_EQ(Sample(scrape.families, "rail_check_ok",
                   {{"check", "qos_config"}, {"rail", "roceP2p1s0f1:1"}}),
            0);
  EXPECT_EQ(
      Sample(scrape.families, "rail_check_ok", {{"check", "qos_config"}, {"rail", "rocep1s0f0:1"}}),
      1);
}

TEST(QosCollectorTest, EcnWhereTheDriverExposesIt) {
  // MLNX_OFED's files on one rail: ECN on priority 3 at both points, the others off.
  test::FakeFilesystem sys(kSparkTree + "/sys");
  for (unsigned priority = 0; priority < 8; ++priority) {
    const std::string value = priority == 3 ? "1\n" : "0\n";
    sys.AddFile("class/net/enp1s0f0np0/ecn/roce_np/enable/" + std::to_string(priority), value);
    sys.AddFile("class/net/enp1s0f0np0/ecn/roce_rp/enable/" + std::to_string(priority), value);
  }
  const QosScrape scrape({"qos"}, &sys);
  EXPECT_EQ(SampleCount(scrape.families, "rail_qos_roce_ecn_enabled"), 16u);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_roce_ecn_enabled",
                   {{"netdev", "enp1s0f0np0"}, {"point", "notification"}, {"priority", "3"}}),
            1);
  EXPECT_EQ(Sample(scrape.families, "rail_qos_roce_ecn_enabled",
                   {{"netdev", "enp1s0f0np0"}, {"point", "reaction"}, {"priority", "4"}}),
            0);
}

TEST(QosCollectorTest, OffMeansNoRequestAndNoVerdict) {
  const QosScrape scrape({"rails", "health"});
  EXPECT_EQ(scrape.dcb.reads, 0);
  EXPECT_EQ(SampleCount(scrape.families, "rail_qos_dcb_info"), 0u);
  EXPECT_FALSE(Sample(scrape.families, "rail_check_ok", {{"check", "qos_config"}}));
}

}  // namespace
}  // namespace rail::collectors
