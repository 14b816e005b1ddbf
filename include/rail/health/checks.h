// Rail health checks: the answers an operator acts on, derived from what a scrape read and from
// the latest probe results. Pure functions over structs (no file or clock access), so that every
// check is unit-tested on fixture trees; the health collector and the landing page both call
// EvaluateChecks and HealthLog turns changes into log lines.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "rail/health/counter_history.h"
#include "rail/health/neighbor_history.h"
#include "rail/inventory/neighbors.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/inventory/qos.h"
#include "rail/inventory/rails.h"
#include "rail/inventory/snapshot.h"
#include "rail/probe/figures.h"
#include "rail/probe/result_store.h"
#include "rail/probe/striping.h"
#include "rail/probe/worker.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"

namespace rail::health {

// Thresholds of the checks: the health: section of the configuration, defaults here and nowhere
// else.
// health.cabling: the switch layout rail_cabling holds each rail's LLDP neighbour against.
struct Cabling {
  // layout: rail-optimized: every rail of the host on a switch (chassis id) of its own.
  bool rail_optimized = false;
  // switches: per rail name, a glob (fnmatch(3)) the neighbour's system name must match.
  std::map<std::string, std::string> switches;
  // change_window ("15m"): a rail whose LLDP neighbour changed (a re-cabling, a failover) fails
  // this long after the change, so that scrapes and an alert's `for:` see an event that one
  // reading shows.
  base::Duration change_window = std::chrono::minutes(15);
  bool operator==(const Cabling&) const = default;
};

struct Thresholds {
  // health.probe_throughput_min_line_rate_fraction: a rail's ucx_throughput below this fraction
  // of its line rate fails probe_throughput.
  double probe_throughput_min_line_rate_fraction = 0.5;
  // health.probe_throughput_min_sibling_fraction: a rail's throughput below this fraction of the
  // median of its sibling rails (same peer, kind and size) fails probe_throughput.
  double probe_throughput_min_sibling_fraction = 0.5;
  // health.multirail_max_rail_share: one rail carrying more than this share of a multi-rail
  // probe's bytes fails multirail_striping.
  double multirail_max_rail_share = 0.8;
  // health.multirail_min_efficiency: UCX's striping over every rail reaching less than this
  // fraction of the rails driven at once (probe::StripingEfficiency) fails multirail_striping.
  double multirail_min_efficiency = 0.6;
  // health.gpu_nic_max_path: a discrete GPU whose nearest RDMA device, or a rail whose nearest
  // GPU, is farther than this fails gpu_nic_affinity. PXB is the farthest path at which NCCL uses
  // GPUDirect RDMA by default (NCCL_NET_GDR_LEVEL).
  inventory::PciPath gpu_nic_max_path = inventory::PciPath::kPxb;
  // health.gpu_memory_min_host_ratio: a rail whose cuda-memory throughput is below this fraction
  // of its host-memory throughput (same peer and size) fails gpu_memory_throughput.
  double gpu_memory_min_host_ratio = 0.5;
  // health.fabric_window ("5m"): the checks judged on counter deltas (pfc_storm, pfc_pause,
  // global_pause, roce_congestion_control, roce_drops, roce_retransmissions, port_discards,
  // host_receive_starvation, link_flaps, link_errors) look at what rose within this window.
  base::Duration fabric_window = std::chrono::minutes(5);
  // health.fabric_sample_interval ("25s"): the longest those counters go unread. The agent reads
  // them at start (the baseline) and whenever neither a scrape nor itself read them for this
  // long, whoever scrapes and however often; 0: the scrapes' readings alone. Between the usual
  // scrape intervals of 15 s and 30 s, so that a Prometheus scraping every 15 or 20 s leaves the
  // agent nothing to read: one `ethtool -S` costs mlx5 a few firmware commands
  // (docs/nic-statistics.md).
  base::Duration fabric_sample_interval = std::chrono::seconds(25);
  // health.pfc_pause_max_fraction: a rail held by PFC pause (or pausing its switch) on a priority
  // for more than this share of the window fails pfc_pause.
  double pfc_pause_max_fraction = 0.1;
  // health.global_pause_max_fraction: a rail held by 802.3x (global) pause, or holding its switch,
  // for more than this share of the window fails global_pause. A RoCE rail should use PFC.
  double global_pause_max_fraction = 0.01;
  // health.pause_max_frames_per_second: where the driver counts pause frames but no pause time
  // (ice; bnxt_en's and mlx5's 802.3x frames), more XOFF frames per second than this fail
  // pfc_pause or global_pause. One XOFF pauses a 100G link for up to 335 µs, so 500 per second
  // is at most about a sixth of the time.
  double pause_max_frames_per_second = 500;
  // health.port_discards_max_per_second: more received packets per second than this dropped by
  // the NIC's port fail port_discards (0: any).
  double port_discards_max_per_second = 0;
  // health.host_receive_drops_max_per_second: more packets per second than this dropped because
  // the host posted no receive buffer (Ethernet rings, RDMA receive queues) fail
  // host_receive_starvation (0: any).
  double host_receive_drops_max_per_second = 0;
  // health.roce_retransmissions_max_per_second: more RDMA transport retransmission, timeout and
  // RNR events per second than this fail roce_retransmissions (0: any).
  double roce_retransmissions_max_per_second = 0;
  // health.link_max_corrected_bit_ratio: FEC-corrected bits per received bit above this within
  // the window fail link_errors (a healthy cable stays orders of magnitude below).
  double link_max_corrected_bit_ratio = 1e-6;
  // health.nic_temperature_margin_celsius: a NIC sensor within this many degrees of its critical
  // temperature fails nic_temperature.
  double nic_temperature_margin_celsius = 10.0;
  // health.roce_priority: the priority RoCE traffic uses (0-7); qos_config fails a rail whose
  // PFC is off on it. 3 is the priority mlx5's and most switch vendors' RoCE guides use.
  unsigned roce_priority = 3;
  // health.probe_failing_runs: a probe series whose last this many runs failed fails
  // probe_failing (busy refusals, cancelled runs and runs without a worker do not count).
  unsigned probe_failing_runs = 3;
  Cabling cabling;

