// fleet.discovery.dns: A, AAAA or SRV records through c-ares, bounded by the source's timeout.
#include <ares.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "rail/fleet/discovery.h"
#include "rail/peer/connection.h"

namespace rail::fleet {
namespace {

using std::chrono::milliseconds;

// c-ares's tries: two, the first a third of the timeout (the second waits twice as long). The
// whole lookup is also cut off at the timeout, whatever c-ares would still try.
constexpr int kTries = 2;

// The size that bounds one answer (RFC 1035 4.2.2): a message over TCP, which the source asks
// over, is at most 65,535 bytes (its length prefix has 16 bits).
constexpr std::size_t kMaxMessageBytes = 65535;
constexpr std::size_t kHeaderBytes = 12;
// The question's type and class after its name; its name costs the name's length plus 2.
constexpr std::size_t kQuestionFixedBytes = 4;

void InitLibraryOnce() {
  static std::once_flag once;
  std::call_once(once, [] { ares_library_init(ARES_LIB_INIT_ALL); });
}

// One c-ares channel, destroyed (its sockets closed, its pending queries cancelled) on scope exit.
class Channel {
 public:
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    if (channel_ != nullptr) ares_destroy(channel_);
  }

  // Empty on success, else why the channel cannot be used.
  std::string Open(const DnsConfig& config) {
    ares_options options{};
    options.timeout = static_cast<int>(std::max<milliseconds::rep>(1, config.timeout.count() / 3));
    options.tries = kTries;
    // Over TCP only: a fleet's answer rarely fits a UDP datagram, and a server may fill one
    // exactly and leave TC unset (dnsmasq 2.90 does), which would pass for a complete answer.
    options.flags = ARES_FLAG_USEVC;
    int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS;
    // resolv.conf's search domains belong to resolv.conf's servers: with a server of its own, a
    // name is asked as written.
    if (!config.server.empty()) mask |= ARES_OPT_DOMAINS;  // options.ndomains = 0: none
    int status = ares_init_options(&channel_, &options, mask);
    if (status != ARES_SUCCESS) {
      channel_ = nullptr;
      return std::string("resolver setup failed: ") + ares_strerror(status);
    }
    if (config.server.empty()) return {};
    std::string error;
    const auto server = peer::ParseHostPort(config.server, 53, &error);
    if (!server) return "server " + config.server + ": " + error;
    const std::string csv = peer::FormatHostPort(server->host, server->port);
    status = ares_set_servers_ports_csv(channel_, csv.c_str());
    if (status != ARES_SUCCESS) {
      return "server " + config.server + ": " + ares_strerror(status) + " (a numeric address?)";
    }
    return {};
  }
  ares_channel get() const { return channel_; }

 private:
  ares_channel channel_ = nullptr;
};

// What the lookups of one refresh found, filled by the c-ares callbacks.
struct Lookups {
  const DnsConfig* config = nullptr;
  int pending = 0;
  std::vector<Target> targets;
  std::vector<std::string> errors;
};

struct Query {
  Lookups* lookups;
  std::string name;
};

struct HostentFree {
  void operator()(hostent* host) const { ares_free_hostent(host); }
};
struct AresDataFree {
  void operator()(void* data) const { ares_free_data(data); }
};

// Addresses of an A or AAAA answer, each with the configured port.
int ParseAddresses(const unsigned char* answer, int length, Lookups* lookups) {
  hostent* raw = nullptr;
  const bool v6 = lookups->config->type == DnsRecordType::kAaaa;
  const int status = v6 ? ares_parse_aaaa_reply(answer, length, &raw, nullptr, nullptr)
                        : ares_parse_a_reply(answer, length, &raw, nullptr, nullptr);
  const std::unique_ptr<hostent, HostentFree> host(raw);
  if (status != ARES_SUCCESS) return status;
  for (char** address = host->h_addr_list; *address != nullptr; ++address) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(host->h_addrtype, *address, text, sizeof text);
    lookups->targets.push_back({peer::FormatHostPort(text, lookups->config->port), {}});
  }
  return ARES_SUCCESS;
}

