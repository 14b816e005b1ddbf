#include "rail/web/web_server.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <regex>

#include "basic_auth.h"
#include "connection_limits.h"
#include "http_listener.h"
#include "rail/web/web_config.h"
#include "router.h"

namespace rail::web {

ListenAddress ParseListenAddress(const std::string& listen_address) {
  static const std::regex kAddress(R"(^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]*):([0-9]{1,5})$)");
  std::smatch match;
  if (!std::regex_match(listen_address, match, kAddress)) {
    throw WebError("invalid listen address '" + listen_address + "': expected [host]:port");
  }
  const int port = std::stoi(match[2].str());
  if (port > 65535) {
    throw WebError("invalid listen address '" + listen_address + "': port above 65535");
  }
  std::string host = match[1].str();
  if (host == "localhost") host = "127.0.0.1";
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  return {host, port};
}

namespace {

std::vector<detail::Endpoint> Endpoints(const std::vector<std::string>& listen_addresses) {
  std::vector<detail::Endpoint> endpoints;
  for (const auto& address : listen_addresses) {
    const ListenAddress parsed = ParseListenAddress(address);
    endpoints.push_back({parsed.host, static_cast<std::uint16_t>(parsed.port)});
  }
  return endpoints;
}

// rail_exporter_http_auth_failures_total by reason, in `registry`.
detail::AuthFailureCounters AddAuthFailureCounters(prometheus::Registry& registry) {
  auto& failures = prometheus::BuildCounter()
                       .Name("rail_exporter_http_auth_failures_total")
                       .Help(
                           "HTTP requests refused by basic authentication, by reason "
                           "(missing, malformed or invalid credentials).")
                       .Register(registry);
  return {&failures.Add({{"reason", "missing"}}), &failures.Add({{"reason", "malformed"}}),
          &failures.Add({{"reason", "invalid"}})};
}

// The endpoint's own connection figures, in `registry`.
detail::ListenerMetrics AddConnectionMetrics(prometheus::Registry& registry) {
  auto& open = prometheus::BuildGauge()
                   .Name("rail_exporter_http_connections")
                   .Help("HTTP connections the endpoint holds now, idle ones included.")
                   .Register(registry);
  auto& dropped = prometheus::BuildCounter()
                      .Name("rail_exporter_http_connections_dropped_total")
                      .Help(
                          "HTTP connections the endpoint closed without a normal answer, by "
                          "reason: timeout (no whole request before the deadline), "
                          "tls_handshake, bad_request (400), too_large (431 or 413).")
                      .Register(registry);
  return {&open.Add({}),
          {&dropped.Add({{"reason", "timeout"}}), &dropped.Add({{"reason", "tls_handshake"}}),
           &dropped.Add({{"reason", "bad_request"}}), &dropped.Add({{"reason", "too_large"}})}};
}

// The ceiling of --web.max-connections that this process's limits admit, with one warning
// naming the limit when it had to be lowered.
int ConnectionCeiling(int wanted) {
  if (wanted < 1) {
    throw WebError("--web.max-connections must be at least 1, not " + std::to_string(wanted));
  }
  const detail::ConnectionCeiling ceiling =
      detail::FitConnections(wanted, detail::ReadProcessLimits());
  if (!ceiling.lowered_by.empty()) {
    spdlog::warn("web: --web.max-connections {} lowered to {} to fit {}", wanted,
                 ceiling.connections, ceiling.lowered_by);
  }
  return ceiling.connections;
}

void LogSecurity(const WebConfig& config) {
  if (!config.tls && config.basic_auth_users.empty()) return;
  spdlog::info(
      "web: {}{}",
      config.tls
          ? "TLS (client_auth_type " + std::string(ClientAuthName(config.tls->client_auth)) + ")"
          : std::string("plain HTTP"),
      config.basic_auth_users.empty()
          ? ""
          : ", basic auth for " + std::to_string(config.basic_auth_users.size()) + " user(s)");
}

}  // namespace

WebServer::WebServer(const WebOptions& options, std::weak_ptr<prometheus::Collectable> metrics,
                     std::function<std::string()> render_landing_page)
    : web_metrics_(std::make_shared<prometheus::Registry>()) {
  if (options.telemetry_path.empty() || options.telemetry_path.front() != '/') {
    throw WebError("telemetry path '" + options.telemetry_path + "' must start with '/'");
  }
  const WebConfig config =
      options.config_file.empty() ? WebConfig{} : LoadWebConfigFile(options.config_file);
  detail::ListenerOptions listener_options;
  listener_options.endpoints = Endpoints(options.listen_addresses);
  listener_options.max_connections = ConnectionCeiling(options.max_connections);
  listener_options.request_timeout = std::chrono::milliseconds(options.request_timeout_ms);
  listener_options.tls = config.tls;

  detail::Routes routes;
  routes.telemetry_path = options.telemetry_path;
  routes.metrics = {std::move(metrics), web_metrics_};
  // "/" is the landing page unless the metrics are served there.
  if (options.telemetry_path != "/") routes.landing_page = std::move(render_landing_page);
  routes.is_ready = options.is_ready;
  routes.reload = options.reload;
  detail::AuthFailureCounters auth_failures;
  if (!config.basic_auth_users.empty()) {
    routes.auth = std::make_shared<const detail::BasicAuthChecker>(config.basic_auth_users);
    auth_failures = AddAuthFailureCounters(*web_metrics_);
  }
  router_ = std::make_unique<detail::Router>(std::move(routes), auth_failures);
  const detail::ListenerMetrics connection_metrics = AddConnectionMetrics(*web_metrics_);
  listener_ = std::make_unique<detail::HttpListener>(
      listener_options,
      [router = router_.get()](const detail::HttpRequest& request) {
        return router->Answer(request);
      },
      connection_metrics);
  LogSecurity(config);
}

WebServer::~WebServer() {
  router_->StartStopping();
  listener_.reset();  // no request runs past here
}

void WebServer::Stop(const base::Deadline& by) {
  router_->StartStopping();
  listener_->Stop(by);  // no request runs past here
}

std::vector<int> WebServer::ListeningPorts() const {
  return listener_->Ports();
}

}  // namespace rail::web
