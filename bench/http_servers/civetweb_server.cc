// The baseline: GET /metrics on civetweb 1.15 configured as the agent configures it
// (src/web/web_server.cc): one worker thread per connection it may hold, keep-alive off.
#include <civetweb.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench_options.h"

namespace {

int ServeMetrics(mg_connection* connection, void* arg) {
  const auto* body = static_cast<const std::string*>(arg);
  mg_send_http_ok(connection, "text/plain; version=0.0.4", body->size());
  mg_write(connection, body->data(), body->size());
  return 200;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions options = ParseOptionsOrDie(argc, argv);
  if (options.tls()) {
    // Debian's civetweb 1.15 calls SSL_get_peer_certificate, which OpenSSL 3 no longer
    // exports: it crashes on the first handshake (the agent carries src/tls_compat/ for it).
    std::fprintf(stderr, "civetweb_server: TLS is not measured (civetweb 1.15 + OpenSSL 3)\n");
    return 2;
  }
  mg_init_library(0);
  const std::string port = "127.0.0.1:" + std::to_string(options.port);
  const std::string threads = std::to_string(options.max_connections);
  const std::string timeout = std::to_string(options.header_timeout_ms);
  const char* config[] = {"listening_ports",    port.c_str(),
                          "num_threads",        threads.c_str(),
                          "connection_queue",   "64",
                          "listen_backlog",     threads.c_str(),
                          "request_timeout_ms", timeout.c_str(),
                          "enable_keep_alive",  "no",
                          nullptr};
  mg_callbacks callbacks = {};
  mg_context* context = mg_start(&callbacks, nullptr, config);
  if (!context) {
    std::fprintf(stderr, "mg_start failed on %s\n", port.c_str());
    return 1;
  }
  // "$" anchors the pattern; other paths get civetweb's own 404 (no document root).
  mg_set_request_handler(context, "/metrics$", ServeMetrics,
                         const_cast<std::string*>(&options.body));
  for (;;) pause();  // the workers serve; the benchmark driver kills the process
}
