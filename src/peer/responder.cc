#include "rail/peer/responder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "rail/base/log.h"
#include "responder_session.h"
#include "shared_helpers.h"

namespace rail::peer {

namespace {

// Nonces are remembered longer than any handshake can take, and few enough to bound memory.
constexpr std::size_t kReplayCacheCapacity = 16384;
constexpr std::chrono::minutes kReplayCacheAge{10};
// Connections accepted per wake-up before the other events get a look.
constexpr int kAcceptBurst = 64;
constexpr std::chrono::seconds kRefusalLogInterval{10};

using detail::ErrnoText;

void Signal(int event_fd) {
  const std::uint64_t one = 1;
  // An eventfd write only fails when the counter would overflow, which cannot happen here.
  [[maybe_unused]] const ssize_t written = write(event_fd, &one, sizeof(one));
}

void Drain(int event_fd) {
  std::uint64_t value = 0;
  [[maybe_unused]] const ssize_t read_bytes = read(event_fd, &value, sizeof(value));
}

// Binds and listens on `host` ("" = every address) and `port`.
base::UniqueFd Listen(const std::string& host, std::uint16_t port, std::string* error) {
  sockaddr_storage address{};
  socklen_t length = 0;
  int family = AF_INET6;
  auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
  auto& v4 = reinterpret_cast<sockaddr_in&>(address);
  if (host.empty() || inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    if (host.empty()) v6.sin6_addr = in6addr_any;
    length = sizeof(sockaddr_in6);
  } else if (inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    family = AF_INET;
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    length = sizeof(sockaddr_in);
  } else {
    *error = "listen address \"" + host + "\" is not a numeric IPv4 or IPv6 address";
    return base::UniqueFd();
  }
  base::UniqueFd fd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd && host.empty() && errno == EAFNOSUPPORT) {
    // No IPv6 on this host: every IPv4 address instead.
    address = {};
    family = AF_INET;
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    v4.sin_addr.s_addr = htonl(INADDR_ANY);
    length = sizeof(sockaddr_in);
    fd = base::UniqueFd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  }
  if (!fd) {
    *error = "socket: " + ErrnoText(errno);
    return base::UniqueFd();
  }
  const int on = 1;
  const int off = 0;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (family == AF_INET6 && host.empty()) {
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    *error =
        "cannot bind " + FormatHostPort(host.empty() ? "::" : host, port) + ": " + ErrnoText(errno);
    return base::UniqueFd();
  }
  if (listen(fd.get(), SOMAXCONN) != 0) {
    *error = "listen: " + ErrnoText(errno);
    return base::UniqueFd();
  }
  return fd;
}

}  // namespace

struct Responder::Impl {
  struct SessionThread {
    std::thread thread;
    std::atomic<bool> finished{false};
  };

  Impl(ResponderOptions responder_options, ProbeHandlerFactory handler_factory)
      : options(std::move(responder_options)),
        factory(std::move(handler_factory)),
        clock(options.clock != nullptr ? options.clock : &steady_clock),
        replay_cache(*clock, kReplayCacheCapacity, kReplayCacheAge),
        rate_limiter(*clock, options.limits.probes_per_minute_per_peer,
                     options.limits.probe_burst_per_peer),
        allow_list(options.allowed_networks),
        slots(options.limits.max_concurrent_sessions, options.limits.max_connections_per_ip),
        stats(options.max_tracked_peers),
        bulk_gate(*clock, options.limits.bulk_concurrency, options.limits.bulk_retry_grace),
        served_budget(*clock, options.limits.max_served_bulk_time_fraction_per_rail,
                      options.limits.max_served_bytes_per_hour) {}

  void AcceptLoop();
  void AcceptPending();
  void ReapFinished(bool all);
  void RefuseBacklog();
  void LogRefusal(const std::string& reason, const std::string& address);

  ResponderOptions options;
  ProbeHandlerFactory factory;
  base::SteadyClock steady_clock;
  const base::Clock* clock;
  ReplayCache replay_cache;
  PeerRateLimiter rate_limiter;
  NetworkAllowList allow_list;
  SessionSlots slots;
  detail::StatsRecorder stats;
  BulkGate bulk_gate;
  ServedBudget served_budget;

  base::UniqueFd listen_fd;
  base::UniqueFd stop_fd;  // eventfd, readable for good once Stop() signals it
  base::UniqueFd reap_fd;  // eventfd, signalled by each session as it ends
  std::unique_ptr<detail::SessionContext> context;  // outlives every session thread
  std::uint16_t port = 0;
  std::thread accept_thread;
  std::mutex sessions_mutex;
  std::list<SessionThread> sessions;
  // Refusals at accept are logged at most once per kRefusalLogInterval: a flood must not flood
  // the log too.
  base::RateLimitedLog refusal_log{kRefusalLogInterval};
};

void Responder::Impl::LogRefusal(const std::string& reason, const std::string& address) {
  std::uint64_t suppressed = 0;
  if (!refusal_log.Admit(&suppressed)) return;
  spdlog::warn(
      "responder: refused a connection from {} at accept ({}); {} other refusal(s) since the "
      "last report",
      address, reason, suppressed);
}

void Responder::Impl::AcceptLoop() {
  while (true) {
    pollfd fds[3] = {
        {stop_fd.get(), POLLIN, 0}, {reap_fd.get(), POLLIN, 0}, {listen_fd.get(), POLLIN, 0}};
    // No timeout: every event this thread handles wakes it (stop, a session ending, a peer).
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("responder: poll failed: {}", ErrnoText(errno));
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents != 0) {
      Drain(reap_fd.get());
      ReapFinished(/*all=*/false);
    }
    if (fds[2].revents != 0) AcceptPending();
  }
}

