#include "http_listener.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http_session.h"
#include "rail/web/web_server.h"
#include "tls_context.h"

namespace rail::web::detail {

bool IsClientGone(const beast::error_code& error) {
  return error == http::error::end_of_stream || error == http::error::partial_message ||
         error == asio::error::eof || error == asio::error::connection_reset ||
         error == asio::error::broken_pipe || error == asio::ssl::error::stream_truncated;
}

HttpRequest ToRequest(const http::request<http::string_body>& request, const std::string& remote) {
  HttpRequest asked;
  asked.method = std::string(request.method_string());
  asked.target = std::string(request.target());
  if (const auto authorization = request.find(http::field::authorization);
      authorization != request.end()) {
    asked.has_authorization = true;
    asked.authorization = std::string(authorization->value());
  }
  asked.accept_encoding = std::string(request[http::field::accept_encoding]);
  asked.remote_address = remote;
  return asked;
}

void FillResponse(HttpResponse answer, bool head, http::response<http::string_body>* response) {
  response->result(static_cast<unsigned>(answer.status));
  response->set(http::field::content_type, answer.content_type);
  response->set(http::field::cache_control, "no-cache");
  if (!answer.content_encoding.empty()) {
    response->set(http::field::content_encoding, answer.content_encoding);
  }
  for (const auto& [name, value] : answer.headers) response->set(name, value);
  response->content_length(answer.body.size());
  if (!head) response->body() = std::move(answer.body);
}

namespace {

// Named by the thread that starts it, so that the name is there before the constructor returns
// (ps, top -H and /proc/<pid>/task/<tid>/comm show it).
void Name(std::thread& thread, const char* name) {
  pthread_setname_np(thread.native_handle(), name);
}

// Runs a loop until it is stopped or runs out of work; a handler that throws is logged and the
// loop goes on (no handler of ours should throw: this is the last line).
void RunLoop(asio::io_context& loop, const char* name) {
  for (;;) {
    try {
      loop.run();
      return;
    } catch (const std::exception& error) {
      spdlog::error("web: {} thread: {}", name, error.what());
    }
  }
}

std::string RemoteOf(const tcp::socket& socket) {
  boost::system::error_code error;
  const tcp::endpoint remote = socket.remote_endpoint(error);
  if (error) return "?";
  return remote.address().to_string() + ":" + std::to_string(remote.port());
}

std::string Spelled(const Endpoint& endpoint) {
  const bool v6 = endpoint.host.find(':') != std::string::npos;
  return (v6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + std::to_string(endpoint.port);
}

}  // namespace

HttpListener::Impl::Impl(const ListenerOptions& options, Handler handler, ListenerMetrics metrics)
    : options_(options),
      handler_(std::move(handler)),
      metrics_(metrics),
      handlers_work_(handlers_.get_executor()),
      io_work_(io_.get_executor()),
      drop_log_(std::chrono::seconds(10)) {
  if (options.tls) {
    tls_.emplace(asio::ssl::context::tls_server);
    if (std::string error; !ConfigureTlsContext(tls_->native_handle(), *options.tls, &error)) {
      throw WebError(error);
    }
  }
  if (options.endpoints.empty()) throw WebError("no listen address given");
  for (const Endpoint& endpoint : options.endpoints) Bind(endpoint);
  for (const auto& acceptor : acceptors_) Accept(*acceptor);
  event_loop_ = std::thread([this] { RunLoop(io_, "event loop"); });
  Name(event_loop_, "web-loop");
  for (int i = 0; i < kHandlerThreads; ++i) {
    Name(handler_threads_.emplace_back([this] { RunLoop(handlers_, "handler"); }), "web-handler");
  }
}

void HttpListener::Impl::Bind(const Endpoint& endpoint) {
  boost::system::error_code error;
  tcp::endpoint address(tcp::v6(), endpoint.port);
  if (!endpoint.host.empty()) {
    address = tcp::endpoint(asio::ip::make_address(endpoint.host, error), endpoint.port);
    if (error) throw WebError("cannot listen on " + Spelled(endpoint) + ": not an IP address");
  }
  auto acceptor = std::make_unique<tcp::acceptor>(io_);
  acceptor->open(address.protocol(), error);
  if (error && endpoint.host.empty()) {  // a host without IPv6: every IPv4 address
    address = tcp::endpoint(tcp::v4(), endpoint.port);
    error.clear();
    acceptor->open(address.protocol(), error);
  }
  if (!error && endpoint.host.empty() && address.protocol() == tcp::v6()) {
    acceptor->set_option(asio::ip::v6_only(false), error);
  }
  if (!error) acceptor->set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor->bind(address, error);
  if (!error) acceptor->listen(asio::socket_base::max_listen_connections, error);
  if (error) throw WebError("cannot listen on " + Spelled(endpoint) + ": " + error.message());
  acceptors_.push_back(std::move(acceptor));
}

void HttpListener::Impl::Accept(tcp::acceptor& acceptor) {
  if (stopping_) return;
  if (static_cast<int>(sessions_.size()) >= options_.max_connections) {
    paused_.push_back(&acceptor);  // Unregister resumes it
    return;
  }
  acceptor.async_accept(
      io_, [this, &acceptor](const boost::system::error_code& error, tcp::socket socket) {
        OnAccept(acceptor, error, std::move(socket));
      });
}

void HttpListener::Impl::OnAccept(tcp::acceptor& acceptor, const boost::system::error_code& error,
                                  tcp::socket socket) {
  if (stopping_ || error == asio::error::operation_aborted) return;
  if (error) {
    // Out of descriptors, most likely (EMFILE): accepting again at once would spin.
    spdlog::warn("web: cannot accept a connection: {}; trying again in 100 ms", error.message());
    return RetryAccept(acceptor);
  }
  StartSession(std::move(socket));
  Accept(acceptor);
}

void HttpListener::Impl::RetryAccept(tcp::acceptor& acceptor) {
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
  timer->async_wait([this, &acceptor, timer](const boost::system::error_code& error) {
    if (!error) Accept(acceptor);
  });
}

void HttpListener::Impl::StartSession(tcp::socket socket) {
  std::string remote = RemoteOf(socket);
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls_) {
    std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(*this, std::move(remote),
                                                                    std::move(socket), &*tls_)
        ->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(*this, std::move(remote), std::move(socket),
                                                 nullptr)
        ->Start();
  }
}

HttpResponse HttpListener::Impl::Handle(const HttpRequest& request) const {
  try {
    return handler_(request);
  } catch (const std::exception& error) {
    spdlog::error("web: {} {} from {} failed: {}", request.method, request.target,
                  request.remote_address, error.what());
    HttpResponse failed;
    failed.status = 500;
    failed.body = "Internal Server Error\n";
    return failed;
  }
}

void HttpListener::Impl::Register(SessionBase* session) {
  sessions_.insert(session);
  metrics_.open_connections->Increment();
}

void HttpListener::Impl::Unregister(SessionBase* session) {
  sessions_.erase(session);
  metrics_.open_connections->Decrement();
  if (stopping_) {
    if (!sessions_.empty()) return;
    std::lock_guard lock(drained_mutex_);
    drained_ = true;
    drained_changed_.notify_all();
    return;
  }
  std::vector<tcp::acceptor*> paused = std::move(paused_);
  paused_.clear();
  for (tcp::acceptor* acceptor : paused) Accept(*acceptor);
}

void HttpListener::Impl::Dropped(DropReason reason, const std::string& remote,
                                 const std::string& detail) {
  static constexpr const char* kNames[] = {"timeout", "tls_handshake", "bad_request", "too_large"};
  prometheus::Counter* counters[] = {metrics_.dropped.timeout, metrics_.dropped.tls_handshake,
                                     metrics_.dropped.bad_request, metrics_.dropped.too_large};
  const auto index = static_cast<std::size_t>(reason);
  counters[index]->Increment();
  if (std::uint64_t suppressed = 0; drop_log_.Admit(&suppressed)) {
    spdlog::warn("web: dropped the connection from {} ({}: {}); {} more not logged since the last",
                 remote, kNames[index], detail, suppressed);
  }
}

void HttpListener::Impl::BeginStop() {
  stopping_ = true;
  for (const auto& acceptor : acceptors_) {
    boost::system::error_code ignored;
    acceptor->close(ignored);
  }
  for (SessionBase* session : sessions_) session->StopIdle();
  if (!sessions_.empty()) return;
  std::lock_guard lock(drained_mutex_);
  drained_ = true;
  drained_changed_.notify_all();
}

// Requests in flight finish; one that outlasts its deadline is cut when the loop stops.
void HttpListener::Impl::WaitForSessions(const base::Deadline* by) {
  const auto own = base::Deadline::After(base::SystemClock(),
                                         options_.request_timeout + std::chrono::seconds(1));
  std::unique_lock lock(drained_mutex_);
  while (!drained_ && !own.Passed() && !(by != nullptr && by->Passed())) {
    drained_changed_.wait_for(
        lock, by != nullptr ? std::min(own.BlockFor(), by->BlockFor()) : own.BlockFor());
  }
}

HttpListener::Impl::~Impl() {
  Stop(nullptr);
}

void HttpListener::Impl::Stop(const base::Deadline* by) {
  if (stopped_) return;
  stopped_ = true;
  asio::post(io_, [this] { BeginStop(); });
  WaitForSessions(by);
  handlers_work_.reset();
  for (std::thread& thread : handler_threads_) thread.join();
  io_work_.reset();
  io_.stop();
  event_loop_.join();
}

std::vector<int> HttpListener::Impl::Ports() const {
  std::vector<int> ports;
  for (const auto& acceptor : acceptors_) {
    boost::system::error_code error;
    const tcp::endpoint local = acceptor->local_endpoint(error);
    if (!error) ports.push_back(local.port());
  }
  return ports;
}

HttpListener::HttpListener(const ListenerOptions& options, Handler handler, ListenerMetrics metrics)
    : impl_(std::make_unique<Impl>(options, std::move(handler), metrics)) {}

HttpListener::~HttpListener() = default;

void HttpListener::Stop(const base::Deadline& by) {
  impl_->Stop(&by);
}

std::vector<int> HttpListener::Ports() const {
  return impl_->Ports();
}

}  // namespace rail::web::detail
