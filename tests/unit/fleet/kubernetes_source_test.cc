// The Kubernetes source against recorded API server answers (tests/fixtures/kubernetes), served
// over real HTTPS by tests/support/https_fixture_server.py with a CA made for the test: the
// source's TLS verification, token, query and pagination all meet a server that checks them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rail/fleet/discovery.h"
#include "support/fake_clock.h"

namespace rail::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

const std::string kFixtures = RAIL_FIXTURES "/kubernetes";
const std::string kServerScript = RAIL_FIXTURES "/../support/https_fixture_server.py";
const std::string kToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.rail-exporter-token.c2ln";
const std::string kNextPageToken =
    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgyMTMsInN0YXJ0IjoicmFpbC1leHBvcnRlci14N2s5cVx1MDAwMCJ9";

bool HaveCommand(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path) << content;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::vector<std::string> Addresses(const std::vector<Target>& targets) {
  std::vector<std::string> addresses;
  for (const Target& target : targets) addresses.push_back(target.address);
  std::sort(addresses.begin(), addresses.end());
  return addresses;
}

// The fixture server as a child process: started with its stdin and stdout on pipes, it prints
// its port and ends when its stdin closes; the destructor closes it and reaps the child.
class FixtureServer {
 public:
  FixtureServer(const FixtureServer&) = delete;
  FixtureServer& operator=(const FixtureServer&) = delete;
  FixtureServer() = default;
  ~FixtureServer() {
    if (stdin_fd_ >= 0) ::close(stdin_fd_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // The port, or 0 when the server did not come up within a few seconds.
  int Start(const std::vector<std::string>& arguments) {
    int to_child[2];
    int from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return 0;
    std::vector<char*> argv;
    for (const std::string& argument : arguments)
      argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      ::close(to_child[1]);
      ::close(from_child[0]);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_fd_ = to_child[1];
    const int out = from_child[0];
    std::string line;
    pollfd readable{out, POLLIN, 0};
    while (line.find('\n') == std::string::npos && ::poll(&readable, 1, 10000) == 1) {
      char buffer[64];
      const ssize_t n = ::read(out, buffer, sizeof(buffer));
      if (n <= 0) break;
      line.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(out);
    return std::atoi(line.c_str());
  }

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
};

class KubernetesSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveCommand("python3")) GTEST_SKIP() << "python3 is not installed: no fixture server";
    if (!HaveCommand("openssl")) GTEST_SKIP() << "the openssl CLI is not installed: no test CA";
    dir_ = std::filesystem::path(::testing::TempDir()) / ("rail_k8s_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(MakeCertificates()) << "openssl could not make the test CA; see stderr";
    WriteFile(dir_ / "token", kToken + "\n");           // the agent's
    WriteFile(dir_ / "expected-token", kToken + "\n");  // the server's
    WriteFile(dir_ / "namespace", "monitoring");
    port_ =
        server_.Start({"python3", kServerScript, "--cert", (dir_ / "server.crt").string(), "--key",
                       (dir_ / "server.key").string(), "--routes", kFixtures + "/routes.json",
                       "--fixtures", kFixtures, "--token-file", (dir_ / "expected-token").string(),
                       "--log", (dir_ / "requests.log").string()});
    ASSERT_GT(port_, 0) << "the fixture server did not start";
  }

  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A CA, a server certificate it signs for 127.0.0.1 and localhost, and a second CA that signed
  // nothing here.
  bool MakeCertificates() {
    const std::string d = dir_.string();
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    WriteFile(dir_ / "san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    const std::string script =
        "cd '" + d + "' && " + "openssl req -x509" + key +
        " -keyout ca.key -out ca.crt -days 2 -subj /CN=rail-test-ca" + " && openssl req -x509" +
        key + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=rail-other-ca" +
        " && openssl req" + key + " -keyout server.key -out server.csr -subj /CN=localhost" +
        " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial" +
        " -out server.crt -days 2 -extfile san.ext";
    return std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0;
  }

  // The timeout bounds a whole list, every page and every restart. The 10,000-endpoint lists get
  // one far above what they need (under a second here): at -O0 under ASan on CI's two cores, a
  // list read twice (eight pages of 2,000 endpoints) once took more than 10 s.
  KubernetesConfig TenThousandConfig(const std::string& service) {
    KubernetesConfig config = Config(service);
    config.timeout = std::chrono::seconds(120);
    return config;
  }

  KubernetesConfig Config(const std::string& service, const std::string& ns = "monitoring") {
    KubernetesConfig config;
    config.service = service;
    config.namespace_ = ns;
    config.api_server = "https://127.0.0.1:" + std::to_string(port_);
    config.token_file = (dir_ / "token").string();
    config.ca_file = (dir_ / "ca.crt").string();
    config.namespace_file = (dir_ / "namespace").string();
    config.timeout = std::chrono::seconds(10);
    return config;
  }

  std::vector<std::string> Requests() const {
    std::vector<std::string> lines;
    std::istringstream log(ReadFile(dir_ / "requests.log"));
    for (std::string line; std::getline(log, line);) lines.push_back(line);
    return lines;
  }

  std::filesystem::path dir_;
  FixtureServer server_;
  int port_ = 0;
};

TEST_F(KubernetesSourceTest, FollowsContinueAcrossPagesWithNodeAndPodLabels) {
  const auto source = MakeKubernetesSource(Config("rail-exporter"));
  EXPECT_EQ(source->Name(), "kubernetes:monitoring/rail-exporter");
  const FetchResult result = source->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_THAT(Addresses(*result.targets),
              ElementsAre("10.244.1.17:9841", "10.244.2.9:9841", "10.244.3.21:9841"));
  for (const Target& target : *result.targets) {
    if (target.address != "10.244.3.21:9841") continue;  // the one on the second page
    EXPECT_THAT(target.labels, UnorderedElementsAre(Pair("node", "gpu-node-03"),
                                                    Pair("pod", "rail-exporter-p9wxd")));
  }
  const auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_THAT(requests[0], HasSubstr("/apis/discovery.k8s.io/v1/namespaces/monitoring/"
                                     "endpointslices?labelSelector=kubernetes.io%2Fservice-name%"
                                     "3Drail-exporter&limit=100"));
  EXPECT_THAT(requests[0], ::testing::Not(HasSubstr("continue=")));
  EXPECT_THAT(requests[1], HasSubstr("&continue=" + kNextPageToken));
}

TEST_F(KubernetesSourceTest, LeavesOutEndpointsThatAreNotReady) {
  const FetchResult result =
      MakeKubernetesSource(Config("rail-exporter-rollout"))->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_THAT(Addresses(*result.targets), ElementsAre("10.244.1.30:9841"));
}

TEST_F(KubernetesSourceTest, BracketsIpv6Addresses) {
  const FetchResult result =
      MakeKubernetesSource(Config("rail-exporter-v6"))->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_THAT(Addresses(*result.targets),
              ElementsAre("[fd00:10:244:1::17]:9841", "[fd00:10:244:2::9]:9841"));
}

TEST_F(KubernetesSourceTest, DualStackPodIsOneTargetByItsIpv4Address) {
  const FetchResult result =
      MakeKubernetesSource(Config("rail-exporter-dual"))->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_THAT(Addresses(*result.targets), ElementsAre("10.244.1.40:9841", "10.244.2.41:9841"));
}

TEST_F(KubernetesSourceTest, ChoosesThePortByName) {
  KubernetesConfig config = Config("rail-exporter-rollout");
  config.port_name = "metrics";
  FetchResult result = MakeKubernetesSource(config)->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_THAT(Addresses(*result.targets), ElementsAre("10.244.1.30:9840"));

  config.port_name = "probe";
  result = MakeKubernetesSource(config)->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("no port named \"probe\""));
  EXPECT_THAT(result.error, HasSubstr("responder=9841"));
}

TEST_F(KubernetesSourceTest, ForbiddenFailsWithTheStatusAndTheApiMessage) {
  const FetchResult result =
      MakeKubernetesSource(Config("rail-exporter", "kube-system"))->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("HTTP 403"));
  EXPECT_THAT(result.error, HasSubstr("cannot list resource \"endpointslices\""));
  EXPECT_EQ(result.error.find('\n'), std::string::npos);
}

