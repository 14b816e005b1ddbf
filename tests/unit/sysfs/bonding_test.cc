#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "rail/sysfs/netclass.h"
#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using test::FakeFilesystem;
using ::testing::IsEmpty;

using rail::test::kFixtures;
const std::string kBondedSys = kFixtures + "/bonded-roce/sys";
const std::string kBondedProc = kFixtures + "/bonded-roce/proc";

constexpr const char* kXorText =
    "Ethernet Channel Bonding Driver: v6.1.0\n"
    "\n"
    "Bonding Mode: load balancing (xor)\n"
    "Transmit Hash Policy: layer3+4 (1)\n"
    "MII Status: up\n"
    "MII Polling Interval (ms): 100\n"
    "\n"
    "Slave Interface: enp1s0f0np0\n"
    "MII Status: up\n"
    "Speed: 100000 Mbps\n"
    "Duplex: full\n"
    "Link Failure Count: 0\n"
    "Permanent HW addr: 30:c5:99:3e:6a:10\n"
    "Slave queue ID: 0\n"
    "\n"
    "Slave Interface: enp1s0f1np1\n"
    "MII Status: down\n"
    "Speed: Unknown\n"
    "Duplex: Unknown\n"
    "Link Failure Count: 3\n"
    "Permanent HW addr: 30:c5:99:3e:6a:11\n"
    "Slave queue ID: 0";  // no final newline

TEST(ParseProcBonding, BalanceXor) {
  const ProcBond bond = ParseProcBonding(kXorText);
  EXPECT_EQ(bond.mode, "load balancing (xor)");
  EXPECT_EQ(bond.xmit_hash_policy, "layer3+4 (1)");
  EXPECT_EQ(bond.mii_status, "up");
  EXPECT_FALSE(bond.active_slave);
  ASSERT_EQ(bond.slaves.size(), 2u);
  EXPECT_EQ(bond.slaves[0].name, "enp1s0f0np0");
  EXPECT_EQ(bond.slaves[0].mii_status, "up");
  EXPECT_EQ(bond.slaves[0].speed, "100000 Mbps");
  EXPECT_EQ(bond.slaves[0].duplex, "full");
  EXPECT_EQ(bond.slaves[0].link_failure_count, 0u);
  EXPECT_EQ(bond.slaves[0].permanent_hw_addr, "30:c5:99:3e:6a:10");
  EXPECT_EQ(bond.slaves[1].name, "enp1s0f1np1");
  EXPECT_EQ(bond.slaves[1].mii_status, "down");
  EXPECT_EQ(bond.slaves[1].speed, "Unknown");
  EXPECT_EQ(bond.slaves[1].link_failure_count, 3u);
  EXPECT_EQ(bond.slaves[1].permanent_hw_addr, "30:c5:99:3e:6a:11");
}

TEST(ParseProcBonding, ActiveBackupAnd802adNoise) {
  const ProcBond bond = ParseProcBonding(
      "Ethernet Channel Bonding Driver: v5.15.0\n\n"
      "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\n"
      "Transmit Hash Policy: layer2 (0)\n"
      "MII Status: up\n"
      "Currently Active Slave: eth1\n"
      "\n802.3ad info\nLACP active: on\nAggregator selection policy (ad_select): stable\n"
      "Active Aggregator Info:\n\tAggregator ID: 1\n\tNumber of ports: 1\n"
      "\nSlave Interface: eth1\nMII Status: up\nSpeed: 25000 Mbps\nDuplex: full\n"
      "Link Failure Count: 2\nPermanent HW addr: 0c:42:a1:00:00:01\nSlave queue ID: 0\n"
      "Aggregator ID: 1\ndetails actor lacp pdu:\n    system priority: 65535\n"
      "    port state: 61\n");
  EXPECT_EQ(bond.mode, "IEEE 802.3ad Dynamic link aggregation");
  EXPECT_EQ(bond.active_slave, "eth1");
  ASSERT_EQ(bond.slaves.size(), 1u);
  EXPECT_EQ(bond.slaves[0].speed, "25000 Mbps");
  EXPECT_EQ(bond.slaves[0].link_failure_count, 2u);
  EXPECT_EQ(bond.slaves[0].mii_status, "up");
}

TEST(ParseProcBonding, EmptyText) {
  const ProcBond bond = ParseProcBonding("");
  EXPECT_FALSE(bond.mode);
  EXPECT_THAT(bond.slaves, IsEmpty());
}

