// The rails' QoS configuration as their drivers report it through DCB netlink (what `dcb pfc
// show` and `dcb app show` print), and RoCE ECN enablement where a driver exposes it in sysfs.
// Whether it is right is the qos_config check's to say, in the health collector.
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

using detail::Labels;

class QosFamilies {
 public:
  void Add(const inventory::RailQos& qos) {
    const Labels rail = {{"rail", qos.rail}, {"netdev", qos.netdev}};
    dcb_.Add(With(rail, {{"state", nic::DcbStateName(qos.dcb.state)}}), 1);
    if (qos.dcb.pfc) AddPfc(rail, *qos.dcb.pfc);
    if (qos.dcb.state == nic::DcbState::kAvailable) {
      trust_.Add(With(rail, {{"trust", nic::TrustName(qos.dcb.trust())}}), 1);
    }
    for (const auto& entry : qos.dcb.dscp_map) {
      dscp_.Add(With(rail, {{"dscp", std::to_string(entry.dscp)}}), entry.priority);
    }
    if (qos.ecn) {
      AddEcn(rail, "notification", qos.ecn->notification_point);
      AddEcn(rail, "reaction", qos.ecn->reaction_point);
    }
  }

  void MoveTo(std::vector<prometheus::MetricFamily>& out) {
    for (auto* family : {&dcb_, &pfc_enabled_, &pfc_capability_, &pfc_requests_, &pfc_indications_,
                         &trust_, &dscp_, &ecn_}) {
      family->MoveTo(out);
    }
  }

 private:
  static Labels With(Labels labels, const Labels& more) {
    labels.insert(labels.end(), more.begin(), more.end());
    return labels;
  }

  void AddPfc(const Labels& rail, const nic::PfcConfig& pfc) {
    pfc_capability_.Add(rail, pfc.capability);
    for (unsigned priority = 0; priority < nic::kPriorities; ++priority) {
      const Labels labels = With(rail, {{"priority", std::to_string(priority)}});
      pfc_enabled_.Add(labels, pfc.EnabledOn(priority) ? 1 : 0);
      pfc_requests_.Add(labels, static_cast<double>(pfc.requests[priority]));
      pfc_indications_.Add(labels, static_cast<double>(pfc.indications[priority]));
    }
  }

  void AddEcn(const Labels& rail, const char* point,
              const std::array<std::optional<bool>, nic::kPriorities>& enabled) {
    for (unsigned priority = 0; priority < nic::kPriorities; ++priority) {
      if (!enabled[priority]) continue;
      ecn_.Add(With(rail, {{"point", point}, {"priority", std::to_string(priority)}}),
               *enabled[priority] ? 1 : 0);
    }
  }

  detail::FamilyBuilder dcb_ = detail::Gauge(
      "rail_qos_dcb_info",
      "Whether the rail netdev's driver answers DCB netlink (RTM_GETDCB): state=\"available\", "
      "\"not_supported\" (no DCB operations, e.g. veth: PFC and trust unknown, not off), "
      "\"no_such_device\" or \"error\"; value 1.");
  detail::FamilyBuilder pfc_enabled_ = detail::Gauge(
      "rail_qos_pfc_enabled",
      "1 when priority flow control is enabled on the priority (IEEE PFC pfc_en), else 0.");
  detail::FamilyBuilder pfc_capability_ =
      detail::Gauge("rail_qos_pfc_capability",
                    "How many priorities the NIC can enable PFC on at once (IEEE PFC pfc_cap).");
  detail::FamilyBuilder pfc_requests_ = detail::Counter(
      "rail_qos_pfc_requests_total",
      "PFC frames the NIC sent for the priority, asking its link partner to pause (IEEE PFC "
      "requests, as the driver counts them).");
  detail::FamilyBuilder pfc_indications_ = detail::Counter(
      "rail_qos_pfc_indications_total",
      "PFC frames the NIC received for the priority, pausing its transmitter (IEEE PFC "
      "indications, as the driver counts them).");
  detail::FamilyBuilder trust_ = detail::Gauge(
      "rail_qos_trust_info",
      "How the NIC classifies received packets into priorities: trust=\"dscp\" once the IEEE app "
      "table holds a DSCP entry (mlx5 switches to DSCP trust with the first), else \"pcp\"; "
      "value 1.");
  detail::FamilyBuilder dscp_ = detail::Gauge(
      "rail_qos_dscp_priority",
      "The priority packets with this DSCP are given (IEEE app table, DSCP selector).");
  detail::FamilyBuilder ecn_ = detail::Gauge(
      "rail_qos_roce_ecn_enabled",
      "1 when RoCE ECN is enabled on the priority at the notification point (point=\"notification"
      "\", ecn/roce_np/enable/<p>: CNPs sent for marked packets) or the reaction point "
      "(point=\"reaction\", ecn/roce_rp/enable/<p>: the sender slows down on CNPs), else 0; only "
      "where the driver exposes these files (MLNX_OFED).");
};

class QosCollector final : public Collector {
 public:
  std::string Name() const override { return "qos"; }
  std::string Help() const override {
    return "the rails' PFC, trust and DSCP map (DCB netlink) and RoCE ECN enablement";
  }
  Reads Needs() const override {
    Reads reads;
    reads.qos = true;
    return reads;
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    QosFamilies families;
    for (const auto& qos : scrape.Qos()) families.Add(qos);
    families.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeQosCollector() {
  return std::make_unique<QosCollector>();
}

}  // namespace rail::collectors
