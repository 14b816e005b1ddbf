// The DNS source against a real server: dnsmasq on a free loopback port, serving records the test
// chooses, restarted with others, then gone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "fetched_addresses.h"
#include "rail/fleet/discovery.h"
#include "rail/peer/connection.h"
#include "support/captured_log.h"
#include "support/fake_clock.h"

extern char** environ;

namespace rail::fleet {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDnsmasq = "/usr/sbin/dnsmasq";

// A UDP socket on 127.0.0.1; port 0 picks a free one.
base::UniqueFd BindUdp(std::uint16_t port) {
  base::UniqueFd fd(socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fd.reset();
  return fd;
}

// A TCP server on 127.0.0.1 whose backlog takes connections and queries that nobody answers.
base::UniqueFd SilentTcpServer() {
  base::UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd.get(), 4) != 0) {
    fd.reset();
  }
  return fd;
}

bool AcceptsTcp(std::uint16_t port) {
  const base::UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
}

std::uint16_t PortOf(const base::UniqueFd& fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

// dnsmasq in the foreground, answering only the records given, killed on destruction.
class Dnsmasq {
 public:
  Dnsmasq(std::uint16_t port, const std::vector<std::string>& records) : port_(port) {
    std::vector<std::string> args = {kDnsmasq,
                                     "--keep-in-foreground",
                                     "--conf-file=/dev/null",
                                     "--no-resolv",
                                     "--no-hosts",
                                     "--port=" + std::to_string(port),
                                     "--listen-address=127.0.0.1",
                                     "--bind-interfaces",
                                     "--local=/test/",  // unknown names here: NXDOMAIN
                                     "--pid-file="};
    // As root dnsmasq would switch to "nobody"; stay who we are.
    if (geteuid() == 0) args.push_back("--user=root");
    args.insert(args.end(), records.begin(), records.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, kDnsmasq, nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~Dnsmasq() { Stop(); }

  // Waits until dnsmasq holds its port (binding it ourselves then fails) and accepts TCP, which
  // the source asks over.
  bool WaitReady() {
    for (int i = 0; i < 200 && pid_ > 0; ++i) {
      if (!BindUdp(port_) && AcceptsTcp(port_)) return true;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = -1;
};

const std::vector<std::string> kRecords = {
    "--host-record=peers.test,10.0.0.1",
    "--host-record=peers.test,10.0.0.2",
    "--host-record=node1.peers.test,10.0.0.1,fd00::1",
    "--host-record=node2.peers.test,10.0.0.2",
    "--srv-host=_rail._tcp.peers.test,node1.peers.test,9841",
    "--srv-host=_rail._tcp.peers.test,node2.peers.test,19841",
};

class DnsSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kDnsmasq, X_OK) != 0) {
      GTEST_SKIP() << kDnsmasq << " not installed (Debian: dnsmasq-base); needed for a real "
                   << "DNS server";
    }
    port_ = FreeUdpPort();
    Start(kRecords);
  }
  static std::uint16_t FreeUdpPort() {
    const base::UniqueFd probe = BindUdp(0);  // closed again before dnsmasq binds the port
    return probe ? PortOf(probe) : 0;
  }
  // A port found free can be taken before dnsmasq binds it, or between a stop and a restart
  // (the c-ares queries of the tests that run beside this one use random source ports): then
  // dnsmasq exits with "Address already in use" and the server moves to another port.
  void Start(const std::vector<std::string>& records) {
    for (int attempt = 1; attempt <= 5; ++attempt) {
      server_ = std::make_unique<Dnsmasq>(port_, records);
      if (server_->WaitReady()) return;
      server_->Stop();
      port_ = FreeUdpPort();
    }
    FAIL() << "dnsmasq did not start on 127.0.0.1 (5 ports tried)";
  }
  DnsConfig Config(std::vector<std::string> names, DnsRecordType type) const {
    DnsConfig config;
    config.names = std::move(names);
    config.type = type;
    config.server = "127.0.0.1:" + std::to_string(port_);
    config.timeout = milliseconds(300);
    return config;
  }
  FetchResult Fetch(std::vector<std::string> names, DnsRecordType type) const {
    return MakeDnsSource(Config(std::move(names), type))->Fetch(base::SystemClock());
  }

  std::uint16_t port_ = 0;
  std::unique_ptr<Dnsmasq> server_;
};

TEST_F(DnsSourceTest, ARecordsWithTheConfiguredPort) {
  const auto result = Fetch({"peers.test"}, DnsRecordType::kA);
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"10.0.0.1:9841", "10.0.0.2:9841"}));
}

TEST_F(DnsSourceTest, AaaaRecordsInBrackets) {
  auto config = Config({"node1.peers.test"}, DnsRecordType::kAaaa);
  config.port = 19841;
  const auto result = MakeDnsSource(config)->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"[fd00::1]:19841"}));
}

