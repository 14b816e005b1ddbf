// The probe worker's messages (worker.h): ProbeParams and ProbeResult as JSON, both directions.
// Agent and worker come from one build, so the encoding needs no versioning of its own; a field
// that fails to parse is a protocol error of that one call.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rail/probe/result.h"

namespace rail::probe::worker {

nlohmann::json ToJson(const ProbeRail& rail);
nlohmann::json ToJson(const std::vector<ProbeRail>& rails);
nlohmann::json ToJson(const ProbeParams& params);
nlohmann::json ToJson(const ProbeResult& result);

// nullopt (and `error` set) when `json` is not what the other side encodes.
std::optional<std::vector<ProbeRail>> RailsFromJson(const nlohmann::json& json, std::string* error);
std::optional<ProbeParams> ParamsFromJson(const nlohmann::json& json, std::string* error);
std::optional<ProbeResult> ResultFromJson(const nlohmann::json& json, std::string* error);

}  // namespace rail::probe::worker
