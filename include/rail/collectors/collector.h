// A collector turns what a scrape read into metric families. One collector per file under
// src/collectors; each can be switched off with --no-collector.<name>.
#pragma once

#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rail/fleet/status.h"
#include "rail/health/checks.h"
#include "rail/health/snapshot_checks.h"
#include "rail/inventory/snapshot.h"
#include "rail/peer/responder.h"
#include "rail/probe/result_store.h"
#include "rail/probe/worker.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::collectors {

// The last configuration reload; the start counts as a successful one.
struct ConfigReloadState {
  bool last_successful = true;
  std::chrono::system_clock::time_point last_success;  // wall time
};

// Which GID table entries rail_gid_info publishes (--collector.gid.entries). Every non-empty
// entry is still read and counted (rail_gid_entries) and checked; this bounds the series only.
enum class GidEntryScope {
  // RoCE v2 entries that carry an IPv4 address (the ones RoCE transports select by default) and
  // every entry of an InfiniBand port: a table grows by two entries per address of the netdev
  // (IPv6 ones included), and each was a series with a 39-character label.
  kRoceV2Ipv4,
  kAll,  // every non-empty entry
};

// Everything scrapes read from. What of sysfs is read follows from the enabled collectors'
// Reads (SelectReads).
struct Sources {
  inventory::Sources inventory;
  const sysfs::Filesystem* self_proc = nullptr;  // the real /proc, for the agent's own figures
  std::function<peer::ResponderStats()> responder_stats;  // empty when no responder runs
  health::Context health;                   // thresholds, probe results, addresses, versions
  health::HealthLog* health_log = nullptr;  // when set, the health collector logs changes here
  // The probe worker's state; empty function or nullopt when no worker runs.
  std::function<std::optional<probe::WorkerStatus>()> probe_worker;
  // The fleet's discovery and plan; empty function or nullopt without a fleet section.
  std::function<std::optional<fleet::FleetStatus>()> fleet;
  // Whether responder.secret_file could be loaded; nullopt when none is configured.
  std::optional<bool> peer_secret_loaded;
  // The agent's reloads (rail_exporter_config_last_reload_*); empty function: not exported.
  std::function<ConfigReloadState()> config_reload;
  GidEntryScope gid_entries = GidEntryScope::kRoceV2Ipv4;
};

// One scrape: the inventory as read once, and the health verdicts, evaluated once on first use.
class Scrape {
 public:
  Scrape(const Sources& sources, sysfs::ReadErrors& errors)
      : sources_(sources),
        inventory_(sources.inventory, errors),
        readings_before_(sources.health.counter_history ? sources.health.counter_history->Readings()
                                                        : 0) {}

  const std::vector<sysfs::InfinibandDevice>& Devices() { return inventory_.Devices(); }
  const std::vector<inventory::Rail>& Rails() { return inventory_.Rails(); }
  const std::vector<sysfs::Bond>& Bonds() { return inventory_.Bonds(); }
  const std::vector<sysfs::NetDevice>& NetDevices() { return inventory_.NetDevices(); }
  const inventory::PcieTopology& Topology() { return inventory_.Topology(); }
  const sysfs::PeerMemoryState& PeerMemory() { return inventory_.PeerMemory(); }
  const std::vector<inventory::RailFabric>& Fabric() { return inventory_.Fabric(); }
  const std::vector<inventory::RailTemperature>& NicTemperatures() {
    return inventory_.NicTemperatures();
  }
  const std::vector<inventory::RailQos>& Qos() { return inventory_.Qos(); }
  const std::vector<inventory::RailNeighbors>& Neighbors() { return inventory_.Neighbors(); }
  const health::SnapshotVerdicts& Verdicts();

  const Sources& sources() const { return sources_; }
  const probe::ResultStore* results() const { return sources_.health.results; }
  sysfs::ReadErrors& errors() { return inventory_.errors(); }

 private:
  const Sources& sources_;
  inventory::Snapshot inventory_;
  // The counter history's readings before this scrape read anything (health::EvaluateSnapshot).
  std::uint64_t readings_before_;
  std::optional<health::SnapshotVerdicts> verdicts_;
};

// The sysfs reads a collector's families come from, beyond the devices, rails and netdevs every
// scrape reads: most of a large host's files are hw counters, GIDs and netdev statistics.
struct Reads {
  bool port_counters = false;      // ports/<p>/counters/, counters_ext/
  bool hw_counters = false;        // ports/<p>/hw_counters/
  bool gids = false;               // ports/<p>/gids/, gid_attrs/
  bool netdev_statistics = false;  // class/net/<netdev>/statistics/
  bool fabric = false;             // `ethtool -S` of the rails' netdevs, their NICs' hwmon
  bool qos = false;                // the rails' DCB configuration (netlink) and ECN enablement
  bool neighbors = false;          // the rails' LLDP neighbours (lldpd's socket)
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string Name() const = 0;
  virtual std::string Help() const = 0;
  virtual Reads Needs() const { return {}; }
  // Appends this collector's families. Throwing marks the collector failed for this scrape
  // (rail_exporter_scrape_collector_success 0); the other collectors still run.
  virtual void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) = 0;
};

struct CollectorInfo {
  std::string name;
  std::string help;
  bool enabled_by_default;
};

// Every collector the agent knows, in scrape order.
const std::vector<CollectorInfo>& KnownCollectors();

// Creates the named collector; nullptr for an unknown name.
std::unique_ptr<Collector> MakeCollector(const std::string& name);

// Sets what `sources` reads to what the named collectors need, and nothing more.
void SelectReads(const std::vector<std::string>& collectors, inventory::Sources* sources);

}  // namespace rail::collectors
