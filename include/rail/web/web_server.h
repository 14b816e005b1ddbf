// The HTTP endpoint: the telemetry path (prometheus-cpp's text format), a landing page at "/", the
// health and lifecycle paths, with TLS and basic authentication from --web.config.file
// (web_config.h). Served by an event-driven listener (src/web/http_listener.h): one event loop
// and two handler threads whatever the number of connections.
#pragma once

#include <prometheus/collectable.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/base/errors.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace rail::web {

namespace detail {
class HttpListener;
class Router;
}  // namespace detail

struct WebOptions {
  std::vector<std::string> listen_addresses{":9840"};  // node_exporter spelling: ":9840"
  std::string telemetry_path = "/metrics";
  // --web.max-connections: connections held at once (a descriptor and a few KiB each, no thread);
  // lowered at start to what RLIMIT_NOFILE admits (connection_limits.h). Beyond it the kernel's
  // listen backlog holds new connections until one closes.
  int max_connections = 1000;
  // The most a connection may take for its TLS handshake and a whole request (idle and
  // slow-header clients are closed after it, however slowly they trickle), to send its next
  // request on a kept-alive connection, and for taking the response. Prometheus sends its
  // request at once.
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

struct ListenAddress {
  std::string host;  // an IP address, or "" for every address
  int port = 0;
};

// node_exporter's spellings: ":9840" (every address), "127.0.0.1:0", "localhost:9840" (as
// 127.0.0.1), "[::1]:9840". Throws WebError for text that is not [host]:port.
ListenAddress ParseListenAddress(const std::string& listen_address);

class WebServer {
 public:
  // Loads options.config_file (throws WebConfigError naming the key), then starts listening;
  // throws WebError with the reason when an address cannot be bound. With basic auth every path
  // but the health paths answers 401 without valid credentials, and
  // rail_exporter_http_auth_failures_total joins the telemetry path, as do the endpoint's own
  // connection figures. `landing_page` renders the HTML of "/".
  WebServer(const WebOptions& options, std::weak_ptr<prometheus::Collectable> metrics,
            std::function<std::string()> landing_page);
  // Refuses new requests (503), lets those in flight finish, then stops every thread.
  ~WebServer();
  // The same now, with requests in flight cut at `by` (the agent's stop deadline) if sooner.
  void Stop(const base::Deadline& by);
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  std::vector<int> ListeningPorts() const;

 private:
  std::shared_ptr<prometheus::Registry> web_metrics_;  // outlives listener_
  std::unique_ptr<detail::Router> router_;             // outlives listener_
  std::unique_ptr<detail::HttpListener> listener_;
};

}  // namespace rail::web
