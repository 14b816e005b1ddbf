// GET /metrics on Boost.Beast over Asio: one io_context run by one thread, every connection a
// chain of completion handlers. Plain TCP or OpenSSL.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <type_traits>

#include "bench_options.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// A client that stops reading the response must not hold its connection forever.
constexpr std::chrono::seconds kWriteTimeout(10);
constexpr char kNotFound[] = "not found\n";
#ifdef WAIT_FOR_FIRST_BYTE
constexpr bool kWaitForFirstByte = true;
#else
constexpr bool kWaitForFirstByte = false;
#endif

// Accepts connections up to the ceiling; at the ceiling it stops accepting, so that further
// connections wait in the kernel's listen backlog (as civetweb and libmicrohttpd do) until a
// held one ends.
class Server {
 public:
  Server(asio::io_context& io, const BenchOptions& options, asio::ssl::context* tls)
      : options_(options), tls_(tls), acceptor_(io) {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), options.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }
  const BenchOptions& options() const { return options_; }
  void Accept();
  void StartSession(tcp::socket socket);
  void AfterFirstByte(tcp::socket socket);
  void Release() {
    if (open_-- == options_.max_connections) Accept();  // below the ceiling again
  }

 private:
  const BenchOptions& options_;
  asio::ssl::context* tls_;
  tcp::acceptor acceptor_;
  int open_ = 0;
};

// One connection. Stream is beast::tcp_stream or TlsStream.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, Server& server) : stream_(std::move(stream)), server_(server) {}
  ~Session() { server_.Release(); }

  void Start() {
    // One absolute deadline from accept to the end of the request headers, TLS handshake
    // included: bytes trickling in do not move it (a slowloris client is closed on time).
    ArmHeaderDeadline();
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code error) {
                                if (!error) self->ReadRequest();
                              });
    } else {
      ReadRequest();
    }
  }

 private:
  void ArmHeaderDeadline() {
    beast::get_lowest_layer(stream_).expires_after(
        std::chrono::milliseconds(server_.options().header_timeout_ms));
  }

  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(8192);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                       if (!error) self->Respond();
                     });
  }

  void Respond() {
    const auto& request = parser_->get();
    const bool found = request.method() == http::verb::get && request.target() == "/metrics";
    response_ = {};
    response_.version(request.version());
    response_.result(found ? http::status::ok : http::status::not_found);
    response_.set(http::field::content_type, "text/plain; version=0.0.4");
    // span_body points at the shared body: no copy per scrape.
    const std::string& body = server_.options().body;
    response_.body() = found ? http::span_body<const char>::value_type(body.data(), body.size())
                             : http::span_body<const char>::value_type(kNotFound,
                                                                       sizeof kNotFound - 1);
    response_.keep_alive(request.keep_alive());
    response_.prepare_payload();
    beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                        if (error) return;
                        if (self->response_.keep_alive()) {
                          self->ArmHeaderDeadline();  // the next request gets a deadline anew
                          self->ReadRequest();
                        } else {
                          self->Close();
                        }
                      });
  }

  void Close() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  Server& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::span_body<const char>> response_;
};

void Server::StartSession(tcp::socket socket) {
  if (tls_) {
    std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls_), *this)->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), *this)
        ->Start();
  }
}

// beast_lazy_server: the session (and with it the TLS engine: Asio's two 17 KiB record buffers
// and OpenSSL's state) is made only once the client has sent a byte, as the agent does
// (src/web/http_session.h); until then a connection is its socket and a timer.
void Server::AfterFirstByte(tcp::socket socket) {
  auto held = std::make_shared<tcp::socket>(std::move(socket));
  auto deadline = std::make_shared<asio::steady_timer>(
      held->get_executor(), std::chrono::milliseconds(options_.header_timeout_ms));
  deadline->async_wait([held](beast::error_code error) {
    if (!error) held->cancel();
  });
  held->async_wait(tcp::socket::wait_read, [this, held, deadline](beast::error_code error) {
    deadline->cancel();
    if (error) {
      Release();
      return;
    }
    StartSession(std::move(*held));
  });
}

void Server::Accept() {
  acceptor_.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (error) {  // e.g. EMFILE: try again rather than stop serving
      Accept();
      return;
    }
    ++open_;
    // A response ends in a small write (the body's tail, a TLS record): with Nagle on it waits
    // for the client's delayed ACK, which held keep-alive TLS to about half its rate here.
    socket.set_option(tcp::no_delay(true));
    if (kWaitForFirstByte) {
      AfterFirstByte(std::move(socket));
    } else {
      StartSession(std::move(socket));
    }
    if (open_ < options_.max_connections) Accept();  // else Release() resumes
  });
}

int main(int argc, char** argv) {
  const BenchOptions options = ParseOptionsOrDie(argc, argv);
  std::optional<asio::ssl::context> tls;
  if (options.tls()) {
    tls.emplace(asio::ssl::context::tls_server);
    // The OpenSSL context is at hand (native_handle), so web-config TLS options map 1:1.
    SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_2_VERSION);
    tls->use_certificate_chain_file(options.cert);
    tls->use_private_key_file(options.key, asio::ssl::context::pem);
  }
  asio::io_context io(1);  // concurrency hint: one thread runs it
  Server server(io, options, tls ? &*tls : nullptr);
  server.Accept();
  io.run();
  return 0;
}
