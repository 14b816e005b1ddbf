// GET /metrics on libmicrohttpd: one internal thread polling every connection with epoll.
// TLS is GnuTLS, configured by PEM strings and a GnuTLS priority string.
#include <microhttpd.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_options.h"

namespace {

MHD_Response* metrics_response;
MHD_Response* not_found_response;

// Responses are reference counted and built once: each request queues the same one.
MHD_Response* TextResponse(const char* data, size_t size) {
  MHD_Response* response =
      MHD_create_response_from_buffer(size, const_cast<char*>(data), MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
  return response;
}

// MHD calls this first when the headers are in, then again once the request (a GET has no body)
// is complete. Answering on the first call makes MHD close the connection after the response
// (it cannot know the request has ended), so keep-alive needs the second call.
MHD_Result Answer(void*, MHD_Connection* connection, const char* url, const char* method,
                  const char*, const char*, size_t* upload_size, void** request_state) {
  static int headers_seen;
  if (*request_state == nullptr) {
    *request_state = &headers_seen;
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a body nobody asked for: drop it
    *upload_size = 0;
    return MHD_YES;
  }
  const bool found = std::strcmp(method, "GET") == 0 && std::strcmp(url, "/metrics") == 0;
  return MHD_queue_response(connection, found ? MHD_HTTP_OK : MHD_HTTP_NOT_FOUND,
                            found ? metrics_response : not_found_response);
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions options = ParseOptionsOrDie(argc, argv);
  static const char kNotFound[] = "not found\n";
  metrics_response = TextResponse(options.body.data(), options.body.size());
  not_found_response = TextResponse(kNotFound, sizeof kNotFound - 1);

  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(options.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // MHD's timeout is whole seconds of inactivity (any byte read re-arms it): no absolute
  // header deadline, and milliseconds round up.
  const unsigned timeout_s = (options.header_timeout_ms + 999) / 1000;
  const std::string cert = options.tls() ? ReadFileOrDie(options.cert) : "";
  const std::string key = options.tls() ? ReadFileOrDie(options.key) : "";
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  // An option array rather than MHD's variadic list: the TLS options are there only with TLS.
  std::vector<MHD_OptionItem> settings = {
      {MHD_OPTION_SOCK_ADDR, 0, &address},
      {MHD_OPTION_CONNECTION_LIMIT, options.max_connections, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, nullptr}};
  if (options.tls()) {
    flags |= MHD_USE_TLS;
    settings.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(cert.c_str())});
    settings.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(key.c_str())});
    // Web-config min_version / cipher_suites become a GnuTLS priority string.
    settings.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0,
                        const_cast<char*>("NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2")});
  }
  settings.push_back({MHD_OPTION_END, 0, nullptr});
  MHD_Daemon* daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, Answer, nullptr,
                                        MHD_OPTION_ARRAY, settings.data(), MHD_OPTION_END);
  if (!daemon) {
    std::fprintf(stderr, "MHD_start_daemon failed on port %d\n", options.port);
    return 1;
  }
  for (;;) pause();  // MHD's thread serves; the benchmark driver kills the process
}