void Responder::Impl::AcceptPending() {
  for (int i = 0; i < kAcceptBurst; ++i) {
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    base::UniqueFd socket(accept4(listen_fd.get(), reinterpret_cast<sockaddr*>(&peer), &peer_length,
                                  SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        // EMFILE and friends: the backlog keeps the peer waiting; it is retried on next wake.
        stats.Error("io");
        spdlog::warn("responder: accept failed: {}", ErrnoText(errno));
      }
      return;
    }
    stats.ConnectionAccepted();
    const std::string address = PeerAddress(socket.get());
    if (!allow_list.Allows(peer)) {
      // Not a byte for a stranger, not even an error reply: it learns nothing of this agent.
      stats.Error("not_allowed");
      LogRefusal("not in responder.allowed_networks", address);
      continue;
    }
    SessionSlots::Refusal refusal = SessionSlots::Refusal::kNone;
    std::optional<SessionSlots::Slot> slot = slots.TryAcquire(address, &refusal);
    if (!slot) {
      const bool per_address = refusal == SessionSlots::Refusal::kPerAddress;
      const std::string reason = per_address ? "ip_limit" : "limit";
      stats.Error(reason);
      LogRefusal(per_address ? "max_connections_per_ip reached" : "max_concurrent_sessions reached",
                 address);
      detail::RefuseConnection(std::move(socket), reason,
                               per_address
                                   ? "this responder already holds " +
                                         std::to_string(options.limits.max_connections_per_ip) +
                                         " connections from " + address + "; retry later"
                                   : "this responder already serves " +
                                         std::to_string(options.limits.max_concurrent_sessions) +
                                         " sessions; retry later",
                               options.limits.max_frame_bytes, *clock);
      continue;
    }
    const std::lock_guard lock(sessions_mutex);
    SessionThread& session = sessions.emplace_back();
    session.thread =
        std::thread([this, &session, slot = std::move(slot), socket = std::move(socket)]() mutable {
          detail::RunSession(*context, std::move(socket));
          slot.reset();  // before `finished`, so that the next peer finds the slot free
          session.finished = true;
          Signal(reap_fd.get());
        });
  }
}

// Peers whose connections wait in the listen backlog are told why they will not be served, as
// the sessions are, instead of being reset when the listener closes.
void Responder::Impl::RefuseBacklog() {
  while (true) {
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    base::UniqueFd socket(accept4(listen_fd.get(), reinterpret_cast<sockaddr*>(&peer), &peer_length,
                                  SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket) return;
    stats.ConnectionAccepted();
    if (!allow_list.Allows(peer)) {
      stats.Error("not_allowed");
      continue;
    }
    stats.Error("shutdown");
    detail::RefuseConnection(std::move(socket), "shutdown", "the responder is shutting down",
                             options.limits.max_frame_bytes, *clock);
  }
}

void Responder::Impl::ReapFinished(bool all) {
  std::list<SessionThread> done;
  {
    const std::lock_guard lock(sessions_mutex);
    for (auto it = sessions.begin(); it != sessions.end();) {
      const auto next = std::next(it);
      if (all || it->finished) done.splice(done.end(), sessions, it);
      it = next;
    }
  }
  for (SessionThread& session : done) {
    if (session.thread.joinable()) session.thread.join();
  }
}

Responder::Responder(ResponderOptions options, ProbeHandlerFactory factory)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(factory))) {}

Responder::~Responder() {
  Stop();
}

bool Responder::Start(std::string* error) {
  if (impl_->accept_thread.joinable()) {
    *error = "responder already started";
    return false;
  }
  if (std::optional<std::string> invalid = ValidateLimits(impl_->options.limits)) {
    *error = *invalid;
    return false;
  }
  if (impl_->options.secret == nullptr && !impl_->options.insecure) {
    spdlog::warn("responder: no shared secret and not insecure; every peer will be refused");
  }
  impl_->stop_fd = base::UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  impl_->reap_fd = base::UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->stop_fd || !impl_->reap_fd) {
    *error = "eventfd: " + ErrnoText(errno);
    return false;
  }
  impl_->listen_fd = Listen(impl_->options.listen_host, impl_->options.port, error);
  if (!impl_->listen_fd) return false;
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(impl_->listen_fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    impl_->port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                          : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  }
  impl_->context = std::make_unique<detail::SessionContext>(detail::SessionContext{
      impl_->options, *impl_->clock, impl_->factory, impl_->replay_cache, impl_->rate_limiter,
      impl_->stats, impl_->bulk_gate, impl_->served_budget, impl_->stop_fd.get()});
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->AcceptLoop(); });
  spdlog::info(
      "responder: listening on {}",
      FormatHostPort(impl_->options.listen_host.empty() ? "::" : impl_->options.listen_host,
                     impl_->port));
  return true;
}

void Responder::Stop() {
  if (!impl_->accept_thread.joinable()) return;
  Signal(impl_->stop_fd.get());
  impl_->accept_thread.join();
  impl_->RefuseBacklog();
  impl_->listen_fd.reset();
  impl_->ReapFinished(/*all=*/true);  // sessions see stop_fd in every wait
}

std::uint16_t Responder::ListeningPort() const {
  return impl_->port;
}

ResponderStats Responder::Snapshot() const {
  ResponderStats stats = impl_->stats.Snapshot(impl_->slots.in_use());
  stats.active_sources = impl_->slots.addresses();
  const BulkGateStats bulk = impl_->bulk_gate.Stats();
  stats.bulk_transfers_total = bulk.transfers_total;
  stats.bulk_overlaps_total = bulk.overlaps_total;
  return stats;
}

}  // namespace rail::peer
