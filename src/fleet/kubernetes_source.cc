// Kubernetes discovery: the agents of a DaemonSet behind a Service, listed from the Service's
// EndpointSlices (discovery.k8s.io/v1) with the pod's service account.
//
// It polls rather than watches. A watch holds one long-lived connection per agent on the API
// server, and a fleet is thousands of agents; a plain list every refresh_interval (30 s by
// default) is what the API server's watch cache answers cheaply, without touching etcd, and a
// poll needs no reconnect or resourceVersion bookkeeping when a connection drops.
//
// libcurl is opened when the first Kubernetes source is created, not linked (curl_library.h says
// why); without it every Fetch fails with the reason, and the agent goes on serving.
#include "fleet/kubernetes_source.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fleet/curl_library.h"

namespace rail::fleet {

namespace {

// A page of at most this many slices; a Service with more is read in several pages.
constexpr int kPageLimit = 500;
// Bounds what a broken or hostile API server can make an agent read or loop over.
constexpr std::size_t kMaxResponseBytes = std::size_t{64} << 20;
constexpr int kMaxPages = 1000;
// The port used when the configuration names none and the slice has several.
constexpr std::string_view kDefaultPortName = "responder";

struct CurlEasyCleanup {
  const CurlApi* curl = nullptr;
  void operator()(CURL* handle) const { curl->easy_cleanup(handle); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyCleanup>;

struct CurlListFree {
  const CurlApi* curl = nullptr;
  void operator()(curl_slist* list) const { curl->slist_free_all(list); }
};
using CurlHeaders = std::unique_ptr<curl_slist, CurlListFree>;

struct CurlFree {
  const CurlApi* curl = nullptr;
  void operator()(char* text) const { curl->free(text); }
};

std::string Trimmed(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

std::optional<std::string> ReadTrimmedFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return Trimmed(content.str());
}

// Error text goes into one log line and a metric's neighbourhood: no newlines, bounded length.
std::string OneLine(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  constexpr std::size_t kMax = 300;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::size_t AppendBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const std::size_t bytes = size * count;
  if (body->size() + bytes > kMaxResponseBytes) return 0;  // curl fails with CURLE_WRITE_ERROR
  body->append(data, bytes);
  return bytes;
}

struct HttpResponse {
  long status = 0;
  std::string body;
};

std::string JsonString(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The API server answers errors with a Status object; its message says what went wrong
// ("endpointslices.discovery.k8s.io is forbidden: User ... cannot list ...").
std::string StatusError(const HttpResponse& response) {
  std::string error = "HTTP " + std::to_string(response.status);
  const auto status = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  const std::string message = JsonString(status, "message");
  if (!message.empty()) return error + ": " + message;
  if (!response.body.empty()) error += ": " + response.body;
  return error;
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

struct Found {
  Target target;
  std::string pod;  // "" without a Pod targetRef
  bool ipv6 = false;
};

// The ready endpoints of one slice. Addresses of one endpoint are one pod and fungible (the API
// lets consumers use only the first), so each endpoint is one target.
bool AppendSliceTargets(const nlohmann::json& slice, const std::string& port_name,
                        std::vector<Found>* found, std::string* error) {
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
    Found entry;
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

// A dual-stack Service has an IPv4 and an IPv6 slice for the same pods. One pod must be one peer
// in every agent's plan, so a pod listed in both families keeps its IPv4 address (a rule every
// agent applies alike to the same list).
std::vector<Target> OnePerPod(std::vector<Found> found) {
  std::set<std::string> pods_with_ipv4;
  for (const Found& entry : found) {
    if (!entry.ipv6 && !entry.pod.empty()) pods_with_ipv4.insert(entry.pod);
  }
  std::vector<Target> targets;
  for (Found& entry : found) {
    if (entry.ipv6 && pods_with_ipv4.contains(entry.pod)) continue;
    targets.push_back(std::move(entry.target));
  }
  return targets;
}

class KubernetesSource final : public Source {
 public:
  KubernetesSource(KubernetesConfig config, const CurlApi* curl, std::string curl_error)
      : config_(std::move(config)), curl_(curl), curl_error_(std::move(curl_error)) {
    namespace_ = config_.namespace_;
    if (namespace_.empty()) namespace_ = ReadTrimmedFile(config_.namespace_file).value_or("");
    name_ = "kubernetes:" + namespace_ + "/" + config_.service;
    while (!config_.api_server.empty() && config_.api_server.back() == '/') {
      config_.api_server.pop_back();
    }
  }

  std::string Name() const override { return name_; }
  base::Duration RefreshInterval() const override { return config_.refresh_interval; }

  FetchResult Fetch() override {
    FetchResult result;
    if (curl_ == nullptr) {
      result.error = curl_error_;
      return result;
    }
    if (namespace_.empty()) {
      result.error = "no namespace configured and none readable from " + config_.namespace_file;
      return result;
    }
    // Re-read every refresh: kubelet rotates projected service account tokens.
    const auto token = ReadTrimmedFile(config_.token_file);
    if (!token || token->empty()) {
      result.error = "cannot read a service account token from " + config_.token_file;
      return result;
    }
    if (!handle_) handle_ = CurlEasy(curl_->easy_init(), CurlEasyCleanup{curl_});
    if (!handle_) {
      result.error = "curl_easy_init failed";
      return result;
    }
    const auto deadline = std::chrono::steady_clock::now() + config_.timeout;
    std::vector<Found> found;
    std::string continue_token;
    for (int page = 0; page < kMaxPages; ++page) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= std::chrono::milliseconds::zero()) {
        result.error = "listing EndpointSlices took longer than the timeout";
        return result;
      }
      HttpResponse response;
      if (!Get(PageUrl(continue_token), *token, left, &response, &result.error)) return result;
      // A 410 (an expired continue token) also fails this refresh; the next starts a new list.
      if (response.status != 200) {
        result.error = OneLine(StatusError(response));
        return result;
      }
      if (!ParsePage(response.body, &found, &continue_token, &result.error)) return result;
      if (continue_token.empty()) {
        result.targets = OnePerPod(std::move(found));
        return result;
      }
    }
    result.error = "EndpointSlice list did not end within " + std::to_string(kMaxPages) + " pages";
    return result;
  }

 private:
  std::string Escaped(const std::string& text) const {
    const std::unique_ptr<char, CurlFree> escaped(
        curl_->easy_escape(handle_.get(), text.c_str(), static_cast<int>(text.size())),
        CurlFree{curl_});
    return escaped ? std::string(escaped.get()) : std::string();
  }

  std::string PageUrl(const std::string& continue_token) const {
    std::string url = config_.api_server + "/apis/discovery.k8s.io/v1/namespaces/" +
                      Escaped(namespace_) + "/endpointslices?labelSelector=" +
                      Escaped("kubernetes.io/service-name=" + config_.service) +
                      "&limit=" + std::to_string(kPageLimit);
    if (!continue_token.empty()) url += "&continue=" + Escaped(continue_token);
    return url;
  }

  bool Get(const std::string& url, const std::string& token, std::chrono::milliseconds timeout,
           HttpResponse* response, std::string* error) {
    CURL* curl = handle_.get();
    const CurlApi& api = *curl_;
    api.easy_reset(curl);  // keeps the connection cache: the next page reuses the connection
    const std::string authorization = "Authorization: Bearer " + token;
    const CurlHeaders headers(api.slist_append(api.slist_append(nullptr, authorization.c_str()),
                                               "Accept: application/json"),
                              CurlListFree{curl_});
    char curl_error[CURL_ERROR_SIZE] = {};
    api.easy_setopt(curl, CURLOPT_URL, url.c_str());
    api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    api.easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // the fleet thread is one of many
    api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    api.easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxResponseBytes));
    api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
    api.easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
    const CURLcode code = api.easy_perform(curl);
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);  // the buffer is about to go
    api.easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
    if (code != CURLE_OK) {
      std::string reason = curl_error[0] != '\0' ? curl_error : api.easy_strerror(code);
      // curl words a timeout by the stage it hit ("SSL connection timeout", "Operation timed
      // out ..."); the user needs to know it was ours, and after how long.
      if (code == CURLE_OPERATION_TIMEDOUT) {
        reason = "timed out after " + std::to_string(timeout.count()) + " ms (" + reason + ")";
      }
      *error = OneLine("GET " + config_.api_server + ": " + reason);
      return false;
    }
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
    return true;
  }

  bool ParsePage(const std::string& body, std::vector<Found>* found, std::string* continue_token,
                 std::string* error) const {
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
        if (!AppendSliceTargets(slice, config_.port_name, found, error)) return false;
      }
    }
    *continue_token = JsonString(list.value("metadata", nlohmann::json()), "continue");
    return true;
  }

  KubernetesConfig config_;
  std::string namespace_;
  std::string name_;
  const CurlApi* curl_ = nullptr;  // nullptr: libcurl could not be loaded, curl_error_ says why
  std::string curl_error_;
  CurlEasy handle_;  // kept across refreshes: its connection to the API server is reused
};

}  // namespace

std::unique_ptr<Source> MakeKubernetesSourceWith(KubernetesConfig config, const CurlApi* curl,
                                                 std::string curl_error) {
  return std::make_unique<KubernetesSource>(std::move(config), curl, std::move(curl_error));
}

std::unique_ptr<Source> MakeKubernetesSource(KubernetesConfig config) {
  std::string error;
  const CurlLibrary* library = CurlLibrary::Process(&error);
  return MakeKubernetesSourceWith(std::move(config), library != nullptr ? &library->api() : nullptr,
                                  std::move(error));
}

}  // namespace rail::fleet