TEST(ReadBonds, BondedRoceFixture) {
  RootedFilesystem sys(kBondedSys);
  RootedFilesystem proc(kBondedProc);
  ReadErrors errors;
  const auto bonds = ReadBonds(sys, proc, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(bonds.size(), 1u);
  const Bond& bond = bonds[0];
  EXPECT_EQ(bond.name, "bond0");
  EXPECT_EQ(bond.mode, "balance-xor 2");  // sysfs spelling wins over proc's
  EXPECT_EQ(bond.xmit_hash_policy, "layer3+4 1");
  EXPECT_EQ(bond.mii_status, "up");
  EXPECT_EQ(bond.active_slave, "");  // file present and empty: no active slave in xor mode
  EXPECT_EQ(bond.miimon_ms, 100u);
  ASSERT_EQ(bond.slaves.size(), 2u);
  const BondSlave& first = bond.slaves[0];
  EXPECT_EQ(first.name, "enp1s0f0np0");
  EXPECT_EQ(first.state, "active");
  EXPECT_EQ(first.mii_status, "up");
  EXPECT_EQ(first.link_failure_count, 0u);
  EXPECT_EQ(first.perm_hwaddr, "30:c5:99:3e:6a:10");
  EXPECT_EQ(first.queue_id, 0u);
  EXPECT_FALSE(first.ad_aggregator_id);
  EXPECT_EQ(first.proc_speed, "100000 Mbps");
  EXPECT_EQ(first.proc_duplex, "full");
  const BondSlave& second = bond.slaves[1];
  EXPECT_EQ(second.name, "enp1s0f1np1");
  EXPECT_EQ(second.link_failure_count, 1u);
  EXPECT_EQ(second.perm_hwaddr, "30:c5:99:3e:6a:11");
  EXPECT_EQ(second.proc_speed, "100000 Mbps");
}

TEST(ReadBonds, NoBondingModuleIsNoBonds) {
  RootedFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  FakeFilesystem proc;
  ReadErrors errors;
  EXPECT_THAT(ReadBonds(sys, proc, errors), IsEmpty());
  EXPECT_TRUE(errors.empty());
}

TEST(ReadBonds, UnreadableBondingMasters) {
  FakeFilesystem sys;
  sys.FailRead("class/net/bonding_masters", EIO);
  FakeFilesystem proc;
  ReadErrors errors;
  EXPECT_THAT(ReadBonds(sys, proc, errors), IsEmpty());
  EXPECT_EQ(errors.Count(ReadFailure::kIoError), 1u);
}

TEST(ReadBonds, OlderKernelSlaveDirectories) {
  FakeFilesystem sys;
  sys.AddFile("class/net/bonding_masters", "bond1 bond2\n")
      .AddFile("class/net/bond1/bonding/mode", "active-backup 1\n")
      .AddFile("class/net/bond1/bonding/active_slave", "eth1\n")
      .AddFile("class/net/bond1/bonding/slaves", "eth0 eth1\n")
      .AddFile("class/net/bond1/slave_eth0/bonding_slave/state", "backup\n")
      .AddFile("class/net/bond1/slave_eth0/bonding_slave/mii_status", "down\n")
      .AddFile("class/net/bond1/slave_eth0/bonding_slave/link_failure_count", "7\n")
      .AddFile("class/net/bond1/slave_eth1/bonding_slave/state", "active\n")
      .AddFile("class/net/bond2/bonding/mode", "balance-rr 0\n");
  FakeFilesystem proc;
  ReadErrors errors;
  const auto bonds = ReadBonds(sys, proc, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(bonds.size(), 2u);
  EXPECT_EQ(bonds[0].mode, "active-backup 1");
  EXPECT_EQ(bonds[0].active_slave, "eth1");
  ASSERT_EQ(bonds[0].slaves.size(), 2u);
  EXPECT_EQ(bonds[0].slaves[0].state, "backup");
  EXPECT_EQ(bonds[0].slaves[0].mii_status, "down");
  EXPECT_EQ(bonds[0].slaves[0].link_failure_count, 7u);
  EXPECT_EQ(bonds[0].slaves[1].state, "active");
  EXPECT_FALSE(bonds[0].slaves[1].proc_speed);
  EXPECT_EQ(bonds[1].name, "bond2");
  EXPECT_EQ(bonds[1].mode, "balance-rr 0");
  EXPECT_THAT(bonds[1].slaves, IsEmpty());
}

TEST(ReadBonds, ProcFillsWhatSysfsLacks) {
  FakeFilesystem sys;
  sys.AddFile("class/net/bonding_masters", "bond0\n").AddDirectory("class/net/bond0");
  FakeFilesystem proc;
  proc.AddFile("net/bonding/bond0", kXorText);
  ReadErrors errors;
  const auto bonds = ReadBonds(sys, proc, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(bonds.size(), 1u);
  EXPECT_EQ(bonds[0].mode, "load balancing (xor)");
  EXPECT_EQ(bonds[0].xmit_hash_policy, "layer3+4 (1)");
  EXPECT_EQ(bonds[0].mii_status, "up");
  EXPECT_FALSE(bonds[0].miimon_ms);
  ASSERT_EQ(bonds[0].slaves.size(), 2u);
  const BondSlave& second = bonds[0].slaves[1];
  EXPECT_EQ(second.name, "enp1s0f1np1");
  EXPECT_FALSE(second.state);  // proc has no such field
  EXPECT_EQ(second.mii_status, "down");
  EXPECT_EQ(second.link_failure_count, 3u);
  EXPECT_EQ(second.perm_hwaddr, "30:c5:99:3e:6a:11");
  EXPECT_EQ(second.proc_duplex, "Unknown");
}

TEST(ReadBonds, FailuresAreRecordedAndTheRestIsKept) {
  FakeFilesystem sys(kBondedSys);
  sys.FailRead("class/net/bond0/lower_enp1s0f1np1/bonding_slave/state", EACCES)
      .AddFile("class/net/bond0/bonding/miimon", "often\n");
  FakeFilesystem proc;
  proc.FailRead("net/bonding/bond0", EACCES);
  ReadErrors errors;
  const auto bonds = ReadBonds(sys, proc, errors);
  ASSERT_EQ(bonds.size(), 1u);
  EXPECT_FALSE(bonds[0].miimon_ms);
  EXPECT_EQ(bonds[0].mode, "balance-xor 2");
  ASSERT_EQ(bonds[0].slaves.size(), 2u);
  EXPECT_FALSE(bonds[0].slaves[1].state);
  EXPECT_EQ(bonds[0].slaves[1].link_failure_count, 1u);
  EXPECT_FALSE(bonds[0].slaves[1].proc_speed);
  EXPECT_EQ(bonds[0].slaves[0].state, "active");
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 2u);
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 1u);
}

}  // namespace
}  // namespace rail::sysfs
