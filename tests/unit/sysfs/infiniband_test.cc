#include "rail/sysfs/infiniband.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <stdexcept>
#include <string>

#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using test::FakeFilesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using rail::test::kFixtures;
using rail::test::kSparkSys;
const std::string kProcfs = kFixtures + "/procfs-ib/sys";
const std::string kQuirks = kFixtures + "/quirks/sys";
const std::string kBonded = kFixtures + "/bonded-roce/sys";
const std::string kRocePort = "class/infiniband/rocep1s0f0/ports/1/";

const InfinibandDevice& Device(const std::vector<InfinibandDevice>& devices,
                               const std::string& name) {
  auto it = std::find_if(devices.begin(), devices.end(),
                         [&](const InfinibandDevice& d) { return d.name == name; });
  if (it == devices.end()) throw std::runtime_error("no device " + name);
  return *it;
}

std::vector<InfinibandDevice> ReadAll(const Filesystem& fs, ReadErrors& errors) {
  return ReadInfiniband(fs, InfinibandReadOptions{}, errors);
}

std::string Describe(const ReadErrors& errors) {
  std::string out;
  for (const ReadProblem& p : errors.problems()) {
    out += p.path + " " + ReadFailureName(p.failure) + " " + p.detail + "\n";
  }
  return out;
}

TEST(PmaCounterSpecs, ClassicWidthsAndUnits) {
  std::map<std::string, const PmaCounterSpec*> by_name;
  for (const PmaCounterSpec& spec : PmaCounterSpecs()) by_name[spec.file] = &spec;
  const std::map<std::string, unsigned> widths = {
      {"symbol_error", 16},
      {"link_error_recovery", 8},
      {"link_downed", 8},
      {"port_rcv_errors", 16},
      {"port_rcv_remote_physical_errors", 16},
      {"port_rcv_switch_relay_errors", 16},
      {"port_xmit_discards", 16},
      {"port_xmit_constraint_errors", 8},
      {"port_rcv_constraint_errors", 8},
      {"local_link_integrity_errors", 4},
      {"excessive_buffer_overrun_errors", 4},
      {"VL15_dropped", 16},
      {"port_xmit_wait", 32},
      {"port_xmit_data", 32},
      {"port_rcv_data", 32},
      {"port_xmit_packets", 32},
      {"port_rcv_packets", 32},
      {"port_rcv_discards", 16},
      {"unicast_xmit_packets", 64},
      {"unicast_rcv_packets", 64},
      {"multicast_xmit_packets", 64},
      {"multicast_rcv_packets", 64},
  };
  ASSERT_EQ(by_name.size(), widths.size());
  for (const auto& [file, width] : widths) {
    ASSERT_TRUE(by_name.count(file)) << file;
    const PmaCounterSpec& spec = *by_name[file];
    EXPECT_EQ(spec.width_bits, width) << file;
    const bool data = file == "port_xmit_data" || file == "port_rcv_data";
    const bool packets = file == "port_xmit_packets" || file == "port_rcv_packets";
    EXPECT_EQ(spec.unit, data ? 4u : 1u) << file;
    EXPECT_EQ(spec.extended_width, data || packets) << file;
  }
}

TEST(ListInfinibandDevices, SparkFixture) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  EXPECT_THAT(ListInfinibandDevices(fs, errors),
              ElementsAre("roceP2p1s0f0", "roceP2p1s0f1", "rocep1s0f0", "rocep1s0f1"));
  EXPECT_TRUE(errors.empty());
}

TEST(ListInfinibandDevices, NoClassDirectoryIsNoDeviceNotAnError) {
  FakeFilesystem fs;
  fs.AddFile("class/net/lo/mtu", "65536");
  ReadErrors errors;
  EXPECT_THAT(ListInfinibandDevices(fs, errors), IsEmpty());
  EXPECT_TRUE(errors.empty());

  fs.FailList("class/infiniband", EACCES);
  EXPECT_THAT(ListInfinibandDevices(fs, errors), IsEmpty());
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
}

