// The landing page at "/": a live, server-rendered table of the rails with their state, speed,
// RoCE v2 GID, last probe figures and failing checks. Building the rows (from a scrape's
// snapshot, the probe results and the check verdicts) is apart from rendering them, so both are
// tested without a server.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/collectors/collector.h"
#include "rail/health/checks.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/inventory/rails.h"
#include "rail/probe/result_store.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"

namespace rail::web {

// What one fabric check says of a rail, for the page's fabric column: its state only (the failing
// checks column holds the reasons).
struct LandingFabricCheck {
  std::string check;  // "pfc_pause"
  std::string label;  // "pause"
  // "ok", "failing"; with no verdict, "no verdict" where the rail's counters were read (a first
  // sample, or the driver lists none of the check's counters) and "not read" where they were not.
  std::string state;
};

struct LandingRailRow {
  std::string rail;
  std::string device;  // "mlx5_0:1", "" for netdev-only rails
  std::string netdev;
  std::string state;  // "active", "down (state 1: DOWN, phys 3: Disabled)", "missing", "netdev up"
  bool healthy_state = false;
  std::string speed;     // "100 Gb/sec (2X HDR)", netdev speed for netdev-only rails, or ""
  std::string roce_gid;  // "3: ::ffff:10.0.0.1 (RoCE v2)", or "" when none
  std::string ipv4;
  std::optional<double> throughput_bytes_per_second;  // latest current single-rail bulk probe
  std::string throughput_probe;                       // "ucx_throughput put 1 MiB to peer-b"
  std::optional<double> rtt_p50_seconds;              // latest current ping-pong probe
  std::optional<double> rtt_p99_seconds;
  std::string transport;  // "rc_mlx5", "tcp (fallback)", ""
  // "PFC 3, trust dscp, 2 DSCP", "no DCB (not_supported)", or "" when not read (qos collector off)
  std::string qos;
  // "leaf-rail0 port Ethernet1/7" as lldpd heard it, else the state ("no_lldpd", ...), or "" when
  // not read (neighbor collector off)
  std::string switch_port;
  std::vector<LandingFabricCheck> fabric;    // pause, storms, ECN/CNP, drops, flaps, FEC, temp
  std::vector<health::CheckResult> failing;  // this rail's failing checks
  std::vector<std::string> fixes;            // health::Remedy of each failing check, same order
};

// A GPU and its path to the rails (inventory::PcieTopology).
struct LandingGpuRow {
  std::string pci_bus_id;
  std::string attach;  // "pcie", "c2c"
  std::string link;    // "x16 (can x16), 2.5 GT/s idle", "" for C2C GPUs
  bool healthy_link = true;
  std::string nearest;  // "mlx5_0 (PIX)", "integrated: pinned host memory", "no RDMA device"
};

// The fleet: who this agent is among the discovered targets and whom it probes this epoch.
struct LandingFleet {
  std::string self;  // empty: not found among the targets
  std::size_t peers = 0;
  std::uint64_t epoch = 0;
  std::vector<std::string> sources;  // "file_sd:/etc/peers.json: 4 targets" or "...: failing: why"
  std::vector<std::pair<std::string, std::string>> planned;  // rail, its planned peers joined
};

struct LandingPage {
  std::string version;
  std::string revision;
  std::string ucx_version;
  std::string telemetry_path;
  std::string sysfs_root;
  bool has_rdma_devices = false;
  std::vector<LandingRailRow> rails;
  std::vector<health::CheckResult> host_failing;  // failing checks not tied to one rail
  std::vector<std::string> host_fixes;            // health::Remedy of each, same order
  std::vector<LandingGpuRow> gpus;
  std::optional<LandingFleet> fleet;  // with a fleet section
  unsigned refresh_seconds = 10;
};

// Rows in rail order. `series` must hold only current results (ResultStore::IsCurrent);
// `addresses` give netdev-only rails, which have no GID to take it from, their IPv4 address.
std::vector<LandingRailRow> BuildLandingRows(
    const std::vector<inventory::Rail>& rails, const std::vector<sysfs::InfinibandDevice>& devices,
    const std::vector<sysfs::NetDevice>& net_devices, const std::vector<probe::SeriesState>& series,
    const std::vector<health::CheckResult>& checks,
    const std::vector<health::InterfaceAddress>& addresses,
    const inventory::PcieTopology* topology = nullptr);  // fills PCI addresses into the fixes

// The fabric checks' states for `rail`: whether `fabric` holds an allow-listed NIC reading of the
// rail and `temperatures` a sensor of its NIC tells "no verdict" from "not read".
std::vector<LandingFabricCheck> BuildLandingFabric(
    const std::string& rail, const std::vector<health::CheckResult>& checks,
    const std::vector<inventory::RailFabric>& fabric,
    const std::vector<inventory::RailTemperature>& temperatures);

// Failing verdicts no row shows: host-wide ones and those of rails that are not listed.
std::vector<health::CheckResult> HostFailingChecks(const std::vector<LandingRailRow>& rows,
                                                   const std::vector<health::CheckResult>& checks);

// The GPUs in PCI address order.
std::vector<LandingGpuRow> BuildLandingGpuRows(const inventory::PcieTopology& topology);

// The fleet's status as the page shows it.
LandingFleet BuildLandingFleet(const fleet::FleetStatus& status);

// The page of one scrape: its rows and failing checks from the scrape's inventory and verdicts.
// `page` brings the header (versions, paths); has_rdma_devices, rails and host_failing are set.
LandingPage BuildLandingPage(collectors::Scrape& scrape, LandingPage page);

// A complete HTML document with no external assets; every value is escaped.
std::string RenderLandingPage(const LandingPage& page);

}  // namespace rail::web
