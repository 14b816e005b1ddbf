#include "rail/web/web_server.h"

#include <CivetServer.h>
#include <civetweb.h>
#include <openssl/ssl.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <regex>

#include "basic_auth.h"
#include "connection_limits.h"
#include "rail/base/log.h"
#include "rail/web/web_config.h"
#include "thread_stack.h"
#include "tls_context.h"

namespace rail::web {
namespace {

// What the civetweb callbacks need. They carry no pointer of ours, and one agent process serves
// one endpoint, so it lives here; it does not change while the server runs.
struct ServerState {
  std::function<std::string()> landing_page;
  std::function<bool()> is_ready;
  std::function<std::optional<std::string>()> reload;  // empty: the lifecycle API is off
  std::string telemetry_path;
  std::optional<TlsServerConfig> tls;
  std::shared_ptr<const detail::BasicAuthChecker> auth;  // nullptr: no authentication
  prometheus::Counter* missing_credentials = nullptr;
  prometheus::Counter* malformed_credentials = nullptr;
  prometheus::Counter* invalid_credentials = nullptr;
};

std::mutex state_mutex;
std::shared_ptr<const ServerState> server_state;
// Set while the server stops: prometheus-cpp's Exposer removes its handlers before civetweb stops
// accepting, and a request in between would read 404 for the telemetry path.
std::atomic<bool> server_stopping{false};

std::shared_ptr<const ServerState> State() {
  std::lock_guard lock(state_mutex);
  return server_state;
}

// civetweb reports why a listening socket failed only through its log callback.
std::mutex last_error_mutex;
std::string last_civetweb_error;

int LogMessage(const mg_connection*, const char* message) {
  spdlog::debug("civetweb: {}", message);
  std::lock_guard lock(last_error_mutex);
  last_civetweb_error = message;
  return 1;
}

// One warning per failure burst: a client hammering wrong passwords must not flood the log.
base::RateLimitedLog auth_failure_log(std::chrono::seconds(10));

// true when the request may go on; otherwise it has been answered 401.
bool Authorize(mg_connection* connection, const ServerState& state) {
  if (!state.auth) return true;
  std::string user;
  const detail::AuthResult result =
      state.auth->Check(mg_get_header(connection, "Authorization"), &user);
  if (result == detail::AuthResult::kOk) return true;
  const char* reason = "invalid credentials";
  if (result == detail::AuthResult::kMissing) {
    state.missing_credentials->Increment();
    reason = "no credentials";
  } else if (result == detail::AuthResult::kMalformed) {
    state.malformed_credentials->Increment();
    reason = "malformed Authorization header";
  } else {
    state.invalid_credentials->Increment();
  }
  const mg_request_info* request = mg_get_request_info(connection);
  if (std::uint64_t suppressed = 0; auth_failure_log.Admit(&suppressed)) {
    spdlog::warn(
        "web: authentication failed from {} (user \"{}\": {}); {} more failure(s) not logged "
        "since the last report",
        request->remote_addr, user, reason, suppressed);
  }
  static constexpr char kBody[] = "Unauthorized\n";
  mg_printf(connection,
            "HTTP/1.1 401 Unauthorized\r\n"
            "WWW-Authenticate: Basic realm=\"rail_exporter\", charset=\"UTF-8\"\r\n"
            "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s",
            sizeof(kBody) - 1, kBody);
  return false;
}

// civetweb matches handlers by prefix: without this, /metricsXYZ would serve the metrics.
bool IsBelowTelemetryPath(const char* uri, const std::string& path) {
  return path != "/" && std::strncmp(uri, path.c_str(), path.size()) == 0 &&
         uri[path.size()] != '\0';
}

bool IsReadOnlyMethod(const mg_request_info& request) {
  return std::strcmp(request.request_method, "GET") == 0 ||
         std::strcmp(request.request_method, "HEAD") == 0;
}

void SendPlain(mg_connection* connection, const mg_request_info& request, int status,
               const char* reason, const char* body) {
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: %zu\r\nCache-Control: no-cache\r\n\r\n",
            status, reason, std::strlen(body));
  if (std::strcmp(request.request_method, "GET") == 0)
    mg_write(connection, body, std::strlen(body));
}

// The health paths, before authentication; 0 for any other path.
int AnswerHealth(mg_connection* connection, const ServerState& state) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request->local_uri == nullptr) return 0;
  const bool healthy = std::strcmp(request->local_uri, kHealthyPath) == 0;
  const bool ready = std::strcmp(request->local_uri, kReadyPath) == 0;
  if (!healthy && !ready) return 0;
  if (!IsReadOnlyMethod(*request)) {
    mg_send_http_error(connection, 405, "%s", "Method Not Allowed");
    return 405;
  }
  if (ready && state.is_ready && !state.is_ready()) {
    SendPlain(connection, *request, 503, "Service Unavailable", "Starting\n");
    return 503;
  }
  SendPlain(connection, *request, 200, "OK", "OK\n");
  return 200;
}

