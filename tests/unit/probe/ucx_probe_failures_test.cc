// How the UCX probes fail: a refused or silent control channel, a peer whose UCX side never makes
// progress, a wrong secret, cancellation, bad parameters; and the handler factory's rail lists.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <ostream>
#include <thread>

#include "probe/ucx/handler.h"
#include "probe/ucx/initiator.h"
#include "rail/peer/connection.h"
#include "ucx_probe_fixture.h"

namespace rail::probe {

// Names the kind in gtest's output (found by argument-dependent lookup).
void PrintTo(ProbeKind kind, std::ostream* out) {
  *out << ProbeKindName(kind);
}

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::UcxProbeTest;
using testing::VethRail;

constexpr ProbeKind kUcxKinds[] = {ProbeKind::kUcxThroughput, ProbeKind::kUcxRtt,
                                   ProbeKind::kMultirailCapacity,
                                   ProbeKind::kUcxMultirailThroughput};

std::vector<ProbeRail> RailsFor(ProbeKind kind) {
  if (kind == ProbeKind::kMultirailCapacity || kind == ProbeKind::kUcxMultirailThroughput) {
    return {VethRail(0, 'a'), VethRail(1, 'a')};
  }
  return {VethRail(0, 'a')};
}

// A loopback port: listening (the kernel completes connections, nobody answers) or closed.
std::pair<base::UniqueFd, std::uint16_t> LoopbackPort(bool listening) {
  base::UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  if (listening) {
    EXPECT_EQ(listen(fd.get(), 8), 0);
  } else {
    fd = base::UniqueFd();  // nothing listens there now
  }
  return {std::move(fd), ntohs(address.sin_port)};
}

TEST_F(UcxProbeTest, ARefusedConnectionIsRefused) {
  const auto [closed, port] = LoopbackPort(false);
  for (const ProbeKind kind : kUcxKinds) {
    ProbeParams params = Params(kind, RailsFor(kind));
    params.peer = "127.0.0.1:" + std::to_string(port);
    const ProbeResult result = Run(params);
    EXPECT_FALSE(result.success) << ProbeKindName(kind);
    EXPECT_EQ(result.error_reason, "refused")
        << ProbeKindName(kind) << ": " << result.error_message;
    EXPECT_FALSE(result.error_message.empty());
  }
}

TEST_F(UcxProbeTest, APeerThatDoesNotAnswerTimesOutWithinTheTimeout) {
  const auto [listener, port] = LoopbackPort(true);
  for (const ProbeKind kind : kUcxKinds) {
    ProbeParams params = Params(kind, RailsFor(kind));
    params.peer = "127.0.0.1:" + std::to_string(port);
    params.timeout = 800ms;
    const auto start = Clock::now();
    const ProbeResult result = Run(params);
    const auto elapsed = Clock::now() - start;
    EXPECT_FALSE(result.success);
    EXPECT_EQ(result.error_reason, "timeout")
        << ProbeKindName(kind) << ": " << result.error_message;
    EXPECT_LT(elapsed, params.timeout + 2s) << ProbeKindName(kind);
  }
}

TEST_F(UcxProbeTest, AWrongSecretIsAuth) {
  peer::ReplayCache other_nonces{clock_, 16, std::chrono::minutes(1)};
  context_.connect = peer::MakePeerConnector(std::make_shared<const peer::Secret>("wrong"),
                                             {"initiator-1.0", "1.13.1"}, other_nonces);
  const ProbeResult result = Run(Params(ProbeKind::kUcxThroughput));
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "auth") << result.error_message;
}

TEST_F(UcxProbeTest, AnUnknownRailIsRefusedByThePeer) {
  ProbeRail stranger = VethRail(0, 'a');
  stranger.name = "rail9";
  const ProbeResult result = Run(Params(ProbeKind::kUcxRtt, {stranger}));
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "unknown_kind") << result.error_message;
}

