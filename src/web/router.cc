#include "router.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "exposition.h"
#include "rail/base/log.h"
#include "rail/web/web_server.h"

namespace rail::web::detail {

std::string PathOf(const std::string& target) {
  return target.substr(0, target.find('?'));
}

namespace {

HttpResponse Plain(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

bool IsReadOnly(const HttpRequest& request) {
  return request.method == "GET" || request.method == "HEAD";
}

HttpResponse MethodNotAllowed(const char* allowed) {
  HttpResponse response = Plain(405, "Method Not Allowed\n");
  response.headers.emplace_back("Allow", allowed);
  return response;
}

// One warning per failure burst: a client hammering wrong passwords must not flood the log.
base::RateLimitedLog auth_failure_log(std::chrono::seconds(10));

}  // namespace

Router::Router(Routes routes, AuthFailureCounters auth_failures)
    : routes_(std::move(routes)), auth_failures_(auth_failures) {}

HttpResponse Router::Answer(const HttpRequest& request) const {
  if (stopping_) return Plain(503, "Stopping\n");
  const std::string path = PathOf(request.target);
  if (auto health = AnswerHealth(request, path)) return *health;
  if (auto refused = Refuse(request)) return *refused;
  if (path == kReloadPath) return AnswerReload(request);
  if (path == routes_.telemetry_path) return AnswerMetrics(request);
  if (path == "/" && routes_.landing_page) return AnswerLandingPage(request);
  return Plain(404, "Not Found\n");
}

// Before authentication: kubelet and load balancers probe them with no credentials, and they tell
// nothing but a status.
std::optional<HttpResponse> Router::AnswerHealth(const HttpRequest& request,
                                                 const std::string& path) const {
  const bool healthy = path == kHealthyPath;
  const bool ready = path == kReadyPath;
  if (!healthy && !ready) return std::nullopt;
  if (!IsReadOnly(request)) return MethodNotAllowed("GET, HEAD");
  if (ready && routes_.is_ready && !routes_.is_ready()) return Plain(503, "Starting\n");
  return Plain(200, "OK\n");
}

std::optional<HttpResponse> Router::Refuse(const HttpRequest& request) const {
  if (!routes_.auth) return std::nullopt;
  std::string user;
  const AuthResult result = routes_.auth->Check(
      request.has_authorization ? request.authorization.c_str() : nullptr, &user);
  if (result == AuthResult::kOk) return std::nullopt;
  const char* reason = "invalid credentials";
  if (result == AuthResult::kMissing) {
    auth_failures_.missing->Increment();
    reason = "no credentials";
  } else if (result == AuthResult::kMalformed) {
    auth_failures_.malformed->Increment();
    reason = "malformed Authorization header";
  } else {
    auth_failures_.invalid->Increment();
  }
  if (std::uint64_t suppressed = 0; auth_failure_log.Admit(&suppressed)) {
    spdlog::warn(
        "web: authentication failed from {} (user \"{}\": {}); {} more failure(s) not logged "
        "since the last report",
        request.remote_address, user, reason, suppressed);
  }
  HttpResponse response = Plain(401, "Unauthorized\n");
  response.headers.emplace_back("WWW-Authenticate",
                                "Basic realm=\"rail_exporter\", charset=\"UTF-8\"");
  return response;
}

// As Prometheus answers it: 403 while the lifecycle API is off, 500 with the reason when the
// configuration was refused.
HttpResponse Router::AnswerReload(const HttpRequest& request) const {
  if (!routes_.reload) return Plain(403, "Lifecycle API is not enabled.\n");
  if (request.method != "POST" && request.method != "PUT") {
    HttpResponse response = Plain(405, "Only POST or PUT requests allowed\n");
    response.headers.emplace_back("Allow", "POST, PUT");
    return response;
  }
  if (const auto refused = routes_.reload()) {
    return Plain(500, "failed to reload config: " + *refused + "\n");
  }
  return Plain(200, "OK\n");
}

HttpResponse Router::AnswerLandingPage(const HttpRequest& request) const {
  if (!IsReadOnly(request)) return MethodNotAllowed("GET, HEAD");
  HttpResponse response = Plain(200, routes_.landing_page());
  response.content_type = "text/html; charset=utf-8";
  return response;
}

HttpResponse Router::AnswerMetrics(const HttpRequest& request) const {
  if (!IsReadOnly(request)) return MethodNotAllowed("GET, HEAD");
  HttpResponse response = Plain(200, exposition_.Render(routes_.metrics));
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  if (AcceptsGzip(request.accept_encoding)) {
    response.body = Gzip(response.body);
    response.content_encoding = "gzip";
  }
  return response;
}

}  // namespace rail::web::detail