TEST_F(DnsSourceTest, SrvRecordsGiveTargetNameAndPort) {
  const auto result = Fetch({"_rail._tcp.peers.test"}, DnsRecordType::kSrv);
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result),
            (std::vector<std::string>{"node1.peers.test:9841", "node2.peers.test:19841"}));
}

TEST_F(DnsSourceTest, SeveralNamesMerge) {
  const auto result = Fetch({"node1.peers.test", "peers.test"}, DnsRecordType::kA);
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"10.0.0.1:9841", "10.0.0.2:9841"}));
}

TEST_F(DnsSourceTest, NxdomainAndNoDataAreEmptyNotErrors) {
  auto result = Fetch({"absent.peers.test"}, DnsRecordType::kA);
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_TRUE(result.targets->empty());
  result = Fetch({"node2.peers.test"}, DnsRecordType::kAaaa);  // an A record only
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_TRUE(result.targets->empty());
}

// The search domains (here from the environment, as from resolv.conf) go with the system's
// servers; asked of dnsmasq, "peers.test.elsewhere.org" would be refused.
TEST_F(DnsSourceTest, AServerOfItsOwnIgnoresTheSearchDomains) {
  setenv("LOCALDOMAIN", "elsewhere.org", 1);
  setenv("RES_OPTIONS", "ndots:5", 1);
  const auto result = Fetch({"peers.test"}, DnsRecordType::kA);
  unsetenv("LOCALDOMAIN");
  unsetenv("RES_OPTIONS");
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(result.targets->size(), 2u);
}

TEST_F(DnsSourceTest, RefusedFailsTheRefresh) {
  // Outside --local and with no upstream servers, dnsmasq answers REFUSED (c-ares, having no
  // other server to ask, reports it as "Could not contact DNS servers").
  const auto result = Fetch({"peer.example.org"}, DnsRecordType::kA);
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("peer.example.org: "));
  EXPECT_THAT(result.error, Not(HasSubstr("timed out")));
}

TEST_F(DnsSourceTest, ChangedRecordsAfterARestart) {
  ASSERT_EQ(Addresses(Fetch({"peers.test"}, DnsRecordType::kA)),
            (std::vector<std::string>{"10.0.0.1:9841", "10.0.0.2:9841"}));
  server_->Stop();
  Start({"--host-record=peers.test,10.0.0.3"});
  const auto result = Fetch({"peers.test"}, DnsRecordType::kA);
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"10.0.0.3:9841"}));
}

TEST_F(DnsSourceTest, ServerGoneFailsTheRefreshAndDiscoveryKeepsTheLastGoodList) {
  test::FakeClock clock;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(MakeDnsSource(Config({"peers.test"}, DnsRecordType::kA)));
  Discovery discovery(std::move(sources), clock);
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(discovery.Targets().size(), 2u);

  server_->Stop();
  clock.Advance(std::chrono::seconds(30));
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(discovery.Targets().size(), 2u);
  const auto status = discovery.Status()[0];
  EXPECT_EQ(status.name, "dns:peers.test");
  EXPECT_FALSE(status.healthy);
  EXPECT_EQ(status.failures, 1u);
  EXPECT_THAT(status.last_error, HasSubstr("peers.test: "));
}

// A server that takes the connection and the query and never answers: the refresh fails within
// the timeout (c-ares gives a TCP query up after its first try's share of it).
TEST_F(DnsSourceTest, SilentServerTimesOut) {
  const base::UniqueFd silent = SilentTcpServer();
  ASSERT_GE(silent.get(), 0);
  auto config = Config({"peers.test"}, DnsRecordType::kA);
  config.server = "127.0.0.1:" + std::to_string(PortOf(silent));
  const auto started = std::chrono::steady_clock::now();
  const auto result = MakeDnsSource(config)->Fetch(base::SystemClock());
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("peers.test: "));
  EXPECT_LT(took, milliseconds(1000));
}

// The agent stops while a lookup waits for a server that never answers: the fetch ends once the
// flag is set, not at its hour-long timeout.
TEST_F(DnsSourceTest, AStopAbandonsALookupThatWouldWaitItsWholeTimeout) {
  const base::UniqueFd silent = SilentTcpServer();  // TCP: the source asks over TCP
  ASSERT_GE(silent.get(), 0);
  auto config = Config({"peers.test"}, DnsRecordType::kA);
  config.server = "127.0.0.1:" + std::to_string(PortOf(silent));
  config.timeout = std::chrono::hours(1);
  std::atomic<bool> abandon{false};
  auto fetch = std::async(std::launch::async, [&] {
    return MakeDnsSource(config)->Fetch(base::SystemClock(), abandon);
  });
  if (fetch.wait_for(milliseconds(200)) == std::future_status::ready) {
    FAIL() << "the lookup ended before the stop: " << fetch.get().error;
  }
  abandon = true;
  ASSERT_EQ(fetch.wait_for(std::chrono::seconds(30)), std::future_status::ready);  // a bound
  EXPECT_FALSE(fetch.get().targets);
}

