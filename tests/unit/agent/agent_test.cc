// The Agent as the CLI builds it: on a fixture tree, with a responder, fleet discovery and probes,
// stopped while clients scrape it (the crash of issue 21), stopped before it starts, reloaded.
// The sanitizer builds run these too.
#include "rail/agent/agent.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "rail/base/unique_fd.h"

namespace rail::agent {
namespace {

namespace fs = std::filesystem;

// One HTTP/1.0 GET on loopback; the status code, or 0 when the connection failed.
int Get(int port, const std::string& path) {
  base::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Connecting again and again to a port nobody listens on any more, a client can meet itself
  // (TCP simultaneous open): it then waits for its own answer, so every wait is bounded.
  const timeval wait{5, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return 0;
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) return 0;
  std::string response;
  char buffer[4096];
  for (ssize_t got; (got = ::recv(fd.get(), buffer, sizeof(buffer), 0)) > 0;) {
    response.append(buffer, static_cast<std::size_t>(got));
  }
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

// A port nothing listens on now (the responder takes no port 0).
int FreePort() {
  base::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  return ntohs(address.sin_port);
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("rail-agent-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    Write("secret", "agent-test-secret\n");
    ::chmod((dir / "secret").c_str(), 0600);
    Write("targets.json", R"([{"targets": ["127.0.0.1:1", "127.0.0.1:2"]}])");
    options.sysfs_root = std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys";
    options.procfs_root = std::string(RAIL_FIXTURES) + "/spark-dual-rail/proc";
    options.web.listen_addresses = {"127.0.0.1:0"};
    options.config_file = (dir / "agent.yaml").string();
    options.collectors = {"infiniband", "netdev", "rails",    "probe",
                          "responder",  "fleet",  "exporter", "health"};
    options.seed = 5;
  }
  void TearDown() override { fs::remove_all(dir); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  }
  // A responder, the fleet from a file_sd file, and probes of its planned peers (which do not
  // listen: every probe fails fast, as a probe of a dead peer does).
  std::string FullConfig(const std::string& probes = "tcp_rtt") const {
    return "rails:\n  - {name: rail0, device: rocep1s0f0, ipv4: 127.0.0.1}\n"
           "  - {name: rail1, device: rocep1s0f1, ipv4: 127.0.0.1}\n"
           "responder: {listen_address: '127.0.0.1:" +
           std::to_string(responder_port) + "', secret_file: '" + (dir / "secret").string() +
           "'}\n"
           "fleet:\n  self: '127.0.0.1:1'\n  peers_per_rail: 1\n"
           "  discovery: {file_sd: [{files: ['" +
           (dir / "targets.json").string() +
           "'], refresh_interval: 1s}]}\n"
           "probes:\n  - {kind: " +
           probes + ", interval: 1500ms, duration: 200ms, timeout: 1s}\n";
  }

  fs::path dir;
  AgentOptions options;
  const int responder_port = FreePort();
};

TEST_F(AgentTest, StopsWhileSixClientsScrapeIt) {
  Write("agent.yaml", FullConfig());
  for (int cycle = 0; cycle < 5; ++cycle) {
    auto agent = std::make_unique<Agent>(options);
    ASSERT_TRUE(agent->Serving());
    const int port = agent->ListeningPorts().at(0);
    EXPECT_NE(agent->ResponderPort(), 0);
    std::atomic<bool> done{false}, stopping{false};
    std::atomic<int> ok{0}, other{0}, last_other{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 6; ++i) {
      clients.emplace_back([&, i] {
        while (!done) {
          const int status = Get(port, i % 2 == 0 ? "/metrics" : "/");
          if (status == 200) ++ok;
          // 0: the listener is gone; 503: the server says it is stopping. Nothing else, ever.
          if (status != 200 && status != 0 && !(status == 503 && stopping)) {
            ++other;
            last_other = status;
          }
        }
      });
    }
    while (ok < 12) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stopping = true;
    agent.reset();  // stops while the clients keep scraping
    done = true;
    for (auto& client : clients) client.join();
    EXPECT_EQ(other, 0) << "cycle " << cycle << ", status " << last_other;
  }
}

TEST_F(AgentTest, AStopAskedForBeforeTheStartNeverServes) {
  Write("agent.yaml", FullConfig());
  std::atomic<bool> stop{true};
  options.stop_requested = &stop;
  Agent agent(options);
  EXPECT_FALSE(agent.Serving());
  EXPECT_TRUE(agent.ListeningPorts().empty());
  EXPECT_EQ(agent.ResponderPort(), 0);
}

TEST_F(AgentTest, AReloadAppliesAGoodFileAndRefusesABadOneAsAWhole) {
  Write("agent.yaml", FullConfig());
  Agent agent(options);
  const auto started = agent.LastReload();
  EXPECT_TRUE(started.last_successful);
  const auto listening = agent.ResponderPort();

  Write("agent.yaml", FullConfig("tcp_rtt, message_sizes: [8, 64]"));
  EXPECT_EQ(agent.Reload("test"), std::nullopt);
  EXPECT_TRUE(agent.LastReload().last_successful);
  EXPECT_GE(agent.LastReload().last_success, started.last_success);
  EXPECT_EQ(agent.ResponderPort(), listening) << "the responder's socket was not kept";
  const auto applied = agent.LastReload().last_success;

  Write("agent.yaml", "probes: [this is not a probe\n");
  const auto refused = agent.Reload("test");
  ASSERT_TRUE(refused);
  EXPECT_FALSE(agent.LastReload().last_successful);
  EXPECT_EQ(agent.LastReload().last_success, applied);

  Write("agent.yaml", FullConfig() + "health: {multirail_max_rail_share: 0.9}\n");
  const auto restart_only = agent.Reload("test");
  ASSERT_TRUE(restart_only);
  EXPECT_NE(restart_only->find("health"), std::string::npos) << *restart_only;

  Write("agent.yaml", FullConfig());
  EXPECT_EQ(agent.Reload("test"), std::nullopt);
  EXPECT_TRUE(agent.LastReload().last_successful);
  EXPECT_TRUE(agent.Serving());
}

}  // namespace
}  // namespace rail::agent
