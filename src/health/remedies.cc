// The remedy of every check token. Commands rather than advice where one exists: what a person
// types on the host, with the rail's own names filled in.
#include "rail/health/remedies.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>

namespace rail::health {
namespace {

struct Names {
  std::string netdev = "<netdev>";
  std::string device = "<device>";
  std::string port = "1";
  std::string pci = "<pci address>";
  // perftest's GID option: RoCE needs the RoCE v2 GID's index (its default, 0, is a link-local
  // GID that does not route), InfiniBand none.
  std::string gid_option = " -x <RoCE v2 GID index>";
};

Names NamesOf(const CheckResult& verdict, const std::vector<inventory::Rail>& rails,
              const inventory::PcieTopology* topology) {
  Names names;
  const auto rail = std::find_if(rails.begin(), rails.end(),
                                 [&](const inventory::Rail& r) { return r.name == verdict.rail; });
  if (rail == rails.end()) return names;
  if (!rail->netdev.empty()) names.netdev = rail->netdev;
  if (!rail->device.empty()) names.device = rail->device;
  if (rail->port != 0) names.port = std::to_string(rail->port);
  if (rail->link_layer == "InfiniBand") {
    names.gid_option.clear();
  } else if (rail->roce_v2_gid_index) {
    names.gid_option = " -x " + std::to_string(*rail->roce_v2_gid_index);
  }
  if (topology == nullptr) return names;
  if (const auto* device = inventory::FindRdmaDevice(*topology, rail->device)) {
    names.pci = device->pci_bus_id;
  }
  return names;
}

// The fabric checks' templates (the NIC's counters and temperature).
std::map<std::string, std::string> FabricTemplates() {
  return {
      {"pfc_storm",
       "ethtool -S {netdev} | grep -E 'pause_storm|out_of_buffer|pci_stalled'; find what stalls "
       "this host's receive path (a hung consumer, the driver, PCIe)"},
      {"pfc_pause",
       "ethtool -S {netdev} | grep -E 'prio[0-7]_pause'; dcb pfc show dev {netdev}; rx pause: "
       "find the congested receiver downstream; tx pause: see what keeps this host from draining"},
      {"roce_congestion_control",
       "grep . /sys/class/infiniband/{device}/ports/{port}/hw_counters/{{rp_cnp_ignored,np_*}}; "
       "enable DCQCN for the RoCE priority on both sides (ecn/roce_rp and ecn/roce_np)"},
      {"global_pause",
       "ethtool -a {netdev}; ethtool -S {netdev} | grep -E 'global_pause|pause_ctrl|pause_frames|"
       "xoff'; ethtool -A {netdev} rx off tx off (802.3x pause stops every priority: turn it off "
       "here and on the switch port); dcb pfc show dev {netdev} (PFC on the RoCE priority "
       "instead)"},
      {"roce_drops",
       "ethtool -S {netdev} | grep -E 'prio[0-7]_(buf|cong)_discard|prio[0-7]_pause'; dcb pfc "
       "show dev {netdev}; dcb buffer show dev {netdev} (PFC on the dropping priority on every "
       "hop, with enough buffer and headroom for it)"},
      {"port_discards",
       "ethtool -S {netdev} | grep -E 'discard'; dcb pfc show dev {netdev}; dcb buffer show dev "
       "{netdev} (PFC on the RoCE priority end to end, buffers split to give it room; find the "
       "burst source sending to this port)"},
      {"host_receive_starvation",
       "host fault, not the fabric: ethtool -S {netdev} | grep -E "
       "'out_of_buffer|ring_discards|total_discard'; "
       "ethtool -g {netdev} (then ethtool -G {netdev} rx <max>, and spread the NIC's IRQs over "
       "idle cores of its NUMA node); rdma statistic show link {device}/{port}; grep . "
       "/sys/class/infiniband/{device}/ports/{port}/hw_counters/out_of_buffer (rising: an RDMA "
       "application posts its receives too late)"},
      {"roce_retransmissions",
       "rdma statistic show link {device}/{port}; grep . "
       "/sys/class/infiniband/{device}/ports/{port}/hw_counters/*; loss or timeouts: ethtool -S "
       "{netdev} | grep -E 'discard|pause' and dcb pfc show dev {netdev} (loss on a lossless "
       "fabric means PFC is missing on a hop); RNR: the peer's application posts receives too "
       "slowly"},
      {"link_flaps",
       "ethtool -S {netdev} | grep -E 'link_down|module_unplug'; ethtool -m {netdev}; reseat or "
       "replace the cable or transceiver; check the switch port's log"},
      {"link_errors",
       "ethtool -S {netdev} | grep -E 'crc|symbol|fec|corrected|err_lane'; ethtool -m {netdev} "
       "(optical power per lane); ethtool --show-fec {netdev} (the switch port's FEC mode); clean "
       "or replace the cable or transceiver"},
      {"nic_temperature",
       "grep . /sys/class/hwmon/*/temp*_{{input,crit,label}}; ethtool -m {netdev}; check the "
       "airflow over the NIC"},
      {"qos_config",
       "dcb pfc show dev {netdev}; dcb app show dev {netdev}; ethtool -a {netdev}; dcb pfc set "
       "dev {netdev} prio-pfc <roce priority>:on; dcb app replace dev {netdev} dscp-prio "
       "<dscp>:<roce priority>; ethtool -A {netdev} rx off tx off (no 802.3x pause; the same "
       "settings on every rail, and as the switch has them)"},
  };
}

// The checks about a peer's hello: both hosts' settings.
std::map<std::string, std::string> PeerTemplates() {
  return {
      {"peer_mtu", "ip link set dev {netdev} mtu 9000 (on both hosts)"},
      {"peer_hello",
       "check the peer's responder.listen_address, the firewall between the hosts and that both "
       "hosts hold the same peer secret file"},
      {"peer_version",
       "install the same rail_exporter and UCX versions on both hosts (ucx_info -v; "
       "rail_exporter --version)"},
  };
}

// fmt templates with {netdev}, {device}, {port}, {pci} and {gid_option}.
const std::map<std::string, std::string>& Templates() {
  static const std::map<std::string, std::string> kTemplates = [] {
    std::map<std::string, std::string> templates = {
        {"port_active",
         "rdma link show; ip link set dev {netdev} up; check the cable and the switch port"},
        {"port_rate",
         "ethtool {netdev}; cat /sys/class/infiniband/{device}/ports/{port}/rate; check the cable, "
         "the transceiver and the switch port's speed"},
        {"roce_gid",
         "ip link set dev {netdev} nomaster (RoCE netdevs must not be bond slaves); "
         "ip addr add <rail IPv4>/<prefix> dev {netdev}; "
         "grep . /sys/class/infiniband/{device}/ports/{port}/gid_attrs/types/*"},
        {"duplicate_subnet",
         "ip -4 addr show; ip addr del <address>/<prefix> dev <the other interface> (one interface "
         "per rail subnet)"},
        {"mtu", "ip link set dev {netdev} mtu 9000"},
        {"counter_saturated",
         "read the extended counters: ls /sys/class/infiniband/{device}/ports/{port}/counters_ext/ "
         "(load the driver that provides them, or reset the counters: perfquery -x -R)"},
        {"multirail_striping",
         "export UCX_NET_DEVICES=<every rail's device:port> UCX_MAX_RNDV_RAILS=<rail count>; check "
         "UCX_MULTI_LANE_MAX_RATIO (UCX drops a lane slower than 1/4 of the fastest)"},
        {"probe_throughput",
         "ib_write_bw -d {device} -i {port}{gid_option} <peer> (against the peer); rdma "
         "statistic show link {device}/{port}"},
        {"transport_fallback",
         "ucx_info -d | grep -A4 {device}; export UCX_TLS=rc,ud,sm,self "
         "UCX_NET_DEVICES={device}:{port}"},
        {"pcie_link",
         "lspci -vv -s {pci} | grep -E 'LnkCap|LnkSta'; reseat the card, or move it to a "
         "slot wired for its full width"},
        {"gpu_nic_affinity",
         "nvidia-smi topo -m; pin each GPU's traffic to its nearest NIC (UCX_NET_DEVICES, "
         "NCCL_IB_HCA), or move the NIC next to the GPU"},
        {"gpu_direct",
         "modprobe nvidia_peermem (or the open GPU kernel modules on Linux 5.12+ for dma-buf); "
         "install a CUDA-enabled UCX (ucx_info -d | grep cuda) and include cuda_copy in UCX_TLS"},
        {"probe_failing",
         "journalctl -u rail-exporter | grep -E 'Fatal:|Assertion|ERROR' (UCX's lines from the "
         "probe worker); rail_exporter probe --peer <peer>:9841 --kind <kind> --rail <rail>; "
         "ucx_info "
         "-d | grep -A4 {device}"},
        {"rail_cabling", "lldpcli show neighbors ports {netdev}; move the cable to its leaf"},
        {"ucx_device_quirk",
         "export UCX_UD_VERBS_ETH_DGID_CHECK=n (or UCX_IB_GID_INDEX=0) for every UCX application "
         "on the host (NCCL, MPI, ...); set ucx_device_quirk_workaround: true for this agent's "
         "probes; or install a UCX release without the fault"},
        {"gpu_memory_throughput",
         "modprobe nvidia_peermem; ucx_info -d | grep -i cuda; export "
         "UCX_TLS=rc,cuda_copy,cuda_ipc,sm,self UCX_NET_DEVICES={device}:{port}"},
    };
    templates.merge(FabricTemplates());
    templates.merge(PeerTemplates());
    return templates;
  }();
  return kTemplates;
}

const std::map<std::string, std::string>& Summaries() {
  static const std::map<std::string, std::string> kSummaries = {
      {"port_active", "the port is ACTIVE with its link up"},
      {"port_rate", "the port runs at its expected rate"},
      {"roce_gid", "a RoCE v2 GID carries the rail's IPv4 address, on no bond"},
      {"duplicate_subnet", "no other interface holds an address in the rail's subnet"},
      {"mtu", "the rail's MTU matches the host's other rails"},
      {"peer_mtu", "the rail's MTU matches the peer's"},
      {"peer_version", "the peer runs the same agent and UCX versions"},
      {"peer_hello", "the peer's responder answered the hello"},
      {"counter_saturated", "no port counter is pegged at its maximum"},
      {"multirail_striping", "multi-rail traffic spreads over the rails"},
      {"probe_throughput", "probed throughput is near the line rate and the sibling rails"},
      {"transport_fallback", "RDMA rails moved their bytes over RDMA"},
      {"pcie_link", "the PCIe link trained at its full speed and width"},
      {"gpu_nic_affinity", "GPUs and RDMA devices sit close on the PCIe tree"},
      {"gpu_direct", "GPU memory can reach the rails without host staging"},
      {"gpu_memory_throughput", "GPU-memory transfers get near host-memory throughput"},
      {"pfc_storm", "no pause storm error within the window"},
      {"pfc_pause", "PFC pause held the rail for less than the threshold of the window"},
      {"roce_congestion_control", "both DCQCN ends (reaction and notification point) respond"},
      {"global_pause", "802.3x pause stayed below its threshold within the window"},
      {"roce_drops", "the NIC dropped no packet of a lossless priority within the window"},
      {"port_discards", "the NIC port's receive discards stayed within their limit in the window"},
      {"host_receive_starvation",
       "the host posted receive buffers in time (its drops stayed within their limit in the "
       "window)"},
      {"roce_retransmissions",
       "the RDMA transport's retransmissions stayed within their limit in the window"},
      {"link_flaps", "the link stayed up and its transceiver plugged in within the window"},
      {"link_errors",
       "no CRC, symbol or uncorrectable FEC error and few corrected bits within the window"},
      {"nic_temperature", "the NIC's sensors are well below their critical temperature"},
      {"qos_config",
       "PFC is on for the RoCE priority and 802.3x pause off, configured alike on every rail"},
      {"probe_failing", "the rail's probes of the peer get through"},
      {"ucx_device_quirk", "the rail's device has no known fault with this host's UCX"},
      {"rail_cabling", "the rail's switch port is where the cabling layout wants it"},
  };
  return kSummaries;
}

}  // namespace

std::string CheckSummary(const std::string& check) {
  const auto found = Summaries().find(check);
  return found == Summaries().end() ? std::string() : found->second;
}

std::string Remedy(const CheckResult& verdict, const std::vector<inventory::Rail>& rails,
                   const inventory::PcieTopology* topology) {
  const auto found = Templates().find(verdict.check);
  if (found == Templates().end()) return "";
  const auto names = NamesOf(verdict, rails, topology);
  return fmt::format(fmt::runtime(found->second), fmt::arg("netdev", names.netdev),
                     fmt::arg("device", names.device), fmt::arg("port", names.port),
                     fmt::arg("pci", names.pci), fmt::arg("gid_option", names.gid_option));
}

const std::vector<std::string>& CheckTokens() {
  static const std::vector<std::string> kTokens = {"port_active",
                                                   "port_rate",
                                                   "roce_gid",
                                                   "duplicate_subnet",
                                                   "mtu",
                                                   "peer_mtu",
                                                   "peer_version",
                                                   "peer_hello",
                                                   "counter_saturated",
                                                   "multirail_striping",
                                                   "probe_throughput",
                                                   "transport_fallback",
                                                   "pcie_link",
                                                   "gpu_nic_affinity",
                                                   "gpu_direct",
                                                   "gpu_memory_throughput",
                                                   "pfc_storm",
                                                   "pfc_pause",
                                                   "global_pause",
                                                   "roce_congestion_control",
                                                   "roce_drops",
                                                   "roce_retransmissions",
                                                   "port_discards",
                                                   "host_receive_starvation",
                                                   "link_flaps",
                                                   "link_errors",
                                                   "nic_temperature",
                                                   "qos_config",
                                                   "probe_failing",
                                                   "ucx_device_quirk",
                                                   "rail_cabling"};
  return kTokens;
}

}  // namespace rail::health