// A fleet of 10,000 hosts in 127.0.0.0/8, as an addn-hosts file: `every.fleet.test` names every
// host, rack<r>.fleet.test the 1,000 of rack r (one name per rack, the pattern that scales).
std::string FleetHostsFile() {
  const auto path = std::filesystem::path(::testing::TempDir()) /
                    ("rail_dns_fleet_" + std::to_string(getpid()) + ".hosts");
  std::ofstream out(path);
  for (int host = 0; host < 10'000; ++host) {
    out << "127." << 1 + host / 62500 << "." << host / 250 % 250 << "." << host % 250 + 1
        << " every.fleet.test rack" << host / 1000 << ".fleet.test\n";
  }
  return path.string();
}

// 10,000 records do not fit one answer even over TCP (65,535 bytes: 4,093 A records of 16 bytes
// for this name of 16 characters): dnsmasq sends the first 4,093 with TC set, and the refresh
// fails, says why, is counted and logged, and publishes none of them. One name per rack, unioned
// (ten answers of 1,000 records, 16 KB each), gives all 10,000. One test, one dnsmasq: it takes
// seconds to load 10,000 addresses of one name (it checks each against those it holds).
TEST_F(DnsSourceTest, TenThousandRecordsFailLoudlyUnderOneNameAndArriveWholeByRack) {
  server_->Stop();
  const std::string hosts = FleetHostsFile();
  Start({"--addn-hosts=" + hosts});
  std::vector<std::string> racks;
  for (int rack = 0; rack < 10; ++rack) {
    racks.push_back("rack" + std::to_string(rack) + ".fleet.test");
  }
  auto config = Config(racks, DnsRecordType::kA);
  config.timeout = std::chrono::seconds(5);  // a bound on a loaded machine, not a timing
  // dnsmasq answers once it has read the file: seconds, more on a loaded machine.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  bool loaded = false;
  while (!loaded && std::chrono::steady_clock::now() < give_up) {
    loaded = MakeDnsSource(config)->Fetch(base::SystemClock()).targets.has_value();
  }
  ASSERT_TRUE(loaded) << "dnsmasq did not load " << hosts << " within 90 s";

  const auto sharded = MakeDnsSource(config)->Fetch(base::SystemClock());
  ASSERT_TRUE(sharded.targets) << sharded.error;
  EXPECT_EQ(sharded.targets->size(), 10'000u);
  const auto addresses = Addresses(sharded);
  EXPECT_NE(std::find(addresses.begin(), addresses.end(), "127.1.0.1:9841"), addresses.end());
  EXPECT_NE(std::find(addresses.begin(), addresses.end(), "127.1.39.250:9841"), addresses.end());

  test::FakeClock clock;
  std::vector<std::unique_ptr<Source>> sources;
  config.names = {"rack3.fleet.test"};
  sources.push_back(MakeDnsSource(config));
  config.names = {"every.fleet.test"};
  sources.push_back(MakeDnsSource(config));
  Discovery discovery(std::move(sources), clock);
  test::CapturedLog log;
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(discovery.Targets().size(), 1'000u);  // rack3's, none of the 4,093
  const auto status = discovery.Status();
  EXPECT_TRUE(status[0].healthy);
  EXPECT_FALSE(status[1].healthy);
  EXPECT_EQ(status[1].failures, 1u);
  EXPECT_EQ(status[1].targets, 0u);
  const std::string& error = status[1].last_error;
  EXPECT_THAT(error, HasSubstr("every.fleet.test: the answer is truncated: 4093 A records"));
  EXPECT_THAT(error, HasSubstr("at most 65535 bytes even over TCP (4093 A records of 16"));
  EXPECT_THAT(error, HasSubstr("fleet.discovery.dns.names"));
  EXPECT_THAT(log.Take(), HasSubstr("dns:every.fleet.test: refresh failed, keeping its last 0 "
                                    "targets: every.fleet.test: the answer is truncated"));
  std::filesystem::remove(hosts);
}

TEST(DnsSource, NamesItself) {
  DnsConfig config;
  config.names = {"a.example", "b.example"};
  config.refresh_interval = std::chrono::seconds(7);
  const auto source = MakeDnsSource(config);
  EXPECT_EQ(source->Name(), "dns:a.example,b.example");
  EXPECT_EQ(source->RefreshInterval(), std::chrono::seconds(7));
}

TEST(DnsSource, ABadServerFailsTheRefresh) {
  DnsConfig config;
  config.names = {"peers.test"};
  config.server = "not-an-address:53";
  const auto result = MakeDnsSource(config)->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("server not-an-address:53"));
}

}  // namespace
}  // namespace rail::fleet