// SRV: the target name and the record's port, as Prometheus's dns_sd gives them.
int ParseServices(const unsigned char* answer, int length, Lookups* lookups) {
  ares_srv_reply* raw = nullptr;
  const int status = ares_parse_srv_reply(answer, length, &raw);
  const std::unique_ptr<void, AresDataFree> services(raw);
  if (status != ARES_SUCCESS) return status;
  for (const ares_srv_reply* service = raw; service != nullptr; service = service->next) {
    std::string host = service->host;
    if (!host.empty() && host.back() == '.') host.pop_back();
    lookups->targets.push_back({peer::FormatHostPort(host, service->port), {}});
  }
  return ARES_SUCCESS;
}

// A name that does not exist, or has no records of the type, lists no peers: the fleet is empty,
// not broken. Everything else (timeouts, SERVFAIL, REFUSED, a garbled answer) fails the refresh.
bool MeansNoRecords(int status) {
  return status == ARES_ENOTFOUND || status == ARES_ENODATA;
}

const char* TypeName(DnsRecordType type) {
  switch (type) {
    case DnsRecordType::kA:
      return "A";
    case DnsRecordType::kAaaa:
      return "AAAA";
    case DnsRecordType::kSrv:
      return "SRV";
  }
  return "A";
}

// The TC bit of the answer's header (RFC 1035 4.1.1: byte 2, bit 0x02): c-ares 1.18 has no
// accessor for the header's flags, and passes a truncated TCP answer on as a success.
bool TruncatedFlag(const unsigned char* answer, int length) {
  return length > 2 && (answer[2] & 0x02) != 0;
}

// An answer that left records out: its TC bit says so, or it fills a TCP message so that no
// further record would fit (a server need not set TC over TCP, and then nothing tells a full
// answer from a complete one). `came`: the records parsed from it.
std::optional<std::string> Truncation(const std::string& name, DnsRecordType type, std::size_t came,
                                      const unsigned char* answer, int length) {
  const auto bytes = static_cast<std::size_t>(std::max(length, 0));
  const std::size_t fixed = kHeaderBytes + name.size() + 2 + kQuestionFixedBytes;
  // The mean size of one record of this answer (A: 16 bytes, AAAA: 28, SRV: 18 + its target).
  const std::size_t per_record = came == 0 || bytes <= fixed ? 0 : (bytes - fixed) / came;
  const bool full = per_record > 0 && bytes + per_record > kMaxMessageBytes;
  if (!TruncatedFlag(answer, length) && !full) return std::nullopt;
  const std::string kind = TypeName(type);
  std::string error = name + ": the answer is truncated: " + std::to_string(came) + " " + kind +
                      " records came in " + std::to_string(bytes) + " bytes";
  if (per_record == 0) return error + "; give each rack or pod a name of its own";
  const std::size_t fit = (kMaxMessageBytes - fixed) / per_record;
  return error + ", and a DNS answer holds at most " + std::to_string(kMaxMessageBytes) +
         " bytes even over TCP (" + std::to_string(fit) + " " + kind + " records of " +
         std::to_string(per_record) + " bytes for this name). The name lists more targets than " +
         "one answer carries, and which of them come depends on the server: give each rack or " +
         "pod a name of its own (under " + std::to_string(fit) +
         " records each) and list them all in fleet.discovery.dns.names, which are unioned";
}

void OnAnswer(void* arg, int status, int /*timeouts*/, unsigned char* answer, int length) {
  const std::unique_ptr<Query> query(static_cast<Query*>(arg));
  Lookups* lookups = query->lookups;
  --lookups->pending;
  if (status == ARES_SUCCESS) {
    const std::size_t before = lookups->targets.size();
    const DnsRecordType type = lookups->config->type;
    status = type == DnsRecordType::kSrv ? ParseServices(answer, length, lookups)
                                         : ParseAddresses(answer, length, lookups);
    const std::size_t came = lookups->targets.size() - before;
    if (status == ARES_SUCCESS) {
      if (auto error = Truncation(query->name, type, came, answer, length)) {
        lookups->errors.push_back(std::move(*error));
      }
      return;
    }
  }
  if (MeansNoRecords(status)) return;
  // Cancelled: the refresh ran out of time (see Run).
  const char* why = status == ARES_ECANCELLED ? "timed out" : ares_strerror(status);
  lookups->errors.push_back(query->name + ": " + why);
}

