#include "probing/responder_options.h"

#include <unistd.h>

#include <map>

#include "rail/probe/probe.h"
#include "rail/sysfs/values.h"

namespace rail::probing::detail {
namespace {

// class/net/<netdev>/mtu of each rail with a netdev, for the peers' peer_mtu check.
std::map<std::string, std::uint64_t> RailMtus(const sysfs::Filesystem& sys,
                                              const std::vector<probe::ProbeRail>& rails) {
  std::map<std::string, std::uint64_t> mtus;
  for (const auto& rail : rails) {
    if (rail.netdev.empty()) continue;
    std::string text;
    if (sys.ReadFile("class/net/" + rail.netdev + "/mtu", &text) != 0) continue;
    if (const auto mtu = sysfs::ParseUnsigned(text)) mtus[rail.name] = *mtu;
  }
  return mtus;
}

// responder.listen_address as host and port; ":9841" (node_exporter's spelling) listens on every
// address.
peer::HostPort ResponderAddress(const std::string& listen_address) {
  std::string error;
  const bool every_address = listen_address.front() == ':';
  auto address = peer::ParseHostPort(every_address ? "0.0.0.0" + listen_address : listen_address,
                                     peer::kDefaultResponderPort, &error);
  if (!address) throw ConfigError("responder.listen_address: " + error);
  if (every_address) address->host.clear();
  return *address;
}

std::vector<peer::Network> AllowedNetworks(const std::vector<std::string>& texts) {
  std::vector<peer::Network> networks;
  for (const auto& text : texts) {
    std::string error;
    auto network = peer::ParseNetwork(text, &error);
    if (!network) throw ConfigError("responder.allowed_networks: " + error);
    networks.push_back(std::move(*network));
  }
  return networks;
}

}  // namespace

std::string OwnName(const ResponderConfig& config) {
  if (!config.name.empty()) return config.name;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

peer::ResponderOptions MakeResponderOptions(const ResponderConfig& config, bool peer_insecure,
                                            const ProbeWiring& wiring, const sysfs::Filesystem& sys,
                                            const base::Clock& clock) {
  const auto address = ResponderAddress(config.listen_address);
  peer::ResponderOptions options;
  options.listen_host = address.host;
  options.port = address.port;
  options.secret = wiring.secret();
  options.insecure = config.insecure || peer_insecure;
  options.versions = wiring.Versions();
  options.rail_mtus = [&sys, rails = wiring.rails()] { return RailMtus(sys, rails); };
  options.name = OwnName(config);
  options.limits = config.limits;
  options.allowed_networks = AllowedNetworks(config.allowed_networks);
  options.clock = &clock;
  // The probe layer's rule, the one the scheduler's jobs are planned by (PlanJob).
  options.is_bulk_kind = [](const std::string& kind) {
    const auto parsed = probe::ParseProbeKind(kind);
    return parsed && probe::IsBulk(*parsed);
  };
  return options;
}

}  // namespace rail::probing::detail
