// What the link partners of this host's interfaces announce over LLDP, as the lldpd daemon has
// received it. lldpd (Debian's package `lldpd`) receives and ages the frames; this layer only asks
// it through its client library, liblldpctl, over lldpd's control socket. Nothing here parses an
// LLDP frame.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rail::lldp {

// One neighbour (a remote port) lldpd holds for a local interface.
struct Neighbor {
  std::string system_name;       // the chassis's system name TLV ("leaf-rail0"); may be empty
  std::string chassis_id;        // as lldpctl renders it (a MAC address, a name, ...)
  std::string port_id;           // as lldpctl renders it ("Ethernet1/1", a MAC address, ...)
  std::string port_description;  // may be empty
  std::optional<int> vlan;       // the port VLAN ID (802.1 PVID TLV); absent when not announced
  // When lldpd last saw this neighbour's information change (first reception or a changed TLV),
  // in seconds since the epoch: lldpctl_k_port_age is lldpd's p_lastchange, not the last frame.
  // lldpd drops a neighbour whose TTL runs out, so a neighbour listed is a live one.
  std::int64_t last_change_epoch_seconds = 0;
  std::int64_t ttl_seconds = 0;  // the TTL the neighbour announced

  bool operator==(const Neighbor&) const = default;
};

// Whether lldpd answered.
enum class DaemonState {
  kAnswered,    // lldpd answered: `interfaces` is what it knows
  kNotRunning,  // no control socket at the path: no lldpd runs (in this network namespace)
  kError,       // the socket exists but lldpd could not be asked (permissions, a stale socket)
};

// "answered", "not_running", "error".
const char* DaemonStateName(DaemonState state);

struct Neighbors {
  DaemonState state = DaemonState::kError;
  std::string socket_path;  // where lldpd was asked
  std::string error;        // why not, for people, unless answered
  // Local interface name -> its neighbours, for every interface lldpd runs on (an interface
  // without neighbours is listed with none).
  std::map<std::string, std::vector<Neighbor>> interfaces;
};

// Reads the neighbours. Implementations are safe to call from several threads.
class NeighborSource {
 public:
  virtual ~NeighborSource() = default;
  virtual Neighbors Read() const = 0;
};

// lldpd's default control socket as liblldpctl knows it (Debian: /run/lldpd.socket).
std::string DefaultSocketPath();

// Asks lldpd over its control socket through liblldpctl, one connection per Read. The socket is
// only readable by root and the group _lldpd (mode 0770): an unprivileged agent's user must be in
// that group, or Read says so (kError).
class LldpdNeighborSource final : public NeighborSource {
 public:
  // An empty path: DefaultSocketPath().
  explicit LldpdNeighborSource(std::string socket_path);
  Neighbors Read() const override;

 private:
  std::string socket_path_;
};

}  // namespace rail::lldp