TEST(ReadInfiniband, SparkRail) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  ASSERT_EQ(devices.size(), 4u);

  const InfinibandDevice& dev = Device(devices, "rocep1s0f0");
  EXPECT_EQ(dev.node_guid, "30c5:9903:003e:6a13");
  EXPECT_EQ(dev.sys_image_guid, "30c5:9903:003e:6a13");
  EXPECT_EQ(dev.fw_ver, "28.45.4028");
  EXPECT_EQ(dev.board_id, "NVD0000000087");
  EXPECT_EQ(dev.hca_type, "MT4129");
  EXPECT_EQ(dev.node_type, "1: CA");
  EXPECT_THAT(dev.netdevs, ElementsAre("enp1s0f0np0"));
  ASSERT_EQ(dev.ports.size(), 1u);

  const InfinibandPort& port = dev.ports[0];
  EXPECT_EQ(port.number, 1u);
  ASSERT_TRUE(port.state);
  EXPECT_EQ(port.state->id, 4u);
  EXPECT_EQ(port.state->name, "ACTIVE");
  EXPECT_EQ(port.phys_state->name, "LinkUp");
  EXPECT_TRUE(port.IsActive());
  EXPECT_TRUE(port.IsEthernet());
  ASSERT_TRUE(port.rate);
  EXPECT_DOUBLE_EQ(port.rate->BytesPerSecond(), 12.5e9);
  EXPECT_EQ(port.rate->width_and_speed, "2X HDR");
  EXPECT_EQ(port.lid, 0u);
  EXPECT_EQ(port.sm_lid, 0u);
  EXPECT_TRUE(port.has_extended_counters);

  EXPECT_EQ(port.counters.size(), 21u);
  const PortCounter& xmit = port.counters.at("port_xmit_data");
  EXPECT_EQ(xmit.value, 1193298274412u);  // 298324568603 words
  EXPECT_EQ(xmit.width_bits, 64u);
  EXPECT_FALSE(xmit.saturated);
  EXPECT_EQ(port.counters.at("port_rcv_data").value, 1187011602124u);
  EXPECT_EQ(port.counters.at("port_xmit_packets").value, 1165330346u);
  EXPECT_EQ(port.counters.at("port_xmit_packets").width_bits, 64u);
  EXPECT_EQ(port.counters.at("unicast_rcv_packets").value, 1159191017u);
  EXPECT_EQ(port.counters.at("symbol_error").width_bits, 16u);
  EXPECT_EQ(port.counters.at("port_xmit_wait").width_bits, 32u);
  EXPECT_THAT(port.counters_ext, IsEmpty());

  EXPECT_EQ(port.hw_counters.size(), 30u);
  EXPECT_EQ(port.hw_counters.at("rx_write_requests"), 18208286u);
  EXPECT_EQ(port.hw_counters.at("rx_read_requests"), 9056179u);
  EXPECT_EQ(port.hw_counters.at("np_cnp_sent"), 17u);

  ASSERT_EQ(port.gids.size(), 4u);
  EXPECT_EQ(port.gids[0].index, 0u);
  EXPECT_EQ(port.gids[0].gid.ToString(), "fe80:0000:0000:0000:32c5:99ff:fe3e:6a13");
  EXPECT_EQ(port.gids[0].type, GidType::kIbRoceV1);
  EXPECT_EQ(port.gids[0].netdev, "enp1s0f0np0");
  EXPECT_EQ(port.gids[3].index, 3u);
  EXPECT_EQ(port.gids[3].type, GidType::kRoceV2);
  EXPECT_EQ(port.gids[3].gid.Ipv4(), "192.168.100.11");

  const InfinibandPort& second = Device(devices, "rocep1s0f1").ports.at(0);
  EXPECT_EQ(second.counters.at("port_xmit_data").value, 419917778456u);
  EXPECT_EQ(second.gids.at(3).gid.Ipv4(), "192.168.200.11");
  EXPECT_EQ(Device(devices, "roceP2p1s0f1").ports.at(0).gids.size(), 2u);
}

TEST(ReadInfiniband, CounterFilterReadsOnlyTheNamedCounters) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  InfinibandReadOptions options;
  options.counter_filter = [](std::string_view file) {
    return file == "link_downed" || file == "out_of_sequence";
  };
  const auto devices = ReadInfiniband(fs, options, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  ASSERT_EQ(devices.size(), 4u);
  for (const auto& device : devices) {
    ASSERT_EQ(device.ports.size(), 1u);
    const InfinibandPort& port = device.ports[0];
    EXPECT_EQ(port.counters.size(), 1u) << device.name;
    EXPECT_TRUE(port.counters.contains("link_downed")) << device.name;
    EXPECT_EQ(port.hw_counters.size(), 1u) << device.name;
    EXPECT_TRUE(port.hw_counters.contains("out_of_sequence")) << device.name;
    EXPECT_TRUE(port.state) << "the port's attributes are read as before";
  }
}

