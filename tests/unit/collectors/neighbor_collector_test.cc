// The neighbor collector on the spark-dual-rail tree with lldpd's answers given: the neighbour
// series of a rail lldpd heard, the state of the others, ages on the injected clock, and nothing
// asked of lldpd once the collector is switched off.
#include <gtest/gtest.h>

#include <atomic>

#include "rail/collectors/collector_set.h"
#include "rail/lldp/neighbors.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_clock.h"
#include "support/fixture_paths.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using rail::test::kSparkTree;
using test::Sample;
using test::SampleCount;

class GivenNeighbors final : public lldp::NeighborSource {
 public:
  explicit GivenNeighbors(lldp::Neighbors answer) : answer_(std::move(answer)) {}
  lldp::Neighbors Read() const override {
    ++reads;
    return answer_;
  }
  mutable std::atomic<int> reads{0};

 private:
  lldp::Neighbors answer_;
};

// The fake clock's wall time until it is advanced.
const std::int64_t kWallSeconds =
    std::chrono::duration_cast<std::chrono::seconds>(test::FakeClock().WallNow().time_since_epoch())
        .count();

lldp::Neighbors LeafOnFirstRail(std::int64_t last_change) {
  lldp::Neighbors answer;
  answer.state = lldp::DaemonState::kAnswered;
  answer.socket_path = "/run/lldpd.socket";
  lldp::Neighbor leaf;
  leaf.system_name = "leaf-rail0";
  leaf.chassis_id = "0c:42:a1:00:00:01";
  leaf.port_id = "Ethernet1/7";
  leaf.port_description = "host a rail 0";
  leaf.last_change_epoch_seconds = last_change;
  answer.interfaces["enp1s0f0np0"] = {leaf};
  answer.interfaces["enp1s0f1np1"] = {};
  return answer;
}

struct NeighborScrape {
  NeighborScrape(lldp::Neighbors answer, std::vector<std::string> collectors)
      : lldpd(std::move(answer)) {
    sources.inventory.sys = &sys;
    sources.inventory.proc = &proc;
    sources.inventory.nic_statistics = &nic;
    sources.inventory.lldp = &lldpd;
    sources.inventory.clock = &clock;
    families = CollectorSet(sources, collectors).Collect();
  }
  sysfs::RootedFilesystem sys{kSparkTree + "/sys"};
  sysfs::RootedFilesystem proc{kSparkTree + "/proc"};
  sysfs::RootedFilesystem dumps{kSparkTree + "/ethtool"};
  nic::DumpStatisticsSource nic{dumps};
  GivenNeighbors lldpd;
  test::FakeClock clock;
  Sources sources;
  std::vector<prometheus::MetricFamily> families;
};

TEST(NeighborCollectorTest, HeardRailHasItsSwitchPortAndAge) {
  const NeighborScrape scrape(LeafOnFirstRail(kWallSeconds - 12), {"neighbor"});
  EXPECT_EQ(scrape.lldpd.reads, 1) << "one lldpd request per scrape";
  const test::LabelMap rail = {{"rail", "rocep1s0f0:1"}, {"netdev", "enp1s0f0np0"}};
  auto with = [&](test::LabelMap more) {
    more.insert(rail.begin(), rail.end());
    return more;
  };
  EXPECT_EQ(Sample(scrape.families, "rail_link_neighbor_info",
                   with({{"system_name", "leaf-rail0"},
                         {"chassis_id", "0c:42:a1:00:00:01"},
                         {"port_id", "Ethernet1/7"},
                         {"port_description", "host a rail 0"},
                         {"vlan", ""}})),
            1);
  EXPECT_EQ(
      Sample(scrape.families, "rail_link_neighbor_age_seconds", with({{"port_id", "Ethernet1/7"}})),
      12);
  EXPECT_EQ(Sample(scrape.families, "rail_link_neighbor_source_info",
                   with({{"state", "ok"}, {"remedy", ""}})),
            1);
  EXPECT_EQ(SampleCount(scrape.families, "rail_link_neighbor_info"), 1u);
  EXPECT_EQ(Sample(scrape.families, "rail_link_neighbor_source_info",
                   {{"netdev", "enp1s0f1np1"}, {"state", "no_neighbor"}}),
            1);
}

TEST(NeighborCollectorTest, NoLldpdExportsTheStateAndNoNeighbour) {
  lldp::Neighbors none;
  none.state = lldp::DaemonState::kNotRunning;
  none.error = "no lldpd listens on /run/lldpd.socket";
  const NeighborScrape scrape(none, {"neighbor"});
  EXPECT_EQ(SampleCount(scrape.families, "rail_link_neighbor_info"), 0u);
  EXPECT_EQ(SampleCount(scrape.families, "rail_link_neighbor_age_seconds"), 0u);
  EXPECT_EQ(Sample(scrape.families, "rail_link_neighbor_source_info",
                   {{"rail", "rocep1s0f0:1"},
                    {"state", "no_lldpd"},
                    {"remedy", "apt install lldpd && systemctl enable --now lldpd"}}),
            1);
}

TEST(NeighborCollectorTest, SwitchedOffAsksNothing) {
  const NeighborScrape scrape(LeafOnFirstRail(0), {"netclass"});
  EXPECT_EQ(scrape.lldpd.reads, 0);
  EXPECT_EQ(SampleCount(scrape.families, "rail_link_neighbor_source_info"), 0u);
}

}  // namespace
}  // namespace rail::collectors
