// A host for the health checks: a fixture tree read the way a scrape reads it, plus addresses and
// probe results the test injects.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "rail/health/checks.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/netclass.h"

namespace rail::health::test {

using inventory::Rail;
using inventory::RailConfig;

// The parts of the agent's configuration the checks see: rails:, discover_rails: and health:.
struct HostConfig {
  std::vector<RailConfig> rails;
  std::optional<bool> discover_rails;
  Thresholds health;
};

// The lab's rails: two netdev-only TCP rails on veths (ra0, ra1), which have no meaningful line
// rate.
inline HostConfig LabConfig() {
  HostConfig config;
  for (const auto* name : {"rail0", "rail1"}) {
    RailConfig rail;
    rail.name = name;
    rail.netdev = std::string("ra") + name[4];
    config.rails.push_back(rail);
  }
  return config;
}

inline constexpr double kGbit = 1e9 / 8;  // bytes per second

struct Host {
  explicit Host(const std::string& tree, HostConfig agent_config = {})
      : sys(std::string(RAIL_FIXTURES) + "/" + tree + "/sys"),
        proc(std::string(RAIL_FIXTURES) + "/" + tree + "/proc"),
        config(std::move(agent_config)) {
    sysfs::ReadErrors errors;
    devices = sysfs::ReadInfiniband(sys, {}, errors);
    rails = inventory::DiscoverRails(
        devices, config.rails, inventory::DiscoverUnlisted(config.rails, config.discover_rails));
    for (const auto& name : sysfs::ListNetDevices(sys, errors)) {
      if (auto device = sysfs::ReadNetDevice(sys, name, errors)) {
        net_devices.push_back(std::move(*device));
      }
    }
    bonds = sysfs::ReadBonds(sys, proc, errors);
  }

  HealthInputs Inputs() const {
    HealthInputs inputs;
    inputs.rails = &rails;
    inputs.devices = &devices;
    inputs.net_devices = &net_devices;
    inputs.bonds = &bonds;
    inputs.addresses = &addresses;
    inputs.probe_series = &series;
    inputs.topology = &topology;
    inputs.peer_memory = &peer_memory;
    if (capabilities) inputs.capabilities = &*capabilities;
    if (qos) inputs.qos = &*qos;
    inputs.thresholds = config.health;
    inputs.own_agent_version = "0.4.0";
    inputs.own_ucx_version = "1.13.1";
    return inputs;
  }

  std::vector<CheckResult> Evaluate() const { return EvaluateChecks(Inputs()); }

  // A successful probe result recorded as its series' latest.
  probe::ProbeResult& AddResult(probe::ProbeKind kind, std::vector<std::string> probe_rails,
                                double bytes_per_second, const std::string& peer = "b") {
    probe::SeriesState state;
    state.key.kind = probe::ProbeKindName(kind);
    state.key.peer = peer;
    state.key.rail = probe::RailLabel(probe_rails);
    state.key.message_size_bytes = 1 << 20;
    state.last.kind = kind;
    state.last.peer = peer;
    state.last.rails = std::move(probe_rails);
    state.last.success = true;
    state.last.message_size_bytes = 1 << 20;
    state.last.throughput_bytes_per_second = bytes_per_second;
    state.last.peer_agent_version = "0.4.0";
    state.last.peer_ucx_version = "1.13.1";
    state.runs = 1;
    series.push_back(std::move(state));
    return series.back().last;
  }

  sysfs::RootedFilesystem sys;
  sysfs::RootedFilesystem proc;
  HostConfig config;
  std::vector<sysfs::InfinibandDevice> devices;
  std::vector<Rail> rails;
  std::vector<sysfs::NetDevice> net_devices;
  std::vector<sysfs::Bond> bonds;
  std::vector<InterfaceAddress> addresses;
  std::vector<probe::SeriesState> series;
  // Hand-built by the GPU checks' tests (the fixture trees' PCI functions are read by
  // inventory::ReadPcieTopology, tested in inventory/).
  inventory::PcieTopology topology;
  sysfs::PeerMemoryState peer_memory;
  std::optional<probe::WorkerCapabilities> capabilities;  // unknown until a test sets it
  std::optional<std::vector<inventory::RailQos>> qos;     // not read until a test sets it
};

// The verdict of `check` for `rail` and `peer`; nullopt when there is none.
inline std::optional<CheckResult> Find(const std::vector<CheckResult>& results,
                                       const std::string& check, const std::string& rail,
                                       const std::string& peer = "") {
  for (const auto& result : results) {
    if (result.check == check && result.rail == rail && result.peer == peer) return result;
  }
  return std::nullopt;
}

inline std::size_t Count(const std::vector<CheckResult>& results, const std::string& check) {
  std::size_t count = 0;
  for (const auto& result : results) count += result.check == check ? 1 : 0;
  return count;
}

// A PCIe link that trained at `speed` x`width` and could train at `max_speed` x`max_width`.
inline inventory::PciLinkState Link(double speed, unsigned width, double max_speed,
                                    unsigned max_width) {
  inventory::PciLinkState state;
  state.link.current_speed_gts = speed;
  state.link.current_width = width;
  state.link.max_speed_gts = max_speed;
  state.link.max_width = max_width;
  state.attainable_speed_gts = max_speed;
  state.attainable_width = max_width;
  return state;
}

inline inventory::Gpu PcieGpu(std::string pci_bus_id, inventory::PciLinkState link) {
  inventory::Gpu gpu;
  gpu.pci_bus_id = std::move(pci_bus_id);
  gpu.attach = inventory::GpuAttach::kPcie;
  gpu.link = std::move(link);
  return gpu;
}

inline inventory::RdmaPciDevice PciDevice(std::string device, std::string pci_bus_id,
                                          inventory::PciLinkState link) {
  inventory::RdmaPciDevice pci;
  pci.device = std::move(device);
  pci.pci_bus_id = std::move(pci_bus_id);
  pci.link = std::move(link);
  return pci;
}

inline RailConfig DeviceRail(std::string name, std::string device, unsigned port = 1) {
  RailConfig rail;
  rail.name = std::move(name);
  rail.device = std::move(device);
  rail.port = port;
  return rail;
}

// The Spark's two ConnectX-7 ports by RDMA device.
inline HostConfig TwoRails() {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  return config;
}

}  // namespace rail::health::test
