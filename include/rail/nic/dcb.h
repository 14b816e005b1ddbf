// The QoS configuration a netdev's driver reports through DCB netlink (RTM_GETDCB with
// DCB_CMD_IEEE_GET, as `dcb pfc show` and `dcb app show` ask it): IEEE PFC and the IEEE
// application table. One parser for the kernel's answer, whether it comes from a socket
// (NetlinkDcbReader) or from a recorded answer (RecordedDcbReader), so that tests exercise the
// code the agent runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rail::nic {

// Priorities and traffic classes of IEEE 802.1Qaz (IEEE_8021QAZ_MAX_TCS).
inline constexpr unsigned kPriorities = 8;

// What the kernel answered for one netdev.
enum class DcbState {
  kAvailable,     // the driver implements DCB: the configuration below is what it reports
  kNotSupported,  // EOPNOTSUPP: the netdev has no DCB operations (veth, most virtual devices)
  kNoSuchDevice,  // ENODEV: no netdev of that name in the agent's network namespace
  kError,         // anything else (a socket error, an answer that does not parse)
};

// "available", "not_supported", "no_such_device", "error": the `state` label.
const char* DcbStateName(DcbState state);

// DCB_ATTR_IEEE_PFC (struct ieee_pfc).
struct PfcConfig {
  std::uint8_t enabled = 0;     // pfc_en: bit p set = PFC on priority p
  std::uint8_t capability = 0;  // pfc_cap: how many priorities may have PFC at once
  // PFC frames sent (requests) and received (indications) per priority, as far as the driver
  // counts them (mlx5 does; zeros otherwise).
  std::array<std::uint64_t, kPriorities> requests{};
  std::array<std::uint64_t, kPriorities> indications{};

  bool EnabledOn(unsigned priority) const {
    return priority < kPriorities && (enabled >> priority & 1) != 0;
  }
  // The priorities with PFC on, as `dcb pfc show` lists them: "3", "3,4" or "none".
  std::string EnabledText() const;
};

// One DCB_ATTR_IEEE_APP entry with selector IEEE_8021QAZ_APP_SEL_DSCP: packets with this DSCP
// are given this priority.
struct DscpMapping {
  unsigned dscp = 0;
  unsigned priority = 0;
  auto operator<=>(const DscpMapping&) const = default;
};

// How the NIC classifies received packets into priorities. mlx5 switches to DSCP trust with the
// first DSCP entry of the app table and back to PCP with the last one removed, so the table says
// which: no separate attribute exists before Linux 6.3's trust table.
enum class Trust { kPcp, kDscp };
const char* TrustName(Trust trust);  // "pcp", "dscp"

struct DcbConfig {
  DcbState state = DcbState::kError;
  std::string error;  // why, for people, unless available
  // Absent when the driver reports no PFC configuration (no ieee_getpfc).
  std::optional<PfcConfig> pfc;
  std::vector<DscpMapping> dscp_map;  // sorted by DSCP
  // DCB_ATTR_DCBX: the DCBX mode bits (DCB_CAP_DCBX_*); absent when the driver has no getdcbx.
  std::optional<std::uint8_t> dcbx;

  Trust trust() const { return dscp_map.empty() ? Trust::kPcp : Trust::kDscp; }
};

// Parses the kernel's answer to an RTM_GETDCB DCB_CMD_IEEE_GET request: one RTM_GETDCB message,
// or an NLMSG_ERROR. `sequence` and `port_id` are checked when non-zero (0 for recorded answers).
DcbConfig ParseDcbAnswer(std::span<const std::byte> answer, std::uint32_t sequence = 0,
                         std::uint32_t port_id = 0);

// Reads a netdev's DCB configuration. Implementations are safe to call from several threads.
class DcbReader {
 public:
  virtual ~DcbReader() = default;
  virtual DcbConfig Read(const std::string& netdev) const = 0;
};

// Asks the kernel over rtnetlink, in the agent's network namespace. Needs no privilege: the
// kernel requires CAP_NET_ADMIN for RTM_SETDCB only.
class NetlinkDcbReader final : public DcbReader {
 public:
  DcbConfig Read(const std::string& netdev) const override;
};

// Answers recorded in a folder, one file per netdev: <folder>/<netdev>.nlmsg holds the raw bytes
// the kernel sent. A netdev without a file reads as kNoSuchDevice.
class RecordedDcbReader final : public DcbReader {
 public:
  explicit RecordedDcbReader(std::string folder) : folder_(std::move(folder)) {}
  DcbConfig Read(const std::string& netdev) const override;

 private:
  std::string folder_;
};

}  // namespace rail::nic