TEST(ReadInfiniband, WithoutIdentityOrLinkDetailsThePortsAndCountersAreStillRead) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  InfinibandReadOptions options;
  options.identity = false;
  options.port_link_details = false;
  const auto devices = ReadInfiniband(fs, options, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  const auto full = ReadInfiniband(fs, {}, errors);
  ASSERT_EQ(devices.size(), full.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const InfinibandDevice& device = devices[i];
    EXPECT_FALSE(device.node_guid || device.sys_image_guid || device.fw_ver || device.board_id ||
                 device.hca_type || device.node_type)
        << device.name;
    EXPECT_EQ(device.netdevs, full[i].netdevs) << "rails still find their netdev";
    ASSERT_EQ(device.ports.size(), full[i].ports.size());
    const InfinibandPort& port = device.ports[0];
    EXPECT_FALSE(port.rate || port.lid || port.sm_lid) << device.name;
    EXPECT_EQ(port.IsActive(), full[i].ports[0].IsActive()) << "state and phys_state are read";
    EXPECT_EQ(port.link_layer, full[i].ports[0].link_layer);
    EXPECT_EQ(port.hw_counters, full[i].ports[0].hw_counters);
    EXPECT_EQ(port.gids.size(), full[i].ports[0].gids.size());
  }
  EXPECT_TRUE(full[0].node_guid && full[0].ports[0].rate) << "the full read has them";
}

TEST(RereadCounters, ReadsTheValuesAgainAndFailsWhenOneIsGone) {
  rail::test::FakeFilesystem fs(kSparkSys);
  ReadErrors errors;
  auto devices = ReadInfiniband(fs, {}, errors);
  ASSERT_FALSE(devices.empty());
  const std::string port = "class/infiniband/" + devices[0].name + "/ports/1/";
  fs.AddFile(port + "hw_counters/np_cnp_sent", "1017\n");
  fs.AddFile(port + "counters/port_xmit_data", "100\n");
  const std::size_t reads_before = fs.reads().size();
  ASSERT_TRUE(RereadCounters(fs, devices, errors)) << Describe(errors);
  EXPECT_EQ(devices[0].ports[0].hw_counters.at("np_cnp_sent"), 1017u);
  EXPECT_EQ(devices[0].ports[0].counters.at("port_xmit_data").value, 400u) << "4-byte words";
  std::size_t counter_files = 0;
  for (const auto& device : devices) {
    for (const auto& p : device.ports) {
      counter_files += p.counters.size() + p.counters_ext.size() + p.hw_counters.size();
    }
  }
  EXPECT_EQ(fs.reads().size() - reads_before, counter_files) << "those files and no other";
  fs.Remove(port + "hw_counters/np_cnp_sent");
  EXPECT_FALSE(RereadCounters(fs, devices, errors));
}

