// The kernel's answer to DCB_CMD_IEEE_GET, as net/dcb/dcbnl.c (dcbnl_ieee_fill) lays it out:
//   struct dcbmsg { dcb_family, cmd = DCB_CMD_IEEE_GET }
//   DCB_ATTR_IFNAME
//   DCB_ATTR_IEEE (nested): DCB_ATTR_IEEE_ETS, _MAXRATE, _QCN..., DCB_ATTR_IEEE_PFC (struct
//   ieee_pfc),
//     DCB_ATTR_DCB_BUFFER, DCB_ATTR_IEEE_APP_TABLE (nested DCB_ATTR_IEEE_APP, struct dcb_app each),
//     the peer's settings
//   DCB_ATTR_DCBX (u8), when the driver reports its DCBX mode
// libmnl walks the messages and attributes; only the payload structs are ours to read.
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rail/nic/dcb.h"

namespace rail::nic {
namespace {

struct ParseState {
  DcbConfig config;
  bool answered = false;  // a DCB message came
  std::string malformed;  // why the answer does not parse
};

int OnAppEntry(const nlattr* attribute, void* data) {
  auto& state = *static_cast<ParseState*>(data);
  if (mnl_attr_get_type(attribute) != DCB_ATTR_IEEE_APP) return MNL_CB_OK;
  if (mnl_attr_validate2(attribute, MNL_TYPE_BINARY, sizeof(dcb_app)) < 0) {
    state.malformed =
        "DCB_ATTR_IEEE_APP of " + std::to_string(mnl_attr_get_payload_len(attribute)) + " bytes";
    return MNL_CB_ERROR;
  }
  dcb_app app;
  std::memcpy(&app, mnl_attr_get_payload(attribute), sizeof app);
  if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP) {
    state.config.dscp_map.push_back({app.protocol, app.priority});
  }
  return MNL_CB_OK;
}

int OnIeeeAttribute(const nlattr* attribute, void* data) {
  auto& state = *static_cast<ParseState*>(data);
  switch (mnl_attr_get_type(attribute)) {
    case DCB_ATTR_IEEE_PFC: {
      if (mnl_attr_validate2(attribute, MNL_TYPE_BINARY, sizeof(ieee_pfc)) < 0) {
        state.malformed = "DCB_ATTR_IEEE_PFC of " +
                          std::to_string(mnl_attr_get_payload_len(attribute)) + " bytes";
        return MNL_CB_ERROR;
      }
      ieee_pfc pfc;
      std::memcpy(&pfc, mnl_attr_get_payload(attribute), sizeof pfc);
      PfcConfig& out = state.config.pfc.emplace();
      out.enabled = pfc.pfc_en;
      out.capability = pfc.pfc_cap;
      std::copy(std::begin(pfc.requests), std::end(pfc.requests), out.requests.begin());
      std::copy(std::begin(pfc.indications), std::end(pfc.indications), out.indications.begin());
      return MNL_CB_OK;
    }
    case DCB_ATTR_IEEE_APP_TABLE:
      if (mnl_attr_validate(attribute, MNL_TYPE_NESTED) < 0) {
        state.malformed = "DCB_ATTR_IEEE_APP_TABLE is not a nested attribute";
        return MNL_CB_ERROR;
      }
      return mnl_attr_parse_nested(attribute, OnAppEntry, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
    default:
      return MNL_CB_OK;  // ETS, rates, buffers, the peer's settings: not read
  }
}

int OnTopAttribute(const nlattr* attribute, void* data) {
  auto& state = *static_cast<ParseState*>(data);
  switch (mnl_attr_get_type(attribute)) {
    case DCB_ATTR_IEEE:
      if (mnl_attr_validate(attribute, MNL_TYPE_NESTED) < 0) {
        state.malformed = "DCB_ATTR_IEEE is not a nested attribute";
        return MNL_CB_ERROR;
      }
      return mnl_attr_parse_nested(attribute, OnIeeeAttribute, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
    case DCB_ATTR_DCBX:
      if (mnl_attr_validate(attribute, MNL_TYPE_U8) < 0) {
        state.malformed = "DCB_ATTR_DCBX is not a u8";
        return MNL_CB_ERROR;
      }
      state.config.dcbx = mnl_attr_get_u8(attribute);
      return MNL_CB_OK;
    default:
      return MNL_CB_OK;
  }
}

int OnMessage(const nlmsghdr* message, void* data) {
  auto& state = *static_cast<ParseState*>(data);
  if (message->nlmsg_type != RTM_GETDCB) {
    state.malformed = "message type " + std::to_string(message->nlmsg_type) + ", not RTM_GETDCB";
    return MNL_CB_ERROR;
  }
  if (mnl_nlmsg_get_payload_len(message) < sizeof(dcbmsg)) {
    state.malformed = "RTM_GETDCB without its dcbmsg header";
    return MNL_CB_ERROR;
  }
  const auto* header = static_cast<const dcbmsg*>(mnl_nlmsg_get_payload(message));
  if (header->cmd != DCB_CMD_IEEE_GET) {
    state.malformed = "DCB command " + std::to_string(header->cmd) + ", not DCB_CMD_IEEE_GET";
    return MNL_CB_ERROR;
  }
  state.answered = true;
  return mnl_attr_parse(message, sizeof(dcbmsg), OnTopAttribute, data) < 0 ? MNL_CB_ERROR
                                                                           : MNL_CB_STOP;
}

DcbConfig Failed(DcbState state, std::string why) {
  DcbConfig config;
  config.state = state;
  config.error = std::move(why);
  return config;
}

}  // namespace

const char* DcbStateName(DcbState state) {
  switch (state) {
    case DcbState::kAvailable:
      return "available";
    case DcbState::kNotSupported:
      return "not_supported";
    case DcbState::kNoSuchDevice:
      return "no_such_device";
    case DcbState::kError:
      return "error";
  }
  return "error";
}

std::string PfcConfig::EnabledText() const {
  std::string text;
  for (unsigned priority = 0; priority < kPriorities; ++priority) {
    if (EnabledOn(priority)) text += (text.empty() ? "" : ",") + std::to_string(priority);
  }
  return text.empty() ? "none" : text;
}

const char* TrustName(Trust trust) {
  return trust == Trust::kDscp ? "dscp" : "pcp";
}

DcbConfig ParseDcbAnswer(std::span<const std::byte> answer, std::uint32_t sequence,
                         std::uint32_t port_id) {
  ParseState state;
  errno = 0;
  const int result = mnl_cb_run(answer.data(), answer.size(), sequence, port_id, OnMessage, &state);
  if (result < 0 && state.malformed.empty()) {
    // An NLMSG_ERROR from the kernel (libmnl puts its error code in errno), or a sequence or
    // port that is not ours.
    const int error = errno;
    if (error == EOPNOTSUPP) {
      return Failed(DcbState::kNotSupported,
                    "the netdev has no DCB operations (the kernel answers EOPNOTSUPP)");
    }
    if (error == ENODEV) return Failed(DcbState::kNoSuchDevice, "no such netdev (ENODEV)");
    return Failed(DcbState::kError, std::string("RTM_GETDCB: ") + std::strerror(error));
  }
  if (!state.malformed.empty()) {
    return Failed(DcbState::kError, "malformed RTM_GETDCB answer: " + state.malformed);
  }
  if (!state.answered) return Failed(DcbState::kError, "no RTM_GETDCB answer");
  state.config.state = DcbState::kAvailable;
  std::sort(state.config.dscp_map.begin(), state.config.dscp_map.end());
  return std::move(state.config);
}

}  // namespace rail::nic