  bool operator==(const Thresholds&) const = default;
};

// An IPv4 address configured on an interface (getifaddrs in production, literals in tests).
struct InterfaceAddress {
  std::string ifname;
  std::string address;  // dotted quad
  unsigned prefix_length = 32;
};

// Everything the checks look at. Pointers are never null; empty vectors are fine.
struct HealthInputs {
  const std::vector<inventory::Rail>* rails = nullptr;
  const std::vector<sysfs::InfinibandDevice>* devices = nullptr;
  const std::vector<sysfs::NetDevice>* net_devices = nullptr;
  const std::vector<sysfs::Bond>* bonds = nullptr;
  const std::vector<InterfaceAddress>* addresses = nullptr;
  const std::vector<probe::SeriesState>* probe_series = nullptr;
  const inventory::PcieTopology* topology = nullptr;
  const sysfs::PeerMemoryState* peer_memory = nullptr;
  // The rails' DCB configuration; nullptr when not read (the qos collector is off).
  const std::vector<inventory::RailQos>* qos = nullptr;
  // The rails' LLDP neighbours; nullptr when not read (the neighbor collector is off).
  const std::vector<inventory::RailNeighbors>* neighbors = nullptr;
  // Each rail's switch ports across scrapes, observed at `now` (the injected clock); null: no
  // verdict on a change.
  const NeighborHistory* neighbor_history = nullptr;
  base::TimePoint now{};
  // The probe worker's last hello; nullptr while none is known (no worker yet): the GPU checks
  // that need the driver's answer then say nothing rather than guess.
  const probe::WorkerCapabilities* capabilities = nullptr;
  // The rails' NIC counters and temperatures as read this scrape (empty without the ethtool
  // collector), and the counters' history: null, the windowed checks give no verdict.
  const std::vector<inventory::RailFabric>* fabric = nullptr;
  const std::vector<inventory::RailTemperature>* nic_temperatures = nullptr;
  const CounterHistory* history = nullptr;
  Thresholds thresholds;
  // What a run's figures must obey (the figures section): a noisy or withheld run is not judged.
  probe::FigureLimits figures;
  std::string own_agent_version;
  std::string own_ucx_version;
  // Whether a series' last result is still current (ResultStore::IsCurrent). The probe-derived
  // checks (multirail_striping, probe_throughput, transport_fallback) skip stale series; the peer
  // checks use each peer's latest result however old. Empty: every series is current.
  std::function<bool(const probe::SeriesState&)> is_current;
  // The peers' striping efficiencies over probe_series (probe::StripingEfficiencies), when the
  // caller has them already (EvaluateSnapshot, for the probe collector too); null: the
  // multirail_striping check computes them.
  const std::vector<probe::StripingEfficiency>* striping = nullptr;
};

// One verdict: rail_check_ok{check,rail,peer} and, while failing,
// rail_check_info{check,rail,peer,reason}. Check tokens (stable, used by the alert rules):
//   port_active, port_rate, roce_gid, duplicate_subnet, mtu, peer_mtu, peer_version, peer_hello,
//   counter_saturated, multirail_striping, probe_throughput, transport_fallback,
//   pcie_link, gpu_nic_affinity, gpu_direct, gpu_memory_throughput, qos_config,
//   pfc_storm, pfc_pause, global_pause, roce_congestion_control, roce_drops,
//   roce_retransmissions, port_discards, host_receive_starvation, link_flaps, link_errors,
//   nic_temperature, probe_failing, ucx_device_quirk, rail_cabling
struct CheckResult {
  std::string check;  // one of the tokens above
  std::string rail;   // the rail label; "" for host-wide checks
  std::string peer;   // the peer label for checks about a peer; "" otherwise
  bool ok = true;
  std::string reason;  // for people; empty when ok, unless held back
  // The check could not judge this time: its evidence was noise or was withheld (probe/figures.h).
  // Neither a pass nor a failure: published as rail_check_held_back{...,reason}, with no
  // rail_check_ok; `ok` is true so that nothing counts it as failing.
  bool held_back = false;
  auto operator<=>(const CheckResult&) const = default;
};

// How a peer's agent and UCX versions differ from ours, for people ("agent 0.3.0 (ours 0.4.0)");
// "" when they match. The one rule behind peer_version and rail_responder_peer_version_mismatch.
std::string VersionDifferences(const std::string& peer_agent_version,
                               const std::string& peer_ucx_version,
                               const std::string& own_agent_version,
                               const std::string& own_ucx_version);

// Why qos_config gives no verdict about the rail (the netdev has no DCB, or its driver reports no
// PFC configuration), for people; "" when it judges it.
std::string QosConfigUnjudged(const inventory::RailQos& qos);

// Every check, for every rail it applies to, in a stable order (check, then rail).
std::vector<CheckResult> EvaluateChecks(const HealthInputs& inputs);

// The IPv4 addresses of this network namespace's interfaces.
std::vector<InterfaceAddress> ReadInterfaceAddresses();

// Logs a line when a check's verdict or reason changes (first evaluation: only failures), e.g.
//   check changed check=roce_gid rail=rail0 peer= ok=false reason="..."
// at warning level for a failure and info for a recovery. A verdict that disappears (a rail or
// peer gone) is forgotten silently.
class HealthLog {
 public:
  void Observe(const std::vector<CheckResult>& results);

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, std::string>, CheckResult> last_;
  bool first_ = true;
};

}  // namespace rail::health
