// GPUs, the PCIe path between each GPU and each RDMA device, and both ends' link speed and width
// against what they could train at: where GPU memory meets the rails (bus/pci/devices/).
#include <cstdio>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

std::string HexId(std::uint32_t id) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%04x", id);
  return text;
}

// As the kernel writes numa_node: -1 when the function has no affinity.
std::string NumaLabel(const std::optional<int>& node) {
  return std::to_string(node.value_or(-1));
}

class LinkFamilies {
 public:
  void Add(const std::string& pci_bus_id, const std::string& device,
           const inventory::PciLinkState& state) {
    AddSpeed(pci_bus_id, device, "current", state.link.current_speed_gts);
    AddSpeed(pci_bus_id, device, "max", state.attainable_speed_gts);
    AddWidth(pci_bus_id, device, "current", state.link.current_width);
    AddWidth(pci_bus_id, device, "max", state.attainable_width);
  }

  void MoveTo(std::vector<prometheus::MetricFamily>& out) {
    speed_.MoveTo(out);
    width_.MoveTo(out);
  }

 private:
  void AddSpeed(const std::string& pci_bus_id, const std::string& device, const char* kind,
                const std::optional<double>& gts) {
    if (gts)
      speed_.Add({{"pci_bus_id", pci_bus_id}, {"device", device}, {"kind", kind}}, *gts * 1e9);
  }
  void AddWidth(const std::string& pci_bus_id, const std::string& device, const char* kind,
                const std::optional<unsigned>& lanes) {
    if (lanes) width_.Add({{"pci_bus_id", pci_bus_id}, {"device", device}, {"kind", kind}}, *lanes);
  }

  detail::FamilyBuilder speed_ = detail::Gauge(
      "rail_pcie_link_transfers_per_second",
      "PCIe link speed of a GPU (device=\"\") or RDMA device's function, in transfers per second: "
      "kind=\"current\" as trained (current_link_speed), kind=\"max\" the most it can train at "
      "(the smaller of its own max_link_speed and its upstream port's).");
  detail::FamilyBuilder width_ = detail::Gauge(
      "rail_pcie_link_width",
      "PCIe link width in lanes of a GPU (device=\"\") or RDMA device's function: kind=\"current\" "
      "as trained (current_link_width), kind=\"max\" the most it can train at (the smaller of its "
      "own max_link_width and its upstream port's).");
};

class PcieCollector final : public Collector {
 public:
  std::string Name() const override { return "pcie"; }
  std::string Help() const override {
    return "GPUs, GPU to RDMA device PCIe paths, PCIe link speed and width";
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    const auto& topology = scrape.Topology();
    auto gpu_info = detail::Gauge(
        "rail_gpu_info",
        "A GPU (NVIDIA display-class PCI function): NUMA node (-1: none), how it attaches to the "
        "CPU (pcie, or c2c for NVLink-C2C), PCI device id; value 1.");
    auto path_info = detail::Gauge(
        "rail_gpu_nic_path_info",
        "The PCIe path between a GPU and an RDMA device, named as nvidia-smi topo -m names it "
        "(PIX, PXB, PHB, NODE, SYS), one series per rail on the device; value 1.");
    LinkFamilies links;

    for (const auto& gpu : topology.gpus) {
      gpu_info.Add({{"pci_bus_id", gpu.pci_bus_id},
                    {"numa_node", NumaLabel(gpu.numa_node)},
                    {"attach", inventory::GpuAttachName(gpu.attach)},
                    {"device_id", HexId(gpu.device_id)}},
                   1);
      links.Add(gpu.pci_bus_id, "", gpu.link);
    }
    for (const auto& device : topology.devices) {
      links.Add(device.pci_bus_id, device.device, device.link);
    }
    for (const auto& path : topology.paths) {
      const char* name = inventory::PciPathName(path.path);
      bool any_rail = false;
      for (const auto& rail : scrape.Rails()) {
        if (rail.device != path.device) continue;
        any_rail = true;
        path_info.Add({{"pci_bus_id", path.pci_bus_id},
                       {"device", path.device},
                       {"rail", rail.name},
                       {"path", name}},
                      1);
      }
      if (!any_rail) {
        path_info.Add({{"pci_bus_id", path.pci_bus_id},
                       {"device", path.device},
                       {"rail", ""},
                       {"path", name}},
                      1);
      }
    }
    gpu_info.MoveTo(out);
    path_info.MoveTo(out);
    links.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakePcieCollector() {
  return std::make_unique<PcieCollector>();
}

}  // namespace rail::collectors