TEST_F(UcxProbeTest, CancellationEndsAProbePromptly) {
  std::atomic<bool> cancel{false};
  context_.cancel = &cancel;
  ProbeParams params = Params(ProbeKind::kUcxThroughput);
  params.duration = 30s;
  params.timeout = 60s;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(500ms);
    cancel = true;
  });
  const auto start = Clock::now();
  const ProbeResult result = Run(params);
  canceller.join();
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "cancelled") << result.error_message;
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST_F(UcxProbeTest, InvalidParametersAreRefusedLocally) {
  ProbeParams params = Params(ProbeKind::kUcxThroughput);
  params.window = 0;
  EXPECT_EQ(Run(params).error_reason, "invalid_argument");
  params = Params(ProbeKind::kUcxRtt);
  params.rails.front().ucx_device.clear();
  EXPECT_EQ(Run(params).error_reason, "invalid_argument");
  params = Params(ProbeKind::kMultirailCapacity, {VethRail(0, 'a'), VethRail(0, 'a')});
  EXPECT_EQ(Run(params).error_reason, "invalid_argument");
  params = Params(ProbeKind::kUcxMultirailThroughput, {});
  EXPECT_EQ(Run(params).error_reason, "invalid_argument");
  params = Params(ProbeKind::kUcxThroughput);
  params.message_sizes_bytes = {kUcxMaxMessageBytes + 1};
  EXPECT_EQ(Run(params).error_reason, "invalid_argument");
}

// The responder's control channel answers, but its UCX side never makes progress: wire-up and
// every operation stall, and only the probe's own deadline ends them.
class StalledHandler final : public peer::ProbeSessionHandler {
 public:
  explicit StalledHandler(std::vector<ProbeRail> rails)
      : inner_(ProbeKind::kUcxThroughput, std::move(rails)) {}
  bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply, std::string* reason,
             std::string* message) override {
    return inner_.Setup(request, reply, reason, message);
  }
  void Serve(const std::atomic<bool>& stop) override {
    while (!stop) std::this_thread::sleep_for(10ms);
  }
  nlohmann::json Report() override { return inner_.Report(); }

 private:
  UcxHandler inner_;
};

class StalledPeerTest : public UcxProbeTest, public ::testing::WithParamInterface<ProbeKind> {
 protected:
  peer::ProbeHandlerFactory Factory() override {
    return [](const std::string&,
              const std::string& rails) -> std::unique_ptr<peer::ProbeSessionHandler> {
      if (rails == "rail0,rail1") {
        return std::make_unique<StalledHandler>(
            std::vector<ProbeRail>{VethRail(0, 'b'), VethRail(1, 'b')});
      }
      return std::make_unique<StalledHandler>(
          std::vector<ProbeRail>{VethRail(rails == "rail1" ? 1 : 0, 'b')});
    };
  }
};

TEST_P(StalledPeerTest, TimesOutWithinTheTimeout) {
  // For ucx_multirail_throughput this is the case where UCX 1.13.1 would abort the process if
  // the timed-out two-lane endpoint were force-closed (openucx/ucx#8175): the side is
  // quarantined instead, and the process must survive to see the result.
  const ProbeKind kind = GetParam();
  ProbeParams params = Params(kind, RailsFor(kind));
  params.timeout = 1500ms;
  const auto start = Clock::now();
  const ProbeResult result = Run(params);
  const auto elapsed = Clock::now() - start;
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "timeout") << result.error_message;
  EXPECT_LT(elapsed, params.timeout + 2s);
}

INSTANTIATE_TEST_SUITE_P(UcxKinds, StalledPeerTest, ::testing::ValuesIn(kUcxKinds),
                         [](const auto& param_info) {
                           return std::string(ProbeKindName(param_info.param));
                         });

TEST(UcxProbeFactory, MakesEveryKind) {
  for (const ProbeKind kind :
       {ProbeKind::kUcxThroughput, ProbeKind::kUcxRtt, ProbeKind::kMultirailCapacity,
        ProbeKind::kUcxMultirailThroughput, ProbeKind::kTcpThroughput, ProbeKind::kTcpRtt}) {
    const std::unique_ptr<Probe> probe = MakeProbe(kind);
    ASSERT_NE(probe, nullptr) << ProbeKindName(kind);
    EXPECT_EQ(probe->kind(), kind);
  }
}