// POST /-/reload, after authentication, as Prometheus answers it: 403 while the lifecycle API is
// off, 500 with the reason when the configuration was refused.
int AnswerReload(mg_connection* connection, const mg_request_info& request,
                 const ServerState& state) {
  if (!state.reload) {
    mg_send_http_error(connection, 403, "%s", "Lifecycle API is not enabled.");
    return 403;
  }
  if (std::strcmp(request.request_method, "POST") != 0 &&
      std::strcmp(request.request_method, "PUT") != 0) {
    mg_send_http_error(connection, 405, "%s", "Only POST or PUT requests allowed");
    return 405;
  }
  const auto refused = state.reload();
  const std::string body = refused ? "failed to reload config: " + *refused + "\n" : "OK\n";
  const int status = refused ? 500 : 200;
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: %zu\r\nCache-Control: no-cache\r\n\r\n",
            status, refused ? "Internal Server Error" : "OK", body.size());
  mg_write(connection, body.data(), body.size());
  return status;
}

// Every request passes here first (civetweb's begin_request), so authentication covers the
// landing page, the telemetry path and any other path alike; only the health paths come first.
int BeginRequest(mg_connection* connection) {
  if (server_stopping) {
    const mg_request_info* request = mg_get_request_info(connection);
    SendPlain(connection, *request, 503, "Service Unavailable", "Stopping\n");
    return 503;
  }
  const std::shared_ptr<const ServerState> state = State();
  if (!state) return 0;
  if (const int status = AnswerHealth(connection, *state); status != 0) return status;
  if (!Authorize(connection, *state)) return 401;
  const mg_request_info* request = mg_get_request_info(connection);
  if (request->local_uri == nullptr) return 0;
  if (std::strcmp(request->local_uri, kReloadPath) == 0) {
    return AnswerReload(connection, *request, *state);
  }
  if (IsBelowTelemetryPath(request->local_uri, state->telemetry_path)) {
    mg_send_http_error(connection, 404, "%s", "Not Found");
    return 404;
  }
  if (std::strcmp(request->local_uri, "/") != 0 || state->telemetry_path == "/") return 0;
  if (!state->landing_page) return 0;
  if (!IsReadOnlyMethod(*request)) {
    mg_send_http_error(connection, 405, "%s", "Method Not Allowed");
    return 405;
  }
  const std::string body = state->landing_page();
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            "Content-Length: %zu\r\nCache-Control: no-cache\r\n\r\n",
            body.size());
  if (std::strcmp(request->request_method, "GET") == 0) {
    mg_write(connection, body.data(), body.size());
  }
  return 200;
}

// civetweb has created its SSL context for the "s" ports; configure all of it from the web
// config (returning 1 tells civetweb not to load a certificate of its own).
int InitSsl(void* ssl_context, void*) {
  const std::shared_ptr<const ServerState> state = State();
  if (!state || !state->tls) return -1;
  std::string error;
  if (!detail::ConfigureTlsContext(static_cast<SSL_CTX*>(ssl_context), *state->tls, &error)) {
    std::lock_guard lock(last_error_mutex);
    last_civetweb_error = error;
    return -1;
  }
  return 1;
}

// The init_ssl callback alone makes civetweb load libssl, so it is set only for TLS.
const CivetCallbacks& Callbacks(bool tls) {
  static const CivetCallbacks plain = [] {
    CivetCallbacks c{};
    c.begin_request = BeginRequest;
    c.log_message = LogMessage;
    c.connection_closed = [](const mg_connection*) { detail::ReleaseUnusedStack(); };
    return c;
  }();
  static const CivetCallbacks with_tls = [] {
    CivetCallbacks c = plain;
    c.init_ssl = InitSsl;
    return c;
  }();
  return tls ? with_tls : plain;
}

}  // namespace