TEST(ReadInfiniband, ProcfsFixtureMatchesProcfsExpectations) {
  RootedFilesystem fs(kProcfs);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  ASSERT_EQ(devices.size(), 2u);

  const InfinibandDevice& hfi = Device(devices, "hfi1_0");
  EXPECT_EQ(hfi.board_id,
            "HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Path Adapter");
  EXPECT_EQ(hfi.fw_ver, "1.27.0");
  EXPECT_FALSE(hfi.hca_type);
  EXPECT_FALSE(hfi.node_guid);
  EXPECT_THAT(hfi.netdevs, IsEmpty());
  ASSERT_EQ(hfi.ports.size(), 1u);
  const InfinibandPort& hp = hfi.ports[0];
  EXPECT_TRUE(hp.IsActive());
  EXPECT_DOUBLE_EQ(hp.rate->BytesPerSecond(), 12500000000.0);
  EXPECT_EQ(hp.rate->width_and_speed, "4X EDR");
  EXPECT_FALSE(hp.has_extended_counters);
  EXPECT_FALSE(hp.link_layer);
  EXPECT_EQ(hp.counters.size(), 17u);
  EXPECT_EQ(hp.counters.at("port_rcv_data").value, 1380366808104u);
  EXPECT_EQ(hp.counters.at("port_xmit_data").value, 1094233306172u);
  EXPECT_EQ(hp.counters.at("port_rcv_packets").value, 638036947u);
  EXPECT_EQ(hp.counters.at("port_xmit_packets").value, 568318856u);
  EXPECT_EQ(hp.counters.at("VL15_dropped").value, 0u);
  // 273558326543 words do not fit 32 bits: the driver serves a wider counter.
  EXPECT_EQ(hp.counters.at("port_xmit_data").width_bits, 64u);
  EXPECT_FALSE(hp.counters.at("port_xmit_data").saturated);
  EXPECT_THAT(hp.gids, IsEmpty());
  EXPECT_THAT(hp.hw_counters, IsEmpty());

  const InfinibandDevice& mlx = Device(devices, "mlx4_0");
  EXPECT_EQ(mlx.hca_type, "MT4099");
  EXPECT_EQ(mlx.fw_ver, "2.31.5050");
  EXPECT_EQ(mlx.board_id, "SM_1141000001000");
  ASSERT_EQ(mlx.ports.size(), 2u);
  const InfinibandPort& p1 = mlx.ports[0];
  const InfinibandPort& p2 = mlx.ports[1];
  EXPECT_EQ(p1.number, 1u);
  EXPECT_EQ(p2.number, 2u);
  EXPECT_DOUBLE_EQ(p1.rate->BytesPerSecond(), 5000000000.0);
  EXPECT_EQ(p1.counters.at("port_rcv_data").value, 8884894436u);
  EXPECT_EQ(p1.counters.at("port_rcv_data").width_bits, 32u);
  EXPECT_EQ(p1.counters.at("port_xmit_data").value, 106036453180u);
  EXPECT_EQ(p1.counters.at("port_rcv_packets").value, 87169372u);
  EXPECT_EQ(p1.counters.at("port_xmit_packets").value, 85734114u);
  EXPECT_EQ(p1.counters.at("port_xmit_wait").value, 3599u);
  EXPECT_EQ(p2.counters.at("port_rcv_data").value, 9841747136u);
  EXPECT_EQ(p2.counters.at("port_xmit_data").value, 106161427560u);
  EXPECT_EQ(p2.counters.at("port_rcv_packets").value, 89332064u);
  EXPECT_EQ(p2.counters.at("port_xmit_packets").value, 88622850u);
  EXPECT_EQ(p2.counters.at("port_xmit_wait").value, 3846u);
}

TEST(ReadInfiniband, QuirksSaturatedClassicCounters) {
  RootedFilesystem fs(kQuirks);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  const InfinibandDevice& qib = Device(devices, "qib0");
  EXPECT_FALSE(qib.hca_type);
  EXPECT_FALSE(qib.sys_image_guid);
  EXPECT_EQ(qib.node_type, "1: CA");  // no trailing newline in the file
  EXPECT_EQ(qib.fw_ver, "");          // drivers without firmware print an empty line
  ASSERT_EQ(qib.ports.size(), 2u);
  const InfinibandPort& port = qib.ports[0];
  EXPECT_FALSE(port.has_extended_counters);

  struct Expect {
    const char* file;
    std::uint64_t value;
    unsigned width;
    bool saturated;
  };
  for (const Expect& e : {
           Expect{"port_xmit_data", 4294967295ull * 4, 32, true},
           Expect{"port_rcv_data", 4294967294ull * 4, 32, false},
           Expect{"symbol_error", 65535, 16, true}, Expect{"port_rcv_errors", 65534, 16, false},
           Expect{"link_downed", 255, 8, true}, Expect{"link_error_recovery", 254, 8, false},
           Expect{"local_link_integrity_errors", 15, 4, true},
           Expect{"excessive_buffer_overrun_errors", 14, 4, false},
           Expect{"port_xmit_packets", 123456789, 32, false},  // no trailing newline
       }) {
    ASSERT_TRUE(port.counters.count(e.file)) << e.file;
    const PortCounter& c = port.counters.at(e.file);
    EXPECT_EQ(c.value, e.value) << e.file;
    EXPECT_EQ(c.width_bits, e.width) << e.file;
    EXPECT_EQ(c.saturated, e.saturated) << e.file;
  }
  // "N/A (no PMA)" without a newline: absent, and not an error.
  EXPECT_FALSE(port.counters.count("port_xmit_wait"));
}

