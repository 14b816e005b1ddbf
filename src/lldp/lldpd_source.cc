// Neighbours through liblldpctl (lldpd's client library, Debian's liblldpctl-dev), with its
// synchronous default transport: one connection per Read, released with everything it handed out.
#include <lldpctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "rail/base/unique_fd.h"
#include "rail/lldp/neighbors.h"

namespace rail::lldp {
namespace {

// liblldpctl hands out a connection and reference-counted atoms; each is released by one owner.
struct ConnectionRelease {
  void operator()(lldpctl_conn_t* connection) const { lldpctl_release(connection); }
};
struct AtomRelease {
  void operator()(lldpctl_atom_t* atom) const { lldpctl_atom_dec_ref(atom); }
};
using Connection = std::unique_ptr<lldpctl_conn_t, ConnectionRelease>;
using Atom = std::unique_ptr<lldpctl_atom_t, AtomRelease>;

// What the neighbour sent reaches labels and reasons: bytes outside printable ASCII become '?',
// and a string is cut at a length no switch name or port description needs.
constexpr std::size_t kMaxText = 128;

std::string Text(lldpctl_atom_t* atom, lldpctl_key_t key) {
  const char* value = lldpctl_atom_get_str(atom, key);
  std::string out;
  if (value == nullptr) return out;
  for (const char* c = value; *c != '\0' && out.size() < kMaxText; ++c) {
    out.push_back(*c >= 0x20 && *c < 0x7f ? *c : '?');
  }
  return out;
}

// Calls `each` with every element of a list atom, each owned for the call.
template <typename Each>
void ForEach(lldpctl_atom_t* list, Each each) {
  for (lldpctl_atom_iter_t* iter = lldpctl_atom_iter(list); iter != nullptr;
       iter = lldpctl_atom_iter_next(list, iter)) {
    Atom value(lldpctl_atom_iter_value(list, iter));
    if (value) each(value.get());
  }
}

Neighbor ReadNeighbor(lldpctl_atom_t* remote_port) {
  Neighbor neighbor;
  neighbor.port_id = Text(remote_port, lldpctl_k_port_id);
  neighbor.port_description = Text(remote_port, lldpctl_k_port_descr);
  // 0 is what lldpd holds when no PVID TLV came: VLAN 0 is no port VLAN (802.1Q reserves it).
  if (const long pvid = lldpctl_atom_get_int(remote_port, lldpctl_k_port_vlan_pvid); pvid > 0) {
    neighbor.vlan = static_cast<int>(pvid);
  }
  neighbor.last_change_epoch_seconds = lldpctl_atom_get_int(remote_port, lldpctl_k_port_age);
  neighbor.ttl_seconds = lldpctl_atom_get_int(remote_port, lldpctl_k_port_ttl);
  if (const Atom chassis(lldpctl_atom_get(remote_port, lldpctl_k_port_chassis)); chassis) {
    neighbor.system_name = Text(chassis.get(), lldpctl_k_chassis_name);
    neighbor.chassis_id = Text(chassis.get(), lldpctl_k_chassis_id);
  }
  return neighbor;
}

// Whether anything listens on the socket, told apart before liblldpctl, which reports every
// failure to connect as one error: ENOENT (no socket) and ECONNREFUSED (a socket left behind by
// a stopped lldpd) mean no lldpd runs; EACCES means one runs and the agent may not ask it.
Neighbors Probe(const std::string& path) {
  Neighbors out;
  out.socket_path = path;
  out.state = DaemonState::kAnswered;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    out.state = DaemonState::kError;
    out.error = "lldpd socket path '" + path + "' is empty or too long";
    return out;
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  const base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd &&
      ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
    return out;
  }
  const int error = fd ? errno : EBADF;
  if (error == ENOENT || error == ECONNREFUSED) {
    out.state = DaemonState::kNotRunning;
    out.error = "no lldpd listens on " + path + " (" + std::strerror(error) + ")";
  } else {
    out.state = DaemonState::kError;
    out.error = "cannot connect to lldpd's socket " + path + ": " + std::strerror(error) +
                (error == EACCES ? " (the socket is for root and the group _lldpd)" : "");
  }
  return out;
}

}  // namespace

const char* DaemonStateName(DaemonState state) {
  switch (state) {
    case DaemonState::kAnswered:
      return "answered";
    case DaemonState::kNotRunning:
      return "not_running";
    case DaemonState::kError:
      return "error";
  }
  return "error";
}

std::string DefaultSocketPath() {
  const char* path = lldpctl_get_default_transport();
  return path != nullptr ? path : "/run/lldpd.socket";
}

LldpdNeighborSource::LldpdNeighborSource(std::string socket_path)
    : socket_path_(socket_path.empty() ? DefaultSocketPath() : std::move(socket_path)) {}

Neighbors LldpdNeighborSource::Read() const {
  Neighbors out = Probe(socket_path_);
  if (out.state != DaemonState::kAnswered) return out;
  const Connection connection(lldpctl_new_name(socket_path_.c_str(), nullptr, nullptr, nullptr));
  const Atom interfaces(connection ? lldpctl_get_interfaces(connection.get()) : nullptr);
  if (!interfaces) {
    out.state = DaemonState::kError;
    out.error = "lldpd on " + socket_path_ + " did not list its interfaces: " +
                (connection ? lldpctl_last_strerror(connection.get()) : "out of memory");
    return out;
  }
  ForEach(interfaces.get(), [&](lldpctl_atom_t* interface) {
    const std::string name = Text(interface, lldpctl_k_interface_name);
    auto& neighbors = out.interfaces[name];
    const Atom port(lldpctl_get_port(interface));
    if (!port) return;
    const Atom remote_ports(lldpctl_atom_get(port.get(), lldpctl_k_port_neighbors));
    if (!remote_ports) return;
    ForEach(remote_ports.get(),
            [&](lldpctl_atom_t* remote_port) { neighbors.push_back(ReadNeighbor(remote_port)); });
  });
  return out;
}

}  // namespace rail::lldp