TEST_F(KubernetesSourceTest, AnswerThatIsNotJsonFailsTheRefresh) {
  const FetchResult result =
      MakeKubernetesSource(Config("rail-exporter-broken"))->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("not JSON"));
}

TEST_F(KubernetesSourceTest, ServerSignedByAnotherCaFailsTheRefresh) {
  KubernetesConfig config = Config("rail-exporter");
  config.ca_file = (dir_ / "other-ca.crt").string();
  const FetchResult result = MakeKubernetesSource(config)->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("certificate"));
  EXPECT_TRUE(Requests().empty()) << "no request may pass an unverified connection";
}

TEST_F(KubernetesSourceTest, RereadsTheTokenOnEveryRefresh) {
  WriteFile(dir_ / "token", "expired-token\n");
  const auto source = MakeKubernetesSource(Config("rail-exporter-v6"));
  FetchResult result = source->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("HTTP 401"));

  WriteFile(dir_ / "token", kToken + "\n");  // kubelet rotated it
  result = source->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(result.targets->size(), 2u);
}

TEST_F(KubernetesSourceTest, NamespaceComesFromTheServiceAccountFileWhenNotConfigured) {
  const auto source = MakeKubernetesSource(Config("rail-exporter-v6", ""));
  EXPECT_EQ(source->Name(), "kubernetes:monitoring/rail-exporter-v6");
  const FetchResult result = source->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(result.targets->size(), 2u);
}