TEST(ReadInfiniband, QuirksInfinibandAndDownPorts) {
  RootedFilesystem fs(kQuirks);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  const InfinibandDevice& qib = Device(devices, "qib0");
  const InfinibandPort& up = qib.ports.at(0);
  EXPECT_EQ(up.link_layer, "InfiniBand");
  EXPECT_FALSE(up.IsEthernet());
  EXPECT_EQ(up.lid, 0x12u);  // "0x12" without newline
  EXPECT_EQ(up.sm_lid, 1u);
  EXPECT_TRUE(up.IsActive());  // phys_state "5:LinkUp" has no space
  EXPECT_EQ(up.phys_state->name, "LinkUp");
  EXPECT_DOUBLE_EQ(up.rate->gigabits_per_second, 40);
  ASSERT_EQ(up.gids.size(), 1u);  // slot 1 is empty
  EXPECT_EQ(up.gids[0].gid.ToString(), "fe80:0000:0000:0000:0011:7500:0079:a1b2");
  EXPECT_EQ(up.gids[0].type, GidType::kIbRoceV1);
  EXPECT_FALSE(up.gids[0].netdev);

  const InfinibandPort& down = qib.ports.at(1);
  EXPECT_EQ(down.number, 2u);
  EXPECT_EQ(down.state->id, 1u);
  EXPECT_EQ(down.state->name, "DOWN");
  EXPECT_EQ(down.phys_state->id, 3u);
  EXPECT_EQ(down.phys_state->name, "Disabled");
  EXPECT_FALSE(down.IsActive());
  EXPECT_DOUBLE_EQ(down.rate->BytesPerSecond(), 312500000.0);
  EXPECT_EQ(down.rate->width_and_speed, "1X SDR");
  EXPECT_FALSE(down.lid);
  EXPECT_FALSE(down.sm_lid);
  EXPECT_FALSE(down.counters.count("symbol_error"));  // "N/A (no PMA)\n"
  EXPECT_EQ(down.counters.at("link_downed").value, 3u);
  EXPECT_EQ(down.counters.at("port_xmit_data").value, 0u);
}

TEST(ReadInfiniband, CountersExtIsA64BitCopyNextToPeggedClassicCounters) {
  RootedFilesystem fs(kQuirks);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  const InfinibandPort& port = Device(devices, "qib1").ports.at(0);
  EXPECT_FALSE(port.has_extended_counters);
  const PortCounter& xmit = port.counters.at("port_xmit_data");
  EXPECT_EQ(xmit.width_bits, 32u);
  EXPECT_TRUE(xmit.saturated);
  EXPECT_EQ(xmit.value, 4294967295ull * 4);
  // Error counters keep their classic width whatever the data counters do.
  EXPECT_TRUE(port.counters.at("symbol_error").saturated);

  ASSERT_EQ(port.counters_ext.size(), 8u);
  EXPECT_EQ(port.counters_ext.at("port_xmit_data_64").value, 17179869180ull * 4);
  EXPECT_EQ(port.counters_ext.at("port_rcv_data_64").value, 400u);
  EXPECT_EQ(port.counters_ext.at("port_xmit_packets_64").value, 5000000000u);
  EXPECT_EQ(port.counters_ext.at("port_unicast_xmit_packets").value, 4999999990u);
  EXPECT_EQ(port.counters_ext.at("port_multicast_rcv_packets").value, 2u);
  EXPECT_EQ(port.counters_ext.at("port_xmit_data_64").width_bits, 64u);
}

// Soft-RoCE (rdma_rxe): a virtual device without PMA counters, whose GIDs are RoCE v2 only.
TEST(ReadInfiniband, RxeIsAVirtualDeviceWithoutPma) {
  RootedFilesystem fs(kFixtures + "/rxe-dual-rail/sys");
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  EXPECT_TRUE(errors.problems().empty()) << Describe(errors);
  ASSERT_EQ(devices.size(), 2u);
  const InfinibandDevice& rxe0 = Device(devices, "rxe0");
  EXPECT_TRUE(rxe0.virtual_device);
  EXPECT_TRUE(rxe0.netdevs.empty());
  const InfinibandPort& port = rxe0.ports.at(0);
  EXPECT_TRUE(port.counters.empty());
  EXPECT_TRUE(port.counters_ext.empty());
  EXPECT_EQ(port.hw_counters.at("sent_pkts"), 61877u);
  ASSERT_EQ(port.gids.size(), 2u);
  EXPECT_EQ(port.gids[1].index, 1u);
  EXPECT_EQ(port.gids[1].gid.Ipv4(), "10.200.0.1");
  EXPECT_EQ(rxe0.parent, "eth0");
  // Read with the counters: the parent netdev's statistics stand in for the PMA's.
  EXPECT_EQ(port.netdev_statistics.at("tx_bytes"), 88113452u);
  EXPECT_EQ(port.netdev_statistics.at("rx_packets"), 52410u);
  EXPECT_EQ(PortDataCounterSource(rxe0, port), DataCounterSource::kNetdevStatistics);
  EXPECT_STREQ(DataCounterSourceName(PortDataCounterSource(rxe0, port)), "netdev_statistics");
}

