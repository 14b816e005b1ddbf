// What one scrape has read so far. Reads are lazy and happen once per scrape: the first
// collector that needs the RDMA devices reads them (and is charged the time), the others reuse
// them. Collectors never read files themselves.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rail/config.h"
#include "rail/health/checks.h"
#include "rail/rails.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"
#include "rail/sysfs/read_errors.h"

namespace rail {

class GidCache;
namespace probe {
class ResultStore;
}
namespace peer {
struct ResponderStats;
}

struct SnapshotSources {
  const sysfs::Filesystem* sys = nullptr;        // --path.sysfs
  const sysfs::Filesystem* proc = nullptr;       // --path.procfs
  const sysfs::Filesystem* self_proc = nullptr;  // the real /proc, for the agent's own figures
  sysfs::InfinibandReadOptions infiniband;       // what of each device is read, and which devices
  sysfs::NetDeviceReadOptions netdev;            // what of each netdev is read
  GidCache* gid_cache = nullptr;  // when set, GID tables come through it (infiniband.gids)
  const AgentConfig* config = nullptr;
  const probe::ResultStore* results = nullptr;            // probe results; null when no probe runs
  std::function<peer::ResponderStats()> responder_stats;  // empty when no responder runs
  // The IPv4 addresses of the host's interfaces (the agent: health::ReadInterfaceAddresses).
  // Empty: none known; the health checks then use the rails' own addresses.
  std::function<std::vector<health::InterfaceAddress>()> interface_addresses;
  health::HealthLog* health_log = nullptr;  // when set, the health collector logs changes here
};

// Sets what `sources` reads from the enabled collectors' names: only what an enabled collector
// publishes or a check needs is read.
void SelectReads(const std::vector<std::string>& collectors, SnapshotSources* sources);

class ScrapeSnapshot {
 public:
  ScrapeSnapshot(const SnapshotSources& sources, sysfs::ReadErrors& errors)
      : sources_(sources), errors_(errors) {}

  const std::vector<sysfs::InfinibandDevice>& Devices();
  const std::vector<Rail>& Rails();
  const std::vector<sysfs::Bond>& Bonds();
  // The netdevs the netclass collector reports: rails' and RDMA devices' netdevs, bonds and
  // their slaves; every netdev but loopback when the host has no RDMA device at all.
  const std::vector<sysfs::NetDevice>& NetDevices();

  const SnapshotSources& sources() const { return sources_; }
  sysfs::ReadErrors& errors() { return errors_; }

 private:
  const SnapshotSources& sources_;
  sysfs::ReadErrors& errors_;
  std::optional<std::vector<sysfs::InfinibandDevice>> devices_;
  std::optional<std::vector<Rail>> rails_;
  std::optional<std::vector<sysfs::Bond>> bonds_;
  std::optional<std::vector<sysfs::NetDevice>> net_devices_;
};

}  // namespace rail
