// HttpListener's inside, shared by http_listener.cc (accepting, stopping) and http_session.h (one
// connection). Only these two files include Boost.Asio and Beast: they are slow to compile.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "http_listener.h"
#include "rail/base/log.h"

namespace rail::web::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// What the listener asks of every connection when it stops.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Closes the connection now unless it is answering a request; then after the response.
  virtual void StopIdle() = 0;
};

enum class DropReason { kTimeout, kTlsHandshake, kBadRequest, kTooLarge };

class HttpListener::Impl {
 public:
  Impl(const ListenerOptions& options, Handler handler, ListenerMetrics metrics);
  ~Impl();

  // BeginStop on the loop, the drain (until the request timeout, or `by` when given, whichever
  // comes first), then every thread joined. Once; the destructor does it without `by`.
  void Stop(const base::Deadline* by);
  std::vector<int> Ports() const;

  // For the sessions, on the event loop's thread unless said otherwise.
  asio::io_context& EventLoop() { return io_; }
  asio::io_context& Handlers() { return handlers_; }
  std::chrono::milliseconds RequestTimeout() const { return options_.request_timeout; }
  bool Stopping() const { return stopping_; }
  HttpResponse Handle(const HttpRequest& request) const;  // a handler thread; never throws
  void Register(SessionBase* session);
  void Unregister(SessionBase* session);  // also from ~Impl's thread, after the loop stopped
  void Dropped(DropReason reason, const std::string& remote, const std::string& detail);

 private:
  void Bind(const Endpoint& endpoint);
  void Accept(tcp::acceptor& acceptor);
  void OnAccept(tcp::acceptor& acceptor, const boost::system::error_code& error,
                tcp::socket socket);
  void RetryAccept(tcp::acceptor& acceptor);
  void StartSession(tcp::socket socket);
  void BeginStop();
  void WaitForSessions(const base::Deadline* by);

  // Declared before io_: the sessions its queue may still hold when it is destroyed use them.
  const ListenerOptions options_;
  const Handler handler_;
  const ListenerMetrics metrics_;
  std::optional<asio::ssl::context> tls_;
  std::set<SessionBase*> sessions_;
  std::vector<tcp::acceptor*> paused_;  // not accepting while the ceiling is reached
  std::atomic<bool> stopping_{false};
  std::mutex drained_mutex_;
  std::condition_variable drained_changed_;
  bool drained_ = false;
  bool stopped_ = false;  // Stop's caller's thread only

  asio::io_context handlers_;
  asio::executor_work_guard<asio::io_context::executor_type> handlers_work_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> io_work_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;  // destroyed before io_
  base::RateLimitedLog drop_log_;
  std::thread event_loop_;
  std::vector<std::thread> handler_threads_;
};

}  // namespace rail::web::detail
