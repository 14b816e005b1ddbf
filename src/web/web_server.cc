#include <CivetServer.h>
#include <civetweb.h>
#include <prometheus/exposer.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>
#include <regex>

#include "rail/web.h"

namespace rail {
namespace {

// civetweb's callbacks carry no pointer of ours, and one agent process serves one landing page.
std::mutex landing_page_mutex;
std::shared_ptr<const std::function<std::string()>> landing_page;
std::string telemetry_path;

// civetweb reports why a listening socket failed only through its log callback.
std::mutex last_error_mutex;
std::string last_civetweb_error;

int LogMessage(const mg_connection*, const char* message) {
  spdlog::debug("civetweb: {}", message);
  std::lock_guard lock(last_error_mutex);
  last_civetweb_error = message;
  return 1;
}

// civetweb matches handlers by prefix: without this, /metricsXYZ would serve the metrics.
bool IsBelowTelemetryPath(const char* uri, const std::string& path) {
  return path != "/" && std::strncmp(uri, path.c_str(), path.size()) == 0 &&
         uri[path.size()] != '\0';
}

int ServeLandingPage(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request->local_uri == nullptr) return 0;
  std::shared_ptr<const std::function<std::string()>> render;
  {
    std::lock_guard lock(landing_page_mutex);
    if (IsBelowTelemetryPath(request->local_uri, telemetry_path)) {
      mg_send_http_error(connection, 404, "%s", "Not Found");
      return 404;
    }
    if (std::strcmp(request->local_uri, "/") != 0 || telemetry_path == "/") return 0;
    render = landing_page;
  }
  if (!render) return 0;
  if (std::strcmp(request->request_method, "GET") != 0 &&
      std::strcmp(request->request_method, "HEAD") != 0) {
    mg_send_http_error(connection, 405, "%s", "Method Not Allowed");
    return 405;
  }
  const std::string body = (*render)();
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            "Content-Length: %zu\r\nCache-Control: no-cache\r\n\r\n",
            body.size());
  if (std::strcmp(request->request_method, "GET") == 0) {
    mg_write(connection, body.data(), body.size());
  }
  return 200;
}

const CivetCallbacks& Callbacks() {
  static const CivetCallbacks callbacks = [] {
    CivetCallbacks c{};
    c.begin_request = ServeLandingPage;
    c.log_message = LogMessage;
    return c;
  }();
  return callbacks;
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

WebServer::WebServer(const WebOptions& options, std::weak_ptr<prometheus::Collectable> metrics,
                     std::function<std::string()> render_landing_page) {
  if (options.listen_addresses.empty()) throw WebError("no listen address given");
  if (options.telemetry_path.empty() || options.telemetry_path.front() != '/') {
    throw WebError("telemetry path '" + options.telemetry_path + "' must start with '/'");
  }
  std::string ports;
  for (const auto& address : options.listen_addresses) {
    if (!ports.empty()) ports += ",";
    ports += ToCivetwebPort(address);
  }
  {
    std::lock_guard lock(landing_page_mutex);
    landing_page =
        std::make_shared<const std::function<std::string()>>(std::move(render_landing_page));
    telemetry_path = options.telemetry_path;
  }
  std::vector<std::string> civetweb_options = {
      "listening_ports",
      ports,
      "num_threads",
      std::to_string(options.threads),
      // A client that stalls must not hold a worker thread for long.
      "request_timeout_ms",
      "10000",
  };
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(civetweb_options, &Callbacks());
  } catch (const std::exception& error) {
    std::lock_guard lock(last_error_mutex);
    throw WebError("cannot listen on " + ports + ": " +
                   (last_civetweb_error.empty() ? error.what() : last_civetweb_error));
  }
  exposer_->RegisterCollectable(metrics, options.telemetry_path);
}

WebServer::~WebServer() = default;

std::vector<int> WebServer::ListeningPorts() const {
  return exposer_->GetListeningPorts();
}

}  // namespace rail
