#include "rail/health/evidence.h"

#include <gtest/gtest.h>

namespace rail::health {
namespace {

CheckResult Verdict(const std::string& check, const std::string& rail) {
  CheckResult verdict;
  verdict.check = check;
  verdict.rail = rail;
  return verdict;
}

class EvidenceTest : public ::testing::Test {
 protected:
  EvidenceTest() {
    inventory::Rail rail;
    rail.name = "rail0";
    rail.device = "mlx5_0";
    rail.port = 1;
    rail.netdev = "enp1s0f0np0";
    rails_.push_back(rail);
    topology_.devices.push_back({"mlx5_0", "0000:01:00.0", 0, {}});
  }

  std::vector<inventory::Rail> rails_;
  inventory::PcieTopology topology_;
};

TEST_F(EvidenceTest, PortChecksNameTheirPortsFiles) {
  EXPECT_EQ(Evidence(Verdict("port_active", "rail0"), rails_, topology_),
            "sysfs class/infiniband/mlx5_0/ports/1/{state,phys_state}");
  // A rail this host does not have: the class folder, not another rail's files.
  EXPECT_EQ(Evidence(Verdict("port_rate", "rail9"), rails_, topology_), "sysfs class/infiniband/");
}

TEST_F(EvidenceTest, NetdevAndPciChecksNameTheRailsNetdevAndFunction) {
  EXPECT_EQ(Evidence(Verdict("mtu", "rail0"), rails_, topology_),
            "sysfs class/net/enp1s0f0np0/mtu");
  EXPECT_EQ(Evidence(Verdict("pcie_link", "rail0"), rails_, topology_),
            "sysfs bus/pci/devices/0000:01:00.0/{current,max}_link_{speed,width}");
  EXPECT_EQ(Evidence(Verdict("qos_config", "rail0"), rails_, topology_),
            "DCB netlink (dcb pfc show dev enp1s0f0np0; dcb app show dev enp1s0f0np0)");
}

TEST_F(EvidenceTest, ProbeChecksRestOnTheProbeResults) {
  EXPECT_EQ(Evidence(Verdict("probe_throughput", "rail0"), rails_, topology_), "the probe results");
}

}  // namespace
}  // namespace rail::health