TEST(UcxProbeFactory, RailListsMapOntoLocalRailsForTheMultirailKindOnly) {
  const auto factory = MakeProbeHandlerFactory({VethRail(0, 'b'), VethRail(1, 'b')});
  for (const char* kind :
       {"ucx_throughput", "ucx_rtt", "multirail_capacity", "ucx_multirail_throughput"}) {
    EXPECT_NE(factory(kind, "rail0"), nullptr) << kind;
    EXPECT_NE(factory(kind, "rail1"), nullptr) << kind;
    EXPECT_EQ(factory(kind, "rail2"), nullptr) << kind;
  }
  EXPECT_NE(factory("ucx_multirail_throughput", "rail0,rail1"), nullptr);
  EXPECT_NE(factory("ucx_multirail_throughput", "rail1,rail0"), nullptr);
  EXPECT_EQ(factory("ucx_multirail_throughput", "rail0,rail0"), nullptr);
  EXPECT_EQ(factory("ucx_multirail_throughput", "rail0,rail2"), nullptr);
  EXPECT_EQ(factory("ucx_multirail_throughput", "rail0,"), nullptr);
  for (const char* kind :
       {"ucx_throughput", "ucx_rtt", "multirail_capacity", "tcp_throughput", "tcp_rtt"}) {
    EXPECT_EQ(factory(kind, "rail0,rail1"), nullptr) << kind;
  }
  EXPECT_NE(factory("tcp_rtt", "rail0"), nullptr);
  EXPECT_EQ(factory("no_such_kind", "rail0"), nullptr);
}

TEST(UcxProbeLanes, LanesMapToRailsAndNonRdmaLanesAreFallbacks) {
  for (const char* transport : {"rc_mlx5", "rc_verbs", "dc_mlx5", "ud_verbs", "rc", "gga_mlx5"}) {
    EXPECT_TRUE(detail::IsRdmaTransport(transport)) << transport;
  }
  for (const char* transport : {"tcp", "sysv", "posix", "cma", "self", "rcx", "cuda_ipc", ""}) {
    EXPECT_FALSE(detail::IsRdmaTransport(transport)) << transport;
  }
  ProbeRail roce;
  roce.name = "rail0";
  roce.ucx_device = "mlx5_0:1";
  roce.netdev = "enp1s0f0np0";
  roce.expect_rdma = true;
  ProbeRail lab = VethRail(1, 'a');
  const std::vector<ProbeRail> rails = {roce, lab};
  // A tcp lane on the RoCE port's netdev is that rail, falling back.
  const std::vector<TransportLane> lanes =
      detail::MapLanes({{"rc_mlx5", "mlx5_0:1"}, {"tcp", "enp1s0f0np0"}, {"tcp", "ux1a"}}, rails);
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].rail, "rail0");
  EXPECT_EQ(lanes[1].rail, "rail0");
  EXPECT_EQ(lanes[2].rail, "rail1");
  ProbeResult result;
  detail::AddFallbackRails(lanes, rails, &result);
  EXPECT_EQ(result.fallback_rails, std::vector<std::string>{"rail0"});
  // RDMA only: no fallback. A lane of no rail that is not RDMA counts against every RDMA rail.
  result = ProbeResult{};
  detail::AddFallbackRails(detail::MapLanes({{"rc_mlx5", "mlx5_0:1"}}, rails), rails, &result);
  EXPECT_TRUE(result.fallback_rails.empty());
  detail::AddFallbackRails(detail::MapLanes({{"sysv", "memory"}}, rails), rails, &result);
  EXPECT_EQ(result.fallback_rails, std::vector<std::string>{"rail0"});
}

TEST(UcxProbeSpec, SeveralRailsGetAsManyRndvAndEagerRails) {
  const UcxContextSpec one = detail::UcxSpecFor({VethRail(0, 'a')}, "");
  EXPECT_EQ(one.net_devices, std::vector<std::string>{"ux0a"});
  EXPECT_EQ(one.transports, kUcxDefaultTransports);
  EXPECT_EQ(one.max_rndv_rails, 1u);
  EXPECT_TRUE(one.extra_config.empty());
  const UcxContextSpec two = detail::UcxSpecFor({VethRail(0, 'a'), VethRail(1, 'a')}, "tcp");
  EXPECT_EQ(two.net_devices, (std::vector<std::string>{"ux0a", "ux1a"}));
  EXPECT_EQ(two.transports, "tcp");
  EXPECT_EQ(two.max_rndv_rails, 2u);
  EXPECT_EQ(two.extra_config.at("MAX_EAGER_RAILS"), "2");
}

}  // namespace
}  // namespace rail::probe
