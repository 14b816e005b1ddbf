// The rails' QoS as the snapshot reads it: Ethernet rails only, once per scrape, and only when
// asked for.
#include <gtest/gtest.h>

#include "rail/inventory/snapshot.h"
#include "rail/nic/dcb.h"
#include "support/fixture_paths.h"

namespace rail::inventory {
namespace {

using rail::test::kFixtures;

// The recorded answers of a tree, counting the requests.
class CountingDcbReader final : public nic::DcbReader {
 public:
  explicit CountingDcbReader(const std::string& tree)
      : recorded_(kFixtures + "/" + tree + "/dcb") {}
  nic::DcbConfig Read(const std::string& netdev) const override {
    ++reads;
    return recorded_.Read(netdev);
  }
  mutable int reads = 0;

 private:
  nic::RecordedDcbReader recorded_;
};

struct Tree {
  explicit Tree(const std::string& name)
      : sys(kFixtures + "/" + name + "/sys"), proc(kFixtures + "/" + name + "/proc"), dcb(name) {
    sources.sys = &sys;
    sources.proc = &proc;
    sources.dcb = &dcb;
    sources.qos = true;
  }
  sysfs::RootedFilesystem sys;
  sysfs::RootedFilesystem proc;
  CountingDcbReader dcb;
  Sources sources;
  sysfs::ReadErrors errors;
};

TEST(RailQosTest, EveryEthernetRailOncePerSnapshot) {
  Tree tree("spark-dual-rail");
  Snapshot snapshot(tree.sources, tree.errors);
  const auto& qos = snapshot.Qos();
  ASSERT_EQ(qos.size(), 4u);
  EXPECT_EQ(snapshot.Qos().size(), 4u);
  EXPECT_EQ(tree.dcb.reads, 4);
  const auto* rail = FindRailQos(qos, "rocep1s0f0:1");
  ASSERT_NE(rail, nullptr);
  EXPECT_EQ(rail->netdev, "enp1s0f0np0");
  EXPECT_EQ(rail->dcb.state, nic::DcbState::kAvailable);
  EXPECT_FALSE(rail->ecn) << "the in-box mlx5 exposes no ECN files";
  EXPECT_EQ(FindRailQos(qos, "no-such-rail"), nullptr);
}

TEST(RailQosTest, InfinibandRailsHaveNoDcb) {
  Tree tree("hgx-8gpu");
  Snapshot snapshot(tree.sources, tree.errors);
  EXPECT_FALSE(snapshot.Rails().empty());
  EXPECT_TRUE(snapshot.Qos().empty());
  EXPECT_EQ(tree.dcb.reads, 0);
}

TEST(RailQosTest, NotAskedNotRead) {
  Tree tree("spark-dual-rail");
  tree.sources.qos = false;
  Snapshot snapshot(tree.sources, tree.errors);
  EXPECT_TRUE(snapshot.Qos().empty());
  EXPECT_EQ(tree.dcb.reads, 0);
}

}  // namespace
}  // namespace rail::inventory
