#include "probe/ucx/context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rail/probe/ucx.h"

namespace rail::probe::detail {

bool UcxTakesMemoryType(ucp_context_h context, ucs_memory_type_t type) {
  ucp_context_attr_t attributes{};
  attributes.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context, &attributes) != UCS_OK) return false;
  return (attributes.memory_types & UCS_BIT(type)) != 0;
}

UcxContextSpec UcxSpecFor(const std::vector<ProbeRail>& rails, const std::string& transports) {
  UcxContextSpec spec;
  for (const ProbeRail& rail : rails) spec.net_devices.push_back(rail.ucx_device);
  spec.transports = transports.empty() ? kUcxDefaultTransports : transports;
  const unsigned count = static_cast<unsigned>(std::max<std::size_t>(rails.size(), 1));
  spec.max_rndv_rails = count;
  if (count > 1) spec.extra_config["MAX_EAGER_RAILS"] = std::to_string(count);
  return spec;
}

std::vector<std::pair<std::string, std::string>> UcxSettings(const UcxContextSpec& spec) {
  std::vector<std::pair<std::string, std::string>> settings;
  if (!spec.net_devices.empty())
    settings.emplace_back("NET_DEVICES", fmt::format("{}", fmt::join(spec.net_devices, ",")));
  if (!spec.transports.empty()) settings.emplace_back("TLS", spec.transports);
  settings.emplace_back("MAX_RNDV_RAILS", std::to_string(spec.max_rndv_rails));
  for (const auto& [key, value] : spec.extra_config) {
    settings.emplace_back(key.starts_with("UCX_") ? key.substr(4) : key, value);
  }
  return settings;
}

UcxContext CreateUcxContext(const UcxContextSpec& spec, std::string* error_reason,
                            std::string* error_message) {
  // UCX_* variables of the environment still apply; the spec overrides them key by key, so
  // that one process can hold contexts restricted to different rails.
  ucp_config_t* raw_config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &raw_config);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_config_read");
    return {};
  }
  const UcxConfig config(NoOwner{}, raw_config);
  for (const auto& [key, value] : UcxSettings(spec)) {
    status = ucp_config_modify(config.get(), key.c_str(), value.c_str());
    if (status != UCS_OK) {
      FailUcx(error_reason, error_message, status, "ucp_config_modify(" + key + "=" + value + ")");
      return {};
    }
  }

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  params.estimated_num_eps = 1;
  params.name = "rail_probe";
  ucp_context_h raw_context = nullptr;
  status = ucp_init(&params, config.get(), &raw_context);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status,
            "ucp_init (devices '" + fmt::format("{}", fmt::join(spec.net_devices, ",")) +
                "', transports '" + spec.transports + "')");
    return {};
  }
  return UcxContext(NoOwner{}, raw_context);
}

}  // namespace rail::probe::detail
