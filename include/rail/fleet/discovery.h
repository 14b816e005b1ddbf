// Peer discovery: where an agent finds its peers (static, file_sd, DNS, Kubernetes), each source
// refreshed on its own interval and merged into one peer set. A source that fails keeps its last
// good targets, and the failure is logged and counted: a bad file or an unreachable DNS server
// never empties the fleet.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/fleet/target.h"

namespace rail::fleet {

// One refresh of one source: the targets, or why there are none this time.
struct FetchResult {
  std::optional<std::vector<Target>> targets;  // nullopt: the refresh failed
  std::string error;                           // one line, when it failed
};

class Source {
 public:
  virtual ~Source() = default;
  // "static", "file_sd:<path>", "dns:<name>", "kubernetes:<namespace>/<service>": the `source`
  // label of the discovery metrics and the prefix of its log lines.
  virtual std::string Name() const = 0;
  virtual base::Duration RefreshInterval() const = 0;
  // Blocks for at most the source's own timeout, measured on `clock` (the waits a resolver or
  // HTTP client is given are what is left of it), and ends within a tenth of a second once
  // `abandon` is set (the agent stops: base::Deadline::OrWhenSet). Never throws.
  virtual FetchResult Fetch(const base::Clock& clock, const std::atomic<bool>& abandon) = 0;
  // A fetch that nothing abandons (doctor, tests).
  FetchResult Fetch(const base::Clock& clock);
};

struct SourceStatus {
  std::string name;
  std::size_t targets = 0;  // the targets it contributes now (its last good list)
  bool healthy = false;     // the last refresh succeeded
  std::string last_error;   // of the last failed refresh, kept after a later success
  std::uint64_t refreshes = 0;
  std::uint64_t failures = 0;
  std::optional<base::WallTime> last_success;
  // The last fetch, failed ones included: how long it took (the injected clock) and the CPU the
  // fleet thread spent in it (its thread CPU clock: parsing, TLS, c-ares), in seconds.
  double last_fetch_seconds = 0;
  double last_fetch_cpu_seconds = 0;
};

// Thread-safe: the fleet thread refreshes, scrapes read Targets and Status.
class Discovery {
 public:
  Discovery(std::vector<std::unique_ptr<Source>> sources, const base::Clock& clock);

  // Fetches every source whose interval has passed (all of them on the first call). Returns true
  // when the merged targets changed. Once `abandon` is set the fetch under way ends early and
  // nothing is recorded: the agent is stopping.
  bool Refresh(const std::atomic<bool>& abandon);
  bool Refresh();
  // The merged targets (MergeTargets of every source's last good list, in source order).
  std::vector<Target> Targets() const;
  std::vector<SourceStatus> Status() const;
  // When the next source falls due; nullopt without sources.
  std::optional<base::TimePoint> NextRefresh() const;

 private:
  struct Entry {
    std::unique_ptr<Source> source;
    std::vector<Target> last_good;
    SourceStatus status;
    std::optional<base::TimePoint> next_due;  // nullopt: never fetched
  };
  std::vector<Target> MergedLocked() const;

  const base::Clock& clock_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<Target> merged_;
};

// The sources, from the configuration's fleet.discovery section.

std::unique_ptr<Source> MakeStaticSource(std::vector<Target> targets);

struct FileSdConfig {
  std::vector<std::string> files;  // paths; a path with * ? [ is a glob, as in Prometheus
  std::chrono::milliseconds refresh_interval{std::chrono::seconds(30)};
};
// Re-reads a file only when its size or modification time changed. A file that cannot be read or
// parsed fails the refresh (the source keeps its last good list); an empty glob is no error.
std::unique_ptr<Source> MakeFileSdSource(FileSdConfig config);

enum class DnsRecordType { kA, kAaaa, kSrv };
struct DnsConfig {
  std::vector<std::string> names;
  DnsRecordType type = DnsRecordType::kA;
  std::uint16_t port = 9841;  // A and AAAA: the responder port of every address
  // "ip" or "ip:port" ("[v6]:port"); empty: the servers of /etc/resolv.conf.
  std::string server;
  std::chrono::milliseconds refresh_interval{std::chrono::seconds(30)};
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};
};
// Resolves through c-ares. A: "a.b.c.d:port"; AAAA: "[v6]:port"; SRV: "<target>:<srv port>"
// (the SRV target name, as Prometheus's dns_sd does). A name with no records (NXDOMAIN, no
// answer) contributes nothing and is no error; a timeout or a server failure fails the refresh.
std::unique_ptr<Source> MakeDnsSource(DnsConfig config);

struct KubernetesConfig {
  std::string service;     // the Service whose EndpointSlices list the agents
  std::string namespace_;  // empty: the pod's own (namespace_file)
  // The EndpointSlice port to use, by name; empty: the port named "responder", else the only one.
  std::string port_name;
  std::string api_server = "https://kubernetes.default.svc";
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  std::chrono::milliseconds refresh_interval{std::chrono::seconds(30)};
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
};
// Lists discovery.k8s.io/v1 EndpointSlices labelled kubernetes.io/service-name=<service> over
// HTTPS (libcurl, the CA file verifies the API server, the token is re-read on every refresh as
// kubelet rotates it). Endpoints not ready are left out. Each target gets the labels
// `node` (nodeName) and `pod` (targetRef name) where the slice gives them.
std::unique_ptr<Source> MakeKubernetesSource(KubernetesConfig config);

}  // namespace rail::fleet
