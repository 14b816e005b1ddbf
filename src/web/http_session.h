// One HTTP connection, plain or TLS: handshake, then requests read whole within the deadline,
// answered on a handler thread, written back on the event loop; kept alive while the client
// asks. Every step runs on the event loop's thread except the handler.
#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "listener_core.h"

namespace rail::web::detail {

namespace beast = boost::beast;
namespace http = beast::http;

// A scrape's request is a few hundred bytes; civetweb allowed 16 KiB of headers too.
inline constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// No path takes a body; /-/reload may carry an empty one.
inline constexpr std::uint64_t kBodyLimit = 64 * 1024;

// The client went away, at a request boundary or in the middle: nothing to answer or count.
bool IsClientGone(const beast::error_code& error);

// The request as the router reads it.
HttpRequest ToRequest(const http::request<http::string_body>& request, const std::string& remote);

// The response as Beast writes it; `head` leaves the body out, keeping its length.
void FillResponse(HttpResponse answer, bool head, http::response<http::string_body>* response);

template <class Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  // `tls`: the context of a TLS listener, nullptr for plain HTTP.
  Session(HttpListener::Impl& owner, std::string remote, tcp::socket socket,
          asio::ssl::context* tls)
      : owner_(owner),
        remote_(std::move(remote)),
        socket_(std::move(socket)),
        tls_(tls),
        first_byte_deadline_(socket_.get_executor()) {
    owner_.Register(this);
  }
  ~Session() override { owner_.Unregister(this); }

  // Waits for the client's first byte before anything else: an idle connection then costs its
  // socket and this object, not a TLS engine (two 17 KiB record buffers in Asio, OpenSSL's
  // state) nor a read buffer. The one deadline, from the accept, covers the wait, the handshake
  // and the whole first request.
  void Start() {
    deadline_ = std::chrono::steady_clock::now() + owner_.RequestTimeout();
    first_byte_deadline_.expires_at(deadline_);
    first_byte_deadline_.async_wait(
        [weak = this->weak_from_this()](const beast::error_code& error) {
          const auto self = weak.lock();
          // Cancelled, the session ended, or the first byte came just as the timer fired (its
          // wait already completed; the socket is the stream's now).
          if (error || !self || self->stream_) return;
          self->first_byte_timed_out_ = true;
          beast::error_code ignored;
          self->socket_.cancel(ignored);
        });
    socket_.async_wait(tcp::socket::wait_read,
                       [self = this->shared_from_this()](const beast::error_code& error) {
                         self->OnFirstByte(error);
                       });
  }

  void StopIdle() override {
    if (!stream_) {
      first_byte_deadline_.cancel();
      beast::error_code ignored;
      socket_.cancel(ignored);
      return;
    }
    if (busy_) return;  // the response goes out with "Connection: close", then it closes
    Tcp().cancel();
  }

 private:
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(*stream_); }

  void OnFirstByte(const beast::error_code& waited) {
    first_byte_deadline_.cancel();
    if (waited) {
      if (first_byte_timed_out_) {
        owner_.Dropped(DropReason::kTimeout, remote_, "nothing sent before the deadline");
      }
      return;
    }
    if constexpr (kTls) {
      stream_.emplace(std::move(socket_), *tls_);
    } else {
      stream_.emplace(std::move(socket_));
    }
    Tcp().expires_at(deadline_);
    if constexpr (kTls) {
      stream_->async_handshake(asio::ssl::stream_base::server,
                               [self = this->shared_from_this()](const beast::error_code& error) {
                                 self->OnHandshake(error);
                               });
    } else {
      Read();
    }
  }

  void OnHandshake(const beast::error_code& error) {
    if (!error) return Read();
    if (error == beast::error::timeout) {
      owner_.Dropped(DropReason::kTimeout, remote_, "no TLS handshake before the deadline");
    } else if (error != asio::error::operation_aborted && !IsClientGone(error)) {
      owner_.Dropped(DropReason::kTlsHandshake, remote_, error.message());
    }
  }

  void Read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kBodyLimit);
    http::async_read(*stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](const beast::error_code& error,
                                                       std::size_t) { self->OnRead(error); });
  }

  void OnRead(const beast::error_code& error) {
    if (!error) return Dispatch();
    if (error == beast::error::timeout) {
      // A kept-alive connection that asks nothing more is closed quietly: that is its end.
      if (!served_ || parser_->got_some()) {
        owner_.Dropped(DropReason::kTimeout, remote_, "no whole request before the deadline");
      }
      return;
    }
    if (error == asio::error::operation_aborted || IsClientGone(error)) return;
    const bool too_large = error == http::error::header_limit || error == http::error::body_limit;
    owner_.Dropped(too_large ? DropReason::kTooLarge : DropReason::kBadRequest, remote_,
                   error.message());
    HttpResponse answer;
    answer.status = error == http::error::header_limit ? 431 : too_large ? 413 : 400;
    answer.body = error.message() + "\n";
    head_ = false;
    version_ = 11;
    closing_ = true;
    Write(std::move(answer));
  }

  void Dispatch() {
    const auto& request = parser_->get();
    busy_ = true;
    head_ = request.method() == http::verb::head;
    version_ = request.version();
    closing_ = !request.keep_alive();
    if (owner_.Stopping()) {
      HttpResponse stopping;
      stopping.status = 503;
      stopping.body = "Stopping\n";
      return Write(std::move(stopping));
    }
    asio::post(owner_.Handlers(),
               [self = this->shared_from_this(), asked = ToRequest(request, remote_)]() mutable {
                 HttpResponse answer = self->owner_.Handle(asked);
                 asio::io_context& loop = self->owner_.EventLoop();
                 asio::post(loop, [self = std::move(self), answer = std::move(answer)]() mutable {
                   self->Write(std::move(answer));
                 });
               });
  }

  void Write(HttpResponse answer) {
    busy_ = true;
    response_ = {};
    response_.version(version_);
    FillResponse(std::move(answer), head_, &response_);
    response_.keep_alive(!closing_ && !owner_.Stopping());
    Tcp().expires_after(owner_.RequestTimeout());
    http::async_write(*stream_, response_,
                      [self = this->shared_from_this()](const beast::error_code& error,
                                                        std::size_t) { self->OnWrite(error); });
  }

  void OnWrite(const beast::error_code& error) {
    busy_ = false;
    served_ = true;
    if (error) return;  // the client left; the socket closes with the session
    if (!response_.keep_alive()) return Shutdown();
    Tcp().expires_after(owner_.RequestTimeout());
    Read();
  }

  void Shutdown() {
    if constexpr (kTls) {
      // close_notify, bounded by the deadline; the socket closes with the session either way.
      stream_->async_shutdown([self = this->shared_from_this()](const beast::error_code&) {});
    } else {
      beast::error_code ignored;
      Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  HttpListener::Impl& owner_;
  const std::string remote_;
  tcp::socket socket_;  // until the first byte; then it is the stream's
  asio::ssl::context* const tls_;
  asio::steady_timer first_byte_deadline_;
  std::chrono::steady_clock::time_point deadline_;
  bool first_byte_timed_out_ = false;
  std::optional<Stream> stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  unsigned version_ = 11;
  bool head_ = false;
  bool busy_ = false;     // a request is being answered
  bool served_ = false;   // at least one response went out
  bool closing_ = false;  // the client asked to close, or the request was refused
};

}  // namespace rail::web::detail