// The PMA's counters/ first, its counters_ext/ copy where the classic counter is narrow; a NIC
// without either has no source (its netdev does not see RDMA traffic).
TEST(ReadInfiniband, DataCounterSourceOfNics) {
  ReadErrors errors;
  RootedFilesystem spark(kSparkSys);
  const auto spark_devices = ReadAll(spark, errors);
  const InfinibandDevice& cx7 = Device(spark_devices, "rocep1s0f0");
  EXPECT_FALSE(cx7.virtual_device);
  EXPECT_EQ(PortDataCounterSource(cx7, cx7.ports.at(0)), DataCounterSource::kCounters);
  RootedFilesystem quirks(kQuirks);
  const auto quirk_devices = ReadAll(quirks, errors);
  const InfinibandDevice& qib1 = Device(quirk_devices, "qib1");
  EXPECT_EQ(PortDataCounterSource(qib1, qib1.ports.at(0)), DataCounterSource::kCountersExt);
  InfinibandPort without_pma = cx7.ports.at(0);
  without_pma.counters.clear();
  EXPECT_EQ(PortDataCounterSource(cx7, without_pma), DataCounterSource::kNone);
  EXPECT_STREQ(DataCounterSourceName(DataCounterSource::kNone), "none");
}

TEST(ReadInfiniband, BondedRoceGidsPointAtTheBond) {
  RootedFilesystem fs(kBonded);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  ASSERT_EQ(devices.size(), 2u);
  for (const InfinibandDevice& dev : devices) {
    const InfinibandPort& port = dev.ports.at(0);
    ASSERT_EQ(port.gids.size(), 4u) << dev.name;
    for (const GidEntry& gid : port.gids) EXPECT_EQ(gid.netdev, "bond0") << dev.name;
    EXPECT_EQ(port.gids[3].gid.Ipv4(), "10.10.0.11");
  }
  EXPECT_THAT(Device(devices, "rocep1s0f1").netdevs, ElementsAre("enp1s0f1np1"));
  // One xor-hashed flow: nearly everything left through the first rail.
  EXPECT_EQ(Device(devices, "rocep1s0f0").ports[0].counters.at("port_xmit_data").value,
            12345678900u);
  EXPECT_EQ(Device(devices, "rocep1s0f1").ports[0].counters.at("port_xmit_data").value, 900u);
}

TEST(ReadInfiniband, CounterErrorsAreRecordedAndTheRestIsKept) {
  FakeFilesystem fs(kSparkSys);
  fs.FailRead(kRocePort + "counters/symbol_error", EINVAL)
      .FailRead(kRocePort + "counters/port_rcv_data", EACCES)
      .FailRead(kRocePort + "hw_counters/out_of_buffer", EIO)
      .AddFile(kRocePort + "counters/link_downed", "12x\n");
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  const InfinibandPort& port = Device(devices, "rocep1s0f0").ports.at(0);
  EXPECT_FALSE(port.counters.count("symbol_error"));
  EXPECT_FALSE(port.counters.count("port_rcv_data"));
  EXPECT_FALSE(port.counters.count("link_downed"));
  EXPECT_EQ(port.counters.at("port_xmit_data").value, 1193298274412u);
  EXPECT_EQ(port.counters.size(), 18u);
  EXPECT_FALSE(port.hw_counters.count("out_of_buffer"));
  EXPECT_EQ(port.hw_counters.size(), 29u);
  EXPECT_EQ(port.gids.size(), 4u);
  EXPECT_TRUE(port.IsActive());

  ASSERT_EQ(errors.problems().size(), 4u) << Describe(errors);
  EXPECT_EQ(errors.Count(ReadFailure::kInvalidArgument), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kIoError), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 1u);
  EXPECT_EQ(errors.problems()[0].path, kRocePort + "counters/symbol_error");
  // Other devices are untouched.
  EXPECT_EQ(Device(devices, "rocep1s0f1").ports.at(0).counters.size(), 21u);
}