std::string ToCivetwebPort(const std::string& listen_address) {
  static const std::regex kAddress(R"(^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]*):([0-9]{1,5})$)");
  std::smatch match;
  if (!std::regex_match(listen_address, match, kAddress)) {
    throw WebError("invalid listen address '" + listen_address + "': expected [host]:port");
  }
  if (std::stoi(match[2].str()) > 65535) {
    throw WebError("invalid listen address '" + listen_address + "': port above 65535");
  }
  if (match[1].length() == 0) return match[2].str();
  if (match[1].str() == "localhost") return "127.0.0.1:" + match[2].str();
  return listen_address;
}

namespace {

// civetweb's "listening_ports": the addresses, each with an "s" for a TLS port.
std::string CivetwebPorts(const WebOptions& options, bool tls) {
  if (options.listen_addresses.empty()) throw WebError("no listen address given");
  std::string ports;
  for (const auto& address : options.listen_addresses) {
    if (!ports.empty()) ports += ",";
    ports += ToCivetwebPort(address) + (tls ? "s" : "");
  }
  return ports;
}

// rail_exporter_http_auth_failures_total by reason, in `registry`.
void AddAuthFailureCounters(prometheus::Registry& registry, ServerState& state) {
  auto& failures = prometheus::BuildCounter()
                       .Name("rail_exporter_http_auth_failures_total")
                       .Help(
                           "HTTP requests refused by basic authentication, by reason "
                           "(missing, malformed or invalid credentials).")
                       .Register(registry);
  state.missing_credentials = &failures.Add({{"reason", "missing"}});
  state.malformed_credentials = &failures.Add({{"reason", "malformed"}});
  state.invalid_credentials = &failures.Add({{"reason", "invalid"}});
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

// One worker thread per connection up to the ceiling, so that a scrape never waits behind held
// connections; the kernel's listen backlog holds connections beyond it until a worker frees
// (civetweb then serves them in order). Keep-alive stays off: a scrape per connection, and no
// idle keep-alive connection holds a worker between scrapes.
std::vector<std::string> CivetwebOptions(const WebOptions& options, const std::string& ports) {
  const int connections = ConnectionCeiling(options.max_connections);
  return {"listening_ports",    ports,
          "num_threads",        std::to_string(connections),
          "connection_queue",   std::to_string(detail::kConnectionQueue),
          "listen_backlog",     std::to_string(connections),
          "request_timeout_ms", std::to_string(options.request_timeout_ms),
          "enable_keep_alive",  "no"};
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
                     std::function<std::string()> render_landing_page) {
  if (options.telemetry_path.empty() || options.telemetry_path.front() != '/') {
    throw WebError("telemetry path '" + options.telemetry_path + "' must start with '/'");
  }
  const WebConfig config =
      options.config_file.empty() ? WebConfig{} : LoadWebConfigFile(options.config_file);
  const std::string ports = CivetwebPorts(options, config.tls.has_value());
  if (std::string error; config.tls && !detail::PrepareCivetwebTls(&error)) throw WebError(error);
  auto state = std::make_shared<ServerState>();
  state->landing_page = std::move(render_landing_page);
  state->is_ready = options.is_ready;
  state->reload = options.reload;
  state->telemetry_path = options.telemetry_path;
  state->tls = config.tls;
  if (!config.basic_auth_users.empty()) {
    state->auth = std::make_shared<const detail::BasicAuthChecker>(config.basic_auth_users);
    web_metrics_ = std::make_shared<prometheus::Registry>();
    AddAuthFailureCounters(*web_metrics_, *state);
  }
  {
    std::lock_guard lock(state_mutex);
    server_state = std::move(state);
  }
  const std::vector<std::string> civetweb_options = CivetwebOptions(options, ports);
  try {
    exposer_ =
        std::make_unique<prometheus::Exposer>(civetweb_options, &Callbacks(config.tls.has_value()));
  } catch (const std::exception& error) {
    std::lock_guard lock(last_error_mutex);
    throw WebError("cannot listen on " + ports + ": " +
                   (last_civetweb_error.empty() ? error.what() : last_civetweb_error));
  }
  exposer_->RegisterCollectable(metrics, options.telemetry_path);
  if (web_metrics_) exposer_->RegisterCollectable(web_metrics_, options.telemetry_path);
  LogSecurity(config);
}

WebServer::~WebServer() {
  server_stopping = true;
  exposer_.reset();  // no request runs past here
  server_stopping = false;
  std::lock_guard lock(state_mutex);
  server_state.reset();
}

std::vector<int> WebServer::ListeningPorts() const {
  return exposer_->GetListeningPorts();
}

}  // namespace rail::web