TEST_F(KubernetesSourceTest, AnApiServerThatNeverAnswersFailsWithinTheTimeout) {
  // A listening socket nobody accepts from: the kernel completes the TCP handshake, the TLS one
  // never comes.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(::listen(silent, 4), 0);
  ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
  KubernetesConfig config = Config("rail-exporter");
  config.api_server = "https://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  config.timeout = std::chrono::milliseconds(300);
  const auto started = std::chrono::steady_clock::now();
  const FetchResult result = MakeKubernetesSource(config)->Fetch(base::SystemClock());
  const auto took = std::chrono::steady_clock::now() - started;
  ::close(silent);
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("timed out after "));
  EXPECT_LT(took, std::chrono::seconds(5));  // a bound, not a timing
}

// The list's deadline is on the clock the discovery hands in: with an hour's timeout on a clock
// that moves an hour at each reading, the fetch fails at once, before it asks the API server.
TEST_F(KubernetesSourceTest, TheTimeoutIsMeasuredOnTheInjectedClock) {
  KubernetesConfig config = Config("rail-exporter");
  config.timeout = std::chrono::hours(1);
  const rail::test::SteppingClock clock(std::chrono::hours(1));
  const FetchResult result = MakeKubernetesSource(config)->Fetch(clock);
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("longer than the timeout"));
  EXPECT_TRUE(Requests().empty());
}

// The stand-in's generated Services (routes.json "generate"): 10,000 endpoints in slices of 20,
// read in 5 pages of 100 slices.
std::size_t ListsStarted(const std::vector<std::string>& requests) {
  return static_cast<std::size_t>(
      std::count_if(requests.begin(), requests.end(),
                    [](const auto& r) { return r.find("continue=") == std::string::npos; }));
}

TEST_F(KubernetesSourceTest, PagesThroughTenThousandEndpoints) {
  const FetchResult result =
      MakeKubernetesSource(TenThousandConfig("rail-exporter-10k"))->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(result.targets->size(), 10'000u);
  EXPECT_EQ(Requests().size(), 5u);
  EXPECT_EQ(ListsStarted(Requests()), 1u);
}

TEST_F(KubernetesSourceTest, AnExpiredContinueTokenStartsTheListAgain) {
  const FetchResult result = MakeKubernetesSource(TenThousandConfig("rail-exporter-10k-expiring"))
                                 ->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(result.targets->size(), 10'000u);
  EXPECT_EQ(Requests().size(), 3u + 5u);  // two pages and the 410, then a whole list
  EXPECT_EQ(ListsStarted(Requests()), 2u);
}

// Page 2 comes from a newer revision, in which the first endpoint was replaced: pages 1 and 2 do
// not add up to one list. The list starts again and gives the new revision, whole.
TEST_F(KubernetesSourceTest, AListThatChangesBetweenPagesStartsAgain) {
  const FetchResult result = MakeKubernetesSource(TenThousandConfig("rail-exporter-10k-changing"))
                                 ->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  const auto addresses = Addresses(*result.targets);
  EXPECT_EQ(addresses.size(), 10'000u);
  EXPECT_FALSE(std::binary_search(addresses.begin(), addresses.end(), "10.1.0.1:9841"));
  EXPECT_TRUE(std::binary_search(addresses.begin(), addresses.end(), "10.1.40.1:9841"));
  EXPECT_EQ(ListsStarted(Requests()), 2u);
}

// The first list is whole; from then on every continue token expires. The refresh fails after
// its bounded restarts, publishes no part of a list, and discovery keeps the complete one.
TEST_F(KubernetesSourceTest, ContinueTokensThatKeepExpiringKeepTheLastCompleteList) {
  test::FakeClock clock;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(MakeKubernetesSource(TenThousandConfig("rail-exporter-10k-expired")));
  Discovery discovery(std::move(sources), clock);
  ASSERT_TRUE(discovery.Refresh());
  ASSERT_EQ(discovery.Targets().size(), 10'000u);
  clock.Advance(std::chrono::minutes(1));
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_EQ(discovery.Targets().size(), 10'000u);
  const SourceStatus status = discovery.Status()[0];
  EXPECT_EQ(status.failures, 1u);
  EXPECT_THAT(status.last_error, HasSubstr("no consistent EndpointSlice list after 4 attempts"));
  EXPECT_THAT(status.last_error, HasSubstr("page 2: the continue token expired (HTTP 410)"));
  EXPECT_EQ(ListsStarted(Requests()), 1u + 4u);
}

TEST_F(KubernetesSourceTest, MissingTokenFailsWithoutAsking) {
  KubernetesConfig config = Config("rail-exporter");
  config.token_file = (dir_ / "no-such-token").string();
  const FetchResult result = MakeKubernetesSource(config)->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("no-such-token"));
  EXPECT_TRUE(Requests().empty());
}

}  // namespace
}  // namespace rail::fleet