TEST(ReadInfiniband, PortAttributeFailures) {
  FakeFilesystem fs(kSparkSys);
  fs.Remove(kRocePort + "state")
      .FailRead(kRocePort + "phys_state", EIO)
      .AddFile(kRocePort + "rate", "fast\n")
      .AddFile(kRocePort + "hw_counters/lifespan", "soon")
      .Remove("class/infiniband/rocep1s0f0/hca_type")
      .Remove(kRocePort + "link_layer")
      .Remove(kRocePort + "lid");
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  const InfinibandDevice& dev = Device(devices, "rocep1s0f0");
  const InfinibandPort& port = dev.ports.at(0);
  EXPECT_FALSE(port.state);
  EXPECT_FALSE(port.phys_state);
  EXPECT_FALSE(port.rate);
  EXPECT_FALSE(port.IsActive());
  EXPECT_FALSE(port.link_layer);
  EXPECT_FALSE(port.lid);
  EXPECT_FALSE(dev.hca_type);
  EXPECT_FALSE(port.hw_counters.count("lifespan"));
  EXPECT_EQ(port.counters.at("port_xmit_data").value, 1193298274412u);
  EXPECT_EQ(dev.fw_ver, "28.45.4028");

  // Optional files (hca_type, link_layer, lid) missing are not errors; state missing is.
  ASSERT_EQ(errors.problems().size(), 4u) << Describe(errors);
  EXPECT_EQ(errors.problems()[0].path, kRocePort + "state");
  EXPECT_EQ(errors.problems()[0].failure, ReadFailure::kMissing);
  EXPECT_EQ(errors.problems()[1].failure, ReadFailure::kIoError);
  EXPECT_EQ(errors.problems()[2].failure, ReadFailure::kMalformed);
  EXPECT_EQ(errors.problems()[2].detail, "fast");
  EXPECT_EQ(errors.problems()[3].path, kRocePort + "hw_counters/lifespan");
}

