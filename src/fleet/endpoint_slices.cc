#include "fleet/endpoint_slices.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace rail::fleet {
namespace {

// The port used when the configuration names none and the slice has several.
constexpr std::string_view kDefaultPortName = "responder";

std::string JsonString(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The port of `slice` that the configuration asks for, or an error naming what the slice has.
std::optional<std::uint16_t> ChoosePort(const nlohmann::json& slice, const std::string& wanted,
                                        std::string* error) {
  std::map<std::string, std::uint16_t> ports;
  const auto list = slice.find("ports");
  if (list != slice.end() && list->is_array()) {
    for (const auto& port : *list) {
      const auto number = port.find("port");
      if (!port.is_object() || number == port.end() || !number->is_number_unsigned()) continue;
      const auto value = number->get<std::uint64_t>();
      if (value == 0 || value > 65535) continue;
      ports[JsonString(port, "name")] = static_cast<std::uint16_t>(value);
    }
  }
  const std::string name = wanted.empty() ? std::string(kDefaultPortName) : wanted;
  if (const auto it = ports.find(name); it != ports.end()) return it->second;
  if (wanted.empty() && ports.size() == 1) return ports.begin()->second;
  std::string names;
  for (const auto& [port_name, number] : ports) {
    names += (names.empty() ? "" : ", ") + (port_name.empty() ? "(unnamed)" : port_name) + "=" +
             std::to_string(number);
  }
  *error = "EndpointSlice " + JsonString(slice.value("metadata", nlohmann::json()), "name") +
           " has no port named \"" + name + "\" (ports: " + (names.empty() ? "none" : names) + ")";
  return std::nullopt;
}

// nil `ready` means ready (discovery.k8s.io/v1 EndpointConditions); only an explicit false is not.
bool Ready(const nlohmann::json& endpoint) {
  const auto conditions = endpoint.find("conditions");
  if (conditions == endpoint.end() || !conditions->is_object()) return true;
  const auto ready = conditions->find("ready");
  return ready == conditions->end() || !ready->is_boolean() || ready->get<bool>();
}

// The ready endpoints of one slice. Addresses of one endpoint are one pod and fungible (the API
// lets consumers use only the first), so each endpoint is one target.
bool AppendSliceTargets(const nlohmann::json& slice, const std::string& port_name,
                        std::vector<SliceEndpoint>* found, std::string* error) {
  const std::string type = JsonString(slice, "addressType");
  if (type != "IPv4" && type != "IPv6") return true;  // FQDN slices name no address to probe
  const auto endpoints = slice.find("endpoints");
  if (endpoints == slice.end() || !endpoints->is_array() || endpoints->empty()) return true;
  const auto port = ChoosePort(slice, port_name, error);
  if (!port) return false;
  const bool ipv6 = type == "IPv6";
  for (const auto& endpoint : *endpoints) {
    if (!endpoint.is_object() || !Ready(endpoint)) continue;
    const auto addresses = endpoint.find("addresses");
    if (addresses == endpoint.end() || !addresses->is_array() || addresses->empty() ||
        !addresses->front().is_string()) {
      continue;
    }
    const std::string host = addresses->front().get<std::string>();
    SliceEndpoint entry;
    entry.ipv6 = ipv6;
    entry.target.address = (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(*port);
    if (const std::string node = JsonString(endpoint, "nodeName"); !node.empty()) {
      entry.target.labels["node"] = node;
    }
    const auto target_ref = endpoint.value("targetRef", nlohmann::json());
    if (JsonString(target_ref, "kind") == "Pod" && !JsonString(target_ref, "name").empty()) {
      entry.pod = JsonString(target_ref, "namespace") + "/" + JsonString(target_ref, "name");
      entry.target.labels["pod"] = JsonString(target_ref, "name");
    }
    found->push_back(std::move(entry));
  }
  return true;
}

}  // namespace

bool ParseSlicePage(const std::string& body, const std::string& port_name,
                    std::vector<SliceEndpoint>* found, SlicePage* page, std::string* error) {
  const auto list = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded()) {
    *error = "the API server's answer is not JSON";
    return false;
  }
  const auto items = list.is_object() ? list.find("items") : list.end();
  if (JsonString(list, "kind") != "EndpointSliceList" || items == list.end() ||
      !(items->is_array() || items->is_null())) {
    *error = "the API server's answer is not an EndpointSliceList";
    return false;
  }
  if (items->is_array()) {
    for (const auto& slice : *items) {
      if (!slice.is_object()) continue;
      if (!AppendSliceTargets(slice, port_name, found, error)) return false;
    }
  }
  const auto metadata = list.value("metadata", nlohmann::json());
  page->continue_token = JsonString(metadata, "continue");
  page->resource_version = JsonString(metadata, "resourceVersion");
  return true;
}

std::vector<Target> OnePerPod(std::vector<SliceEndpoint> found) {
  std::set<std::string> pods_with_ipv4;
  for (const SliceEndpoint& entry : found) {
    if (!entry.ipv6 && !entry.pod.empty()) pods_with_ipv4.insert(entry.pod);
  }
  std::vector<Target> targets;
  for (SliceEndpoint& entry : found) {
    if (entry.ipv6 && pods_with_ipv4.contains(entry.pod)) continue;
    targets.push_back(std::move(entry.target));
  }
  return targets;
}

// The API server answers errors with a Status object; its message says what went wrong
// ("endpointslices.discovery.k8s.io is forbidden: User ... cannot list ...").
std::string StatusError(long code, const std::string& body) {
  std::string error = "HTTP " + std::to_string(code);
  const auto status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const std::string message = JsonString(status, "message");
  if (!message.empty()) return error + ": " + message;
  if (!body.empty()) error += ": " + body;
  return error;
}

}  // namespace rail::fleet
