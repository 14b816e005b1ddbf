// Kubernetes discovery: the agents of a DaemonSet behind a Service, listed from the Service's
// EndpointSlices (discovery.k8s.io/v1) with the pod's service account.
//
// It polls rather than watches. A watch holds one long-lived connection per agent on the API
// server, and a fleet is thousands of agents; a plain list every refresh_interval (30 s by
// default) is what the API server's watch cache answers cheaply, without touching etcd, and a
// poll needs no reconnect or resourceVersion bookkeeping when a connection drops. A list comes in
// pages; it is published whole or not at all (List says when it starts again).
//
// libcurl is opened when the first Kubernetes source is created, not linked (curl_library.h says
// why); without it every Fetch fails with the reason, and the agent goes on serving.
#include "fleet/kubernetes_source.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fleet/curl_library.h"
#include "fleet/endpoint_slices.h"

namespace rail::fleet {

namespace {

// A page of at most this many slices (of up to 100 endpoints each, the EndpointSlice
// controller's default); a Service with more is read in several pages, joined by `continue`.
constexpr int kPageLimit = 100;
// A list whose continue token expired, or that changed between its pages, is started again from
// the first page, at most this many times in one refresh; then the refresh fails.
constexpr int kMaxListRestarts = 3;
constexpr long kHttpGone = 410;
// Bounds what a broken or hostile API server can make an agent read or loop over.
constexpr std::size_t kMaxResponseBytes = std::size_t{64} << 20;
constexpr int kMaxPages = 1000;

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

// curl's progress callback (at least once a second, also while nothing arrives): a nonzero
// return ends the transfer with CURLE_ABORTED_BY_CALLBACK once the agent stops.
int EndWhenAbandoned(void* deadline, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const base::Deadline*>(deadline)->Abandoned() ? 1 : 0;
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

  FetchResult Fetch(const base::Clock& clock, const std::atomic<bool>& abandon) override {
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
    const auto deadline = base::Deadline::After(clock, config_.timeout).OrWhenSet(abandon);
    std::string restarts;  // why each attempt restarted
    for (int attempt = 0; attempt <= kMaxListRestarts; ++attempt) {
      std::vector<SliceEndpoint> found;
      std::string why;
      const ListEnd end = List(*token, deadline, &found, &why);
      if (end == ListEnd::kComplete) {
        result.targets = OnePerPod(std::move(found));
        return result;
      }
      if (end == ListEnd::kFailed) {
        result.error = OneLine(why);
        return result;
      }
      restarts += (restarts.empty() ? "" : "; ") + why;
    }
    result.error = OneLine("no consistent EndpointSlice list after " +
                           std::to_string(kMaxListRestarts + 1) + " attempts (" + restarts + ")");
    return result;
  }

 private:
  enum class ListEnd { kComplete, kRestart, kFailed };

  // One list, page by page from the first. A page whose continue token expired (410 Gone: the API
  // server compacted the revision the list began at) or that belongs to another revision than
  // the first page (a slice changed between the pages) restarts the list: its pages no longer add
  // up to one consistent list, and half a list would plan a partial fleet.
  ListEnd List(const std::string& token, const base::Deadline& deadline,
               std::vector<SliceEndpoint>* found, std::string* why) {
    std::string continue_token;
    std::optional<std::string> version;  // the first page's resourceVersion
    for (int page = 1; page <= kMaxPages; ++page) {
      if (deadline.Passed()) {
        *why = "listing EndpointSlices took longer than the timeout";
        return ListEnd::kFailed;
      }
      HttpResponse response;
      if (!Get(PageUrl(continue_token), token, deadline, &response, why)) return ListEnd::kFailed;
      if (response.status == kHttpGone && !continue_token.empty()) {
        *why = "page " + std::to_string(page) + ": the continue token expired (HTTP 410)";
        return ListEnd::kRestart;
      }
      if (response.status != 200) {
        *why = StatusError(response.status, response.body);
        return ListEnd::kFailed;
      }
      SlicePage parsed;
      if (!ParseSlicePage(response.body, config_.port_name, found, &parsed, why)) {
        return ListEnd::kFailed;
      }
      if (version && parsed.resource_version != *version) {
        *why = "page " + std::to_string(page) + " is of resourceVersion " +
               parsed.resource_version + ", the list began at " + *version;
        return ListEnd::kRestart;
      }
      version = parsed.resource_version;
      continue_token = parsed.continue_token;
      if (continue_token.empty()) return ListEnd::kComplete;
    }
    *why = "EndpointSlice list did not end within " + std::to_string(kMaxPages) + " pages";
    return ListEnd::kFailed;
  }

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

  bool Get(const std::string& url, const std::string& token, const base::Deadline& deadline,
           HttpResponse* response, std::string* error) {
    const auto timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline.Remaining());
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
    api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &EndWhenAbandoned);
    api.easy_setopt(curl, CURLOPT_XFERINFODATA, &deadline);
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
      } else if (code == CURLE_ABORTED_BY_CALLBACK) {
        reason = "abandoned: the agent is stopping";
      }
      *error = OneLine("GET " + config_.api_server + ": " + reason);
      return false;
    }
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
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