TEST(ReadInfiniband, UnlistablePortsKeepTheDevice) {
  FakeFilesystem fs(kSparkSys);
  fs.FailList("class/infiniband/rocep1s0f0/ports", EACCES);
  ReadErrors errors;
  const auto devices = ReadAll(fs, errors);
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_THAT(Device(devices, "rocep1s0f0").ports, IsEmpty());
  EXPECT_EQ(Device(devices, "rocep1s0f0").fw_ver, "28.45.4028");
  EXPECT_EQ(Device(devices, "rocep1s0f1").ports.size(), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
}

TEST(ReadInfiniband, DeviceFilterPreventsEveryRead) {
  FakeFilesystem fs(kSparkSys);
  InfinibandReadOptions options;
  options.device_filter = [](const std::string& name) { return name != "rocep1s0f1"; };
  ReadErrors errors;
  const auto devices = ReadInfiniband(fs, options, errors);
  ASSERT_EQ(devices.size(), 3u);
  for (const auto& dev : devices) EXPECT_NE(dev.name, "rocep1s0f1");
  EXPECT_FALSE(fs.WasAccessedUnder("class/infiniband/rocep1s0f1"));
  for (const std::string& path : fs.accessed()) {
    EXPECT_EQ(path.find("rocep1s0f1"), std::string::npos) << path;
  }
  EXPECT_TRUE(fs.WasAccessedUnder("class/infiniband/rocep1s0f0"));  // the check can fail
}

TEST(ReadInfiniband, DisabledOptionsPreventTheirReads) {
  FakeFilesystem fs(kSparkSys);
  InfinibandReadOptions options;
  options.counters = false;
  options.hw_counters = false;
  options.gids = false;
  ReadErrors errors;
  const auto devices = ReadInfiniband(fs, options, errors);
  const InfinibandPort& port = Device(devices, "rocep1s0f0").ports.at(0);
  EXPECT_THAT(port.counters, IsEmpty());
  EXPECT_THAT(port.hw_counters, IsEmpty());
  EXPECT_THAT(port.gids, IsEmpty());
  EXPECT_TRUE(port.IsActive());
  for (const std::string& path : fs.accessed()) {
    for (const char* dir : {"/counters", "/counters_ext", "/hw_counters", "/gids", "/gid_attrs"}) {
      EXPECT_EQ(path.find(dir), std::string::npos) << path;
    }
  }

  options.counters = true;
  FakeFilesystem counted(kSparkSys);
  const auto with_counters = ReadInfiniband(counted, options, errors);
  EXPECT_EQ(Device(with_counters, "rocep1s0f0").ports.at(0).counters.size(), 21u);
  EXPECT_TRUE(counted.WasAccessedUnder(kRocePort + "counters"));
  EXPECT_FALSE(counted.WasAccessedUnder(kRocePort + "hw_counters"));
}

TEST(ReadGidTable, EmptySlotsAttributesAreNeverRead) {
  FakeFilesystem fs(kSparkSys);
  // What a real kernel answers for empty slots.
  for (int i = 4; i < 8; ++i) {
    fs.FailRead(kRocePort + "gid_attrs/types/" + std::to_string(i), EINVAL);
    fs.FailRead(kRocePort + "gid_attrs/ndevs/" + std::to_string(i), EINVAL);
  }
  ReadErrors errors;
  const auto gids = ReadGidTable(fs, "rocep1s0f0", 1, errors);
  EXPECT_EQ(gids.size(), 4u);
  EXPECT_TRUE(errors.empty()) << Describe(errors);
  for (const std::string& path : fs.reads()) {
    EXPECT_EQ(path.find("gid_attrs/types/4"), std::string::npos);
    EXPECT_EQ(path.find("gid_attrs/ndevs/7"), std::string::npos);
  }
  EXPECT_TRUE(std::count(fs.reads().begin(), fs.reads().end(), kRocePort + "gids/7"));
}

TEST(ReadGidTable, AttributeFailureKeepsTheGid) {
  FakeFilesystem fs(kSparkSys);
  fs.FailRead(kRocePort + "gid_attrs/types/1", EINVAL)
      .FailRead(kRocePort + "gid_attrs/ndevs/2", EINVAL)
      .FailRead(kRocePort + "gids/0", EIO);
  ReadErrors errors;
  const auto gids = ReadGidTable(fs, "rocep1s0f0", 1, errors);
  ASSERT_EQ(gids.size(), 3u);
  EXPECT_EQ(gids[0].index, 1u);
  EXPECT_EQ(gids[0].gid.ToString(), "fe80:0000:0000:0000:32c5:99ff:fe3e:6a13");
  EXPECT_FALSE(gids[0].type);
  EXPECT_EQ(gids[0].netdev, "enp1s0f0np0");
  EXPECT_EQ(gids[1].index, 2u);
  EXPECT_EQ(gids[1].type, GidType::kIbRoceV1);
  EXPECT_FALSE(gids[1].netdev);
  EXPECT_EQ(errors.Count(ReadFailure::kInvalidArgument), 2u);
  EXPECT_EQ(errors.Count(ReadFailure::kIoError), 1u);
}

TEST(ReadGidTable, NumericOrderAndInfinibandWithoutNetdev) {
  FakeFilesystem fs;
  const std::string port = "class/infiniband/mlx5_0/ports/1/";
  const char* gid = "fe80:0000:0000:0000:0002:c903:00a1:b2c3\n";
  for (const char* index : {"0", "1", "2", "9", "10"}) {
    fs.AddFile(port + "gids/" + index, gid);
    fs.AddFile(port + "gid_attrs/types/" + index, "IB/RoCE v1\n");
    // InfiniBand GIDs have no netdev: the kernel answers ENODEV.
    fs.FailRead(port + "gid_attrs/ndevs/" + index, ENODEV);
  }
  fs.AddFile(port + "gids/11", "not a gid\n");
  ReadErrors errors;
  const auto gids = ReadGidTable(fs, "mlx5_0", 1, errors);
  ASSERT_EQ(gids.size(), 5u);
  std::vector<unsigned> indices;
  for (const GidEntry& entry : gids) {
    indices.push_back(entry.index);
    EXPECT_FALSE(entry.netdev);
  }
  EXPECT_THAT(indices, ElementsAre(0u, 1u, 2u, 9u, 10u));
  ASSERT_EQ(errors.problems().size(), 1u) << Describe(errors);
  EXPECT_EQ(errors.problems()[0].path, port + "gids/11");
  EXPECT_EQ(errors.problems()[0].failure, ReadFailure::kMalformed);
}

}  // namespace
}  // namespace rail::sysfs