int QueryType(DnsRecordType type) {
  switch (type) {
    case DnsRecordType::kA:
      return ns_t_a;
    case DnsRecordType::kAaaa:
      return ns_t_aaaa;
    case DnsRecordType::kSrv:
      return ns_t_srv;
  }
  return ns_t_a;
}

// Drives the channel's sockets until every query answered or `deadline` passed (then the rest
// are cancelled, which answers them with ARES_ECANCELLED).
void Run(const Channel& channel, const Lookups& lookups, const base::Deadline& deadline) {
  while (lookups.pending > 0) {
    if (deadline.Passed()) {
      ares_cancel(channel.get());
      return;
    }
    const auto left = std::chrono::ceil<milliseconds>(deadline.BlockFor());
    timeval most{static_cast<time_t>(left.count() / 1000),
                 static_cast<suseconds_t>(left.count() % 1000 * 1000)};
    timeval wait{};
    const timeval* until = ares_timeout(channel.get(), &most, &wait);
    const int wait_ms = static_cast<int>(until->tv_sec * 1000 + (until->tv_usec + 999) / 1000);

    ares_socket_t sockets[ARES_GETSOCK_MAXNUM];
    const int bits = ares_getsock(channel.get(), sockets, ARES_GETSOCK_MAXNUM);
    pollfd fds[ARES_GETSOCK_MAXNUM];
    nfds_t count = 0;
    for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
      const bool readable = ARES_GETSOCK_READABLE(bits, i);
      const bool writable = ARES_GETSOCK_WRITABLE(bits, i);
      if (!readable && !writable) continue;
      fds[count++] = pollfd{
          sockets[i], static_cast<short>((readable ? POLLIN : 0) | (writable ? POLLOUT : 0)), 0};
    }
    if (poll(fds, count, wait_ms) <= 0) {
      ares_process_fd(channel.get(), ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // retransmits, timeouts
      continue;
    }
    for (nfds_t i = 0; i < count; ++i) {
      const bool in = fds[i].revents & (POLLIN | POLLERR | POLLHUP);
      const bool out = fds[i].revents & POLLOUT;
      ares_process_fd(channel.get(), in ? fds[i].fd : ARES_SOCKET_BAD,
                      out ? fds[i].fd : ARES_SOCKET_BAD);
    }
  }
}

class DnsSource final : public Source {
 public:
  explicit DnsSource(DnsConfig config) : config_(std::move(config)) { InitLibraryOnce(); }

  std::string Name() const override {
    std::string name = "dns:";
    for (std::size_t i = 0; i < config_.names.size(); ++i) {
      name += (i ? "," : "") + config_.names[i];
    }
    return name;
  }
  base::Duration RefreshInterval() const override { return config_.refresh_interval; }

  FetchResult Fetch(const base::Clock& clock, const std::atomic<bool>& abandon) override {
    const auto deadline = base::Deadline::After(clock, config_.timeout).OrWhenSet(abandon);
    // Before the channel: destroying a channel answers its pending queries, which write here.
    Lookups lookups{&config_, 0, {}, {}};
    Channel channel;
    if (std::string error = channel.Open(config_); !error.empty()) {
      return FetchResult{std::nullopt, std::move(error)};
    }
    for (const auto& name : config_.names) {
      ++lookups.pending;
      // Without a server of its own, searched as resolv.conf says (ndots, search domains), as a
      // pod's own lookups are.
      ares_search(channel.get(), name.c_str(), ns_c_in, QueryType(config_.type), OnAnswer,
                  new Query{&lookups, name});
    }
    Run(channel, lookups, deadline);
    if (!lookups.errors.empty()) {
      std::string error = lookups.errors.front();
      for (std::size_t i = 1; i < lookups.errors.size(); ++i) error += "; " + lookups.errors[i];
      return FetchResult{std::nullopt, std::move(error)};
    }
    return FetchResult{MergeTargets({lookups.targets}), {}};
  }

 private:
  const DnsConfig config_;
};

}  // namespace

std::unique_ptr<Source> MakeDnsSource(DnsConfig config) {
  return std::make_unique<DnsSource>(std::move(config));
}

}  // namespace rail::fleet
