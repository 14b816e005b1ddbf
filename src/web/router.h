// Which answer each request gets: the health paths before authentication, then basic
// authentication for every other path, /-/reload, the landing page and the telemetry path. The
// same rules civetweb's begin_request applied before (the behaviour is the endpoint's, not the
// library's).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basic_auth.h"
#include "exposition.h"
#include "http_message.h"

namespace rail::web::detail {

struct Routes {
  std::string telemetry_path;
  std::vector<std::weak_ptr<prometheus::Collectable>> metrics;  // scraped in this order
  std::function<std::string()> landing_page;                    // empty: "/" is 404
  std::function<bool()> is_ready;                               // empty: ready at once
  std::function<std::optional<std::string>()> reload;           // empty: /-/reload is 403
  std::shared_ptr<const BasicAuthChecker> auth;                 // nullptr: no authentication
};

// rail_exporter_http_auth_failures_total's three series; all set when Routes::auth is.
struct AuthFailureCounters {
  prometheus::Counter* missing = nullptr;
  prometheus::Counter* malformed = nullptr;
  prometheus::Counter* invalid = nullptr;
};

class Router {
 public:
  Router(Routes routes, AuthFailureCounters auth_failures);

  // Thread-safe; runs on the listener's handler threads.
  HttpResponse Answer(const HttpRequest& request) const;

  // From now on every request is answered 503: the server is stopping.
  void StartStopping() { stopping_ = true; }

 private:
  std::optional<HttpResponse> AnswerHealth(const HttpRequest& request,
                                           const std::string& path) const;
  std::optional<HttpResponse> Refuse(const HttpRequest& request) const;  // nullopt: authorized
  HttpResponse AnswerReload(const HttpRequest& request) const;
  HttpResponse AnswerLandingPage(const HttpRequest& request) const;
  HttpResponse AnswerMetrics(const HttpRequest& request) const;

  const Routes routes_;
  const AuthFailureCounters auth_failures_;
  mutable Exposition exposition_;  // keeps the families' text between scrapes; locks itself
  std::atomic<bool> stopping_{false};
};

}  // namespace rail::web::detail
