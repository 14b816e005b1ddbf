// The rows of the landing page's rail table, from what one scrape read and the latest probes.
#include <algorithm>
#include <set>
#include <sstream>

#include "rail/health/remedies.h"
#include "rail/web/landing_page.h"

namespace rail::web {
namespace {

std::string FormatRate(const sysfs::PortRate& rate) {
  std::ostringstream text;
  text << rate.gigabits_per_second << " Gb/sec";
  if (!rate.width_and_speed.empty()) text << " (" << rate.width_and_speed << ")";
  return text.str();
}

void DescribePortState(const inventory::Rail& rail, const sysfs::InfinibandPort* port,
                       LandingRailRow& row) {
  if (!rail.present || port == nullptr) {
    row.state = "missing";
    return;
  }
  row.healthy_state = rail.active;
  if (rail.active) {
    row.state = "active";
  } else {
    row.state = "down (state " + (port->state ? port->state->name : std::string("?")) + ", phys " +
                (port->phys_state ? port->phys_state->name : std::string("?")) + ")";
  }
  if (port->rate) row.speed = FormatRate(*port->rate);
}

void DescribeNetdevState(const inventory::Rail& rail, const sysfs::NetDevice* net_device,
                         LandingRailRow& row) {
  if (net_device == nullptr) {
    row.state = rail.netdev.empty() ? "no netdev" : "missing";
    return;
  }
  const std::string operstate = net_device->operstate.value_or("unknown");
  row.state = "netdev " + operstate;
  row.healthy_state = operstate == "up";
  if (net_device->speed_mbps && *net_device->speed_mbps > 0) {
    row.speed = std::to_string(*net_device->speed_mbps / 1000) + " Gb/sec";
  }
}

// The RoCE v2 GID that carries the rail's IPv4 address, the one RDMA CM and UCX pick.
std::string RoceGid(const inventory::Rail& rail, const sysfs::InfinibandPort* port) {
  const sysfs::GidEntry* entry = port ? inventory::PortIpv4Gid(*port, rail.netdev) : nullptr;
  if (entry == nullptr) return {};
  return std::to_string(entry->index) + ": " + entry->gid.ToString() + " (RoCE v2)";
}

bool IsSingleRailBulk(const probe::SeriesState& state) {
  // The rail's own figure: host memory (a GPU-memory run says what the GPU path gets).
  // A run whose figures were withheld (probe/figures.h) shows nothing.
  return (state.key.kind == "ucx_throughput" || state.key.kind == "tcp_throughput") &&
         state.key.memory == "host" && state.last.withheld.empty();
}

bool IsPingPong(const probe::SeriesState& state) {
  return (state.key.kind == "ucx_rtt" || state.key.kind == "tcp_rtt") && state.last.rtt &&
         state.last.withheld.empty();
}

std::string SizeText(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string QosText(const inventory::RailQos& qos) {
  const auto& dcb = qos.dcb;
  if (dcb.state != nic::DcbState::kAvailable) {
    return std::string("no DCB (") + nic::DcbStateName(dcb.state) + ")";
  }
  std::string text = dcb.pfc ? "PFC " + dcb.pfc->EnabledText() : std::string("PFC unknown");
  text += std::string(", trust ") + nic::TrustName(dcb.trust());
  if (!dcb.dscp_map.empty()) text += ", " + std::to_string(dcb.dscp_map.size()) + " DSCP";
  return text;
}

// The latest successful result of the rail's series that `wanted` accepts.
const probe::SeriesState* Latest(const std::vector<probe::SeriesState>& series,
                                 const std::string& rail,
                                 bool (*wanted)(const probe::SeriesState&)) {
  const probe::SeriesState* latest = nullptr;
  for (const auto& state : series) {
    if (state.key.rail != rail || !wanted(state) || !state.last.success) continue;
    if (latest == nullptr || state.last.finished_at > latest->last.finished_at) latest = &state;
  }
  return latest;
}

// UCX results that name their lanes: what the endpoint really used.
bool HasLanes(const probe::SeriesState& state) {
  return !state.last.lanes.empty();
}

std::string TransportText(const std::vector<probe::SeriesState>& series, const std::string& rail) {
  const probe::SeriesState* latest = Latest(series, rail, HasLanes);
  if (latest == nullptr) return {};
  std::set<std::string> transports;
  for (const auto& lane : latest->last.lanes) {
    if (lane.rail.empty() || lane.rail == rail) transports.insert(lane.transport);
  }
  std::string text;
  for (const auto& transport : transports) text += (text.empty() ? "" : ", ") + transport;
  const auto& fallback = latest->last.fallback_rails;
  if (std::find(fallback.begin(), fallback.end(), rail) != fallback.end()) text += " (fallback)";
  return text;
}

std::string Width(const std::optional<unsigned>& width) {
  return width ? "x" + std::to_string(*width) : std::string("x?");
}

std::string Speed(const std::optional<double>& gts) {
  if (!gts) return "? GT/s";
  std::ostringstream text;
  text << *gts << " GT/s";
  return text.str();
}

// Width against what the link can train at; the speed as read, marked idle-dependent (a GPU
// lowers it when idle, so only the width says something here).
void DescribeGpuLink(const inventory::Gpu& gpu, LandingGpuRow& row) {
  const auto& state = gpu.link;
  row.link = Width(state.link.current_width) + " (can " + Width(state.attainable_width) + "), " +
             Speed(state.link.current_speed_gts) + " now";
  row.healthy_link = !(state.link.current_width && state.attainable_width &&
                       *state.link.current_width < *state.attainable_width);
}

// The rail's switch port(s) as lldpd heard them, else why none is known.
std::string SwitchPortText(const inventory::RailNeighbors& rail) {
  if (rail.announcements.empty()) return inventory::NeighborStateName(rail.state);
  std::string text;
  for (const auto& announcement : rail.announcements) {
    const auto& neighbor = announcement.neighbor;
    if (!text.empty()) text += ", ";
    text += (neighbor.system_name.empty() ? neighbor.chassis_id : neighbor.system_name) + " port " +
            neighbor.port_id;
  }
  return text;
}

}  // namespace

std::vector<LandingGpuRow> BuildLandingGpuRows(const inventory::PcieTopology& topology) {
  std::vector<LandingGpuRow> rows;
  for (const auto& gpu : topology.gpus) {
    LandingGpuRow row;
    row.pci_bus_id = gpu.pci_bus_id;
    row.attach = inventory::GpuAttachName(gpu.attach);
    if (gpu.attach != inventory::GpuAttach::kPcie) {
      row.nearest = "integrated: no GPUDirect RDMA, pinned host memory is the fast path";
    } else if (const auto* nearest = inventory::NearestDevice(topology, gpu.pci_bus_id)) {
      const auto* path = inventory::FindPath(topology, gpu.pci_bus_id, nearest->device);
      row.nearest = nearest->device + " (" +
                    (path ? inventory::PciPathName(path->path) : std::string("?")) + ")";
      DescribeGpuLink(gpu, row);
    } else {
      row.nearest = "no RDMA device";
      DescribeGpuLink(gpu, row);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<LandingRailRow> BuildLandingRows(const std::vector<inventory::Rail>& rails,
                                             const std::vector<sysfs::InfinibandDevice>& devices,
                                             const std::vector<sysfs::NetDevice>& net_devices,
                                             const std::vector<probe::SeriesState>& series,
                                             const std::vector<health::CheckResult>& checks,
                                             const std::vector<health::InterfaceAddress>& addresses,
                                             const inventory::PcieTopology* topology) {
  std::vector<LandingRailRow> rows;
  rows.reserve(rails.size());
  for (const auto& rail : rails) {
    LandingRailRow row;
    row.rail = rail.name;
    row.netdev = rail.netdev;
    row.ipv4 = rail.ipv4;
    if (rail.device.empty()) {
      DescribeNetdevState(rail, inventory::FindNetDevice(net_devices, rail.netdev), row);
      for (const auto& address : addresses) {
        if (row.ipv4.empty() && address.ifname == rail.netdev) row.ipv4 = address.address;
      }
    } else {
      row.device = rail.device + ":" + std::to_string(rail.port);
      const auto* port = inventory::FindRailPort(devices, rail);
      DescribePortState(rail, port, row);
      row.roce_gid = RoceGid(rail, port);
    }
    if (const auto* bulk = Latest(series, rail.name, IsSingleRailBulk)) {
      row.throughput_bytes_per_second = bulk->last.throughput_bytes_per_second;
      row.throughput_probe =
          bulk->key.kind + " " + SizeText(bulk->key.message_size_bytes) + " to " + bulk->key.peer;
    }
    if (const auto* ping = Latest(series, rail.name, IsPingPong); ping) {
      row.rtt_p50_seconds = ping->last.rtt->p50;
      row.rtt_p99_seconds = ping->last.rtt->p99;
    }
    row.transport = TransportText(series, rail.name);
    for (const auto& check : checks) {
      // A held-back check is listed too: it is not green.
      if ((!check.ok || check.held_back) && check.rail == rail.name) {
        row.failing.push_back(check);
        row.fixes.push_back(check.held_back ? "" : health::Remedy(check, rails, topology));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<health::CheckResult> HostFailingChecks(const std::vector<LandingRailRow>& rows,
                                                   const std::vector<health::CheckResult>& checks) {
  std::set<std::string> shown;
  for (const auto& row : rows) shown.insert(row.rail);
  std::vector<health::CheckResult> host;
  for (const auto& check : checks) {
    if ((!check.ok || check.held_back) && !shown.count(check.rail)) host.push_back(check);
  }
  return host;
}

LandingFleet BuildLandingFleet(const fleet::FleetStatus& status) {
  LandingFleet fleet;
  fleet.self = status.self;
  fleet.peers = status.peers;
  fleet.epoch = status.epoch;
  for (const auto& source : status.sources) {
    fleet.sources.push_back(source.name + ": " + std::to_string(source.targets) + " target(s)" +
                            (source.healthy ? "" : ", failing: " + source.last_error));
  }
  for (const auto& [rail, count] : status.rails) {
    std::string peers;
    for (const auto& pair : status.pairs) {
      if (pair.rail == rail) peers += (peers.empty() ? "" : ", ") + pair.peer;
    }
    fleet.planned.emplace_back(rail, peers.empty() ? "none" : peers);
  }
  return fleet;
}

LandingPage BuildLandingPage(collectors::Scrape& scrape, LandingPage page) {
  const auto& verdicts = scrape.Verdicts();
  std::vector<probe::SeriesState> current;
  if (const auto* store = scrape.results()) {
    for (const auto& state : verdicts.series) {
      if (store->IsCurrent(state)) current.push_back(state);
    }
  }
  page.has_rdma_devices = !scrape.Devices().empty();
  page.rails = BuildLandingRows(scrape.Rails(), scrape.Devices(), scrape.NetDevices(), current,
                                verdicts.checks, verdicts.addresses, &scrape.Topology());
  for (auto& row : page.rails) {
    if (const auto* qos = inventory::FindRailQos(scrape.Qos(), row.rail)) row.qos = QosText(*qos);
    for (const auto& neighbors : scrape.Neighbors()) {
      if (neighbors.rail == row.rail) row.switch_port = SwitchPortText(neighbors);
    }
    row.fabric =
        BuildLandingFabric(row.rail, verdicts.checks, scrape.Fabric(), scrape.NicTemperatures());
  }
  page.host_failing = HostFailingChecks(page.rails, verdicts.checks);
  for (const auto& check : page.host_failing) {
    page.host_fixes.push_back(health::Remedy(check, scrape.Rails(), &scrape.Topology()));
  }
  page.gpus = BuildLandingGpuRows(scrape.Topology());
  if (scrape.sources().fleet) {
    if (const auto status = scrape.sources().fleet()) page.fleet = BuildLandingFleet(*status);
  }
  return page;
}

}  // namespace rail::web
