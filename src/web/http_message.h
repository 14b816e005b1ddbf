// What the HTTP listener hands the router and takes back: plain values, so that routing,
// authentication and the telemetry path are tested without a socket, and only http_listener.cc
// knows the HTTP library.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rail::web::detail {

struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string target;  // the request target as sent: path and query
  bool has_authorization = false;
  std::string authorization;    // the Authorization header, when has_authorization
  std::string accept_encoding;  // the Accept-Encoding header, "" when absent
  std::string remote_address;   // for the log
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string content_encoding;  // "" or "gzip"
  std::string body;
  // Headers beyond the content ones (WWW-Authenticate, Allow).
  std::vector<std::pair<std::string, std::string>> headers;
};

// "/metrics?x=1" -> "/metrics": the path a route is chosen by.
std::string PathOf(const std::string& target);

}  // namespace rail::web::detail
