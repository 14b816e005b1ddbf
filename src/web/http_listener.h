// The HTTP server: Boost.Beast on one Asio event loop. Connections, TLS handshakes and request
// parsing cost a descriptor and a few KiB each, never a thread; requests are answered on a small
// fixed pool, so a slow scrape or reload never stalls the loop. docs/architecture.md says why
// this replaced civetweb (a thread per connection) and how the choice was measured.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http_message.h"
#include "rail/base/clock.h"
#include "rail/web/web_config.h"

namespace rail::web::detail {

struct Endpoint {
  std::string host;  // an IP address; "" for every address (IPv6 and IPv4)
  std::uint16_t port = 0;
};

struct ListenerOptions {
  std::vector<Endpoint> endpoints;
  // Connections held at once; beyond it the listener stops accepting until one closes (the
  // kernel's listen backlog holds the rest).
  int max_connections = 1000;
  // The most a connection may take from its accept (TLS handshake included) to a whole request,
  // from a response to the next request on a kept-alive connection, and to take a response.
  std::chrono::milliseconds request_timeout{5000};
  std::optional<TlsServerConfig> tls;  // every endpoint serves TLS when set
};

// Why the server dropped a connection it had accepted
// (rail_exporter_http_connections_dropped_total).
struct DropCounters {
  prometheus::Counter* timeout = nullptr;        // no whole request before the deadline
  prometheus::Counter* tls_handshake = nullptr;  // the handshake failed
  prometheus::Counter* bad_request = nullptr;    // not HTTP/1.x: answered 400
  prometheus::Counter* too_large = nullptr;      // headers or body over the limit: 431 / 413
};

struct ListenerMetrics {
  prometheus::Gauge* open_connections = nullptr;
  DropCounters dropped;
};

class HttpListener {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds every endpoint and starts serving; throws WebError naming the address when one cannot
  // be bound. `handler` runs on the handler threads; an exception from it answers 500.
  HttpListener(const ListenerOptions& options, Handler handler, ListenerMetrics metrics);
  // Stops accepting, closes idle connections, lets requests in flight finish (each bounded by
  // the request timeout) and joins every thread.
  ~HttpListener();
  // The same, with requests in flight cut at `by` (the agent's stop deadline) if sooner. Ports()
  // answers nothing after it.
  void Stop(const base::Deadline& by);
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  std::vector<int> Ports() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Threads the listener runs: the event loop and the request handlers.
inline constexpr int kEventLoopThreads = 1;
inline constexpr int kHandlerThreads = 2;

}  // namespace rail::web::detail
