// GET /metrics on libevent 2.1's evhttp: one event_base dispatched by one thread. Over TLS each
// connection's bufferevent is an OpenSSL one (evhttp_set_bevcb).
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/ssl.h>

#include <cstdio>

#include "bench_options.h"

namespace {

void ServeMetrics(evhttp_request* request, void* arg) {
  const auto* body = static_cast<const std::string*>(arg);
  evhttp_add_header(evhttp_request_get_output_headers(request), "Content-Type",
                    "text/plain; version=0.0.4");
  // A reference to the shared body: no copy per scrape.
  evbuffer_add_reference(evhttp_request_get_output_buffer(request), body->data(), body->size(),
                         nullptr, nullptr);
  evhttp_send_reply(request, HTTP_OK, "OK", nullptr);
}

void NotFound(evhttp_request* request, void*) {
  evhttp_send_error(request, HTTP_NOTFOUND, nullptr);
}

// evhttp calls this for every accepted connection: the bufferevent does the TLS handshake.
bufferevent* TlsBufferevent(event_base* base, void* arg) {
  return bufferevent_openssl_socket_new(base, -1, SSL_new(static_cast<SSL_CTX*>(arg)),
                                        BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

SSL_CTX* TlsContextOrDie(const BenchOptions& options) {
  SSL_CTX* tls = SSL_CTX_new(TLS_server_method());
  SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(tls, options.cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls, options.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    std::fprintf(stderr, "cannot load %s / %s\n", options.cert.c_str(), options.key.c_str());
    std::exit(1);
  }
  return tls;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions options = ParseOptionsOrDie(argc, argv);
  event_base* base = event_base_new();
  evhttp* http = evhttp_new(base);
  evhttp_set_allowed_methods(http, EVHTTP_REQ_GET);
  evhttp_set_max_headers_size(http, 8192);
  // evhttp 2.1 has no connection ceiling (--max-connections is accepted and ignored), and its
  // only timeout is the bufferevents' read/write timeout: an inactivity timeout, re-armed by
  // every byte read, so a client trickling its headers is never closed.
  const timeval timeout = {options.header_timeout_ms / 1000,
                           (options.header_timeout_ms % 1000) * 1000};
  evhttp_set_timeout_tv(http, &timeout);
  if (options.tls()) evhttp_set_bevcb(http, TlsBufferevent, TlsContextOrDie(options));
  evhttp_set_cb(http, "/metrics", ServeMetrics, const_cast<std::string*>(&options.body));
  evhttp_set_gencb(http, NotFound, nullptr);
  if (!evhttp_bind_socket_with_handle(http, "127.0.0.1", options.port)) {
    std::fprintf(stderr, "cannot listen on port %d\n", options.port);
    return 1;
  }
  event_base_dispatch(base);
  return 0;
}
