// The HTTP endpoint: prometheus-cpp's Exposer on civetweb, serving the telemetry path and a
// landing page at "/", with TLS and basic authentication from --web.config.file (web_config.h).
#pragma once

#include <prometheus/collectable.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rail/base/errors.h"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace rail::web {

struct WebOptions {
  std::vector<std::string> listen_addresses{":9840"};  // node_exporter spelling: ":9840"
  std::string telemetry_path = "/metrics";
  // --web.max-connections: connections held at once. civetweb 1.15 holds each on a worker thread
  // of its own, so this many threads start with the server; lowered at start to what
  // RLIMIT_NOFILE and the cgroup's pids.max admit (connection_limits.h).
  int max_connections = 1000;
  // civetweb's request_timeout_ms: the most a connection may take for its TLS handshake and its
  // request headers (idle and slow-header clients are closed after it), and for taking the
  // response. Prometheus sends its headers at once; its scrape timeout defaults to 10 s, and a
  // scrape that finds every worker taken waits for one to time out.
  int request_timeout_ms = 5000;
  // --web.config.file; empty: plain HTTP without authentication.
  std::string config_file;
  // Whether the process has finished starting, for /-/ready; empty: ready as soon as it serves.
  std::function<bool()> is_ready;
  // POST /-/reload (--web.enable-lifecycle): applies the configuration again and returns nullopt,
  // or the reason it was refused. Empty: /-/reload answers 403.
  std::function<std::optional<std::string>()> reload;
};

// Health paths, answered without credentials (kubelet and load balancers probe them with none)
// and telling nothing but a status: 200 "OK" while the server serves, and for kReadyPath once
// WebOptions::is_ready says so, 503 before.
inline constexpr const char* kHealthyPath = "/-/healthy";
inline constexpr const char* kReadyPath = "/-/ready";
// The lifecycle path, behind the same authentication as every other path.
inline constexpr const char* kReloadPath = "/-/reload";

class WebError : public base::InputError {
 public:
  using base::InputError::InputError;
};

// ":9840" -> "9840" (all addresses), "127.0.0.1:0" stays, "[::1]:9840" stays.
// Throws WebError for text that is not [host]:port.
std::string ToCivetwebPort(const std::string& listen_address);

class WebServer {
 public:
  // Loads options.config_file (throws WebConfigError naming the key), then starts listening;
  // throws WebError with civetweb's reason when an address cannot be bound. With basic auth
  // every path but the health paths answers 401 without valid credentials, and
  // rail_exporter_http_auth_failures_total joins the telemetry path. `landing_page` renders the
  // HTML of "/"; there is one landing page per process.
  WebServer(const WebOptions& options, std::weak_ptr<prometheus::Collectable> metrics,
            std::function<std::string()> landing_page);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  std::vector<int> ListeningPorts() const;

 private:
  std::shared_ptr<prometheus::Registry> web_metrics_;  // outlives exposer_
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace rail::web
