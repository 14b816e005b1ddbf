#include "rail/probe/ucx_lanes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rail::probe {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string ReadFixture(const std::string& name) {
  std::ifstream file(std::string(RAIL_FIXTURES) + "/ucx/" + name);
  EXPECT_TRUE(file) << name;
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

UcxEndpointInfo Parse(std::string_view text, const EpInfoParseOptions& options = {}) {
  std::string error;
  auto info = ParseEpPrintInfo(text, &error, options);
  EXPECT_TRUE(info) << error;
  return info.value_or(UcxEndpointInfo{});
}

// Captured from UCX 1.13.1 (UCX_TLS=tcp): an endpoint of a worker to itself, on a host with lo
// and eth0.
TEST(ParseEpPrintInfo, RealTcpOutput) {
  const UcxEndpointInfo info = Parse(ReadFixture("ep_print_info_tcp.txt"));
  EXPECT_EQ(info.peer, "<no debug data>");
  ASSERT_EQ(info.lanes.size(), 2u);

  const UcxLane& first = info.lanes[0];
  EXPECT_EQ(first.index, 0);
  EXPECT_FALSE(first.connection_manager);
  EXPECT_EQ(first.resource_index, 0);
  EXPECT_EQ(first.transport, "tcp");
  EXPECT_EQ(first.device, "lo");
  EXPECT_EQ(first.path_index, 0u);
  EXPECT_EQ(first.memory_domain, 0);
  EXPECT_EQ(first.remote_component, "tcp");
  EXPECT_EQ(first.roles, (std::vector<std::string>{"rma_bw#0", "am", "am_bw#0"}));
  EXPECT_TRUE(first.HasRole("am"));
  EXPECT_TRUE(first.HasRole("rma_bw"));
  EXPECT_FALSE(first.HasRole("wireup"));

  EXPECT_EQ(info.lanes[1].device, "eth0");
  EXPECT_TRUE(info.lanes[1].HasRole("wireup"));
  EXPECT_EQ(TransportDevices(info), (Pairs{{"tcp", "lo"}, {"tcp", "eth0"}}));
}

// Captured from UCX 1.13.1 in the lab (scripts/lab): UCX_TLS=tcp UCX_NET_DEVICES=ra0,ra1.
TEST(ParseEpPrintInfo, RealTwoRailLabOutput) {
  const UcxEndpointInfo info = Parse(ReadFixture("ep_print_info_tcp_two_rails.txt"));
  EXPECT_EQ(TransportDevices(info), (Pairs{{"tcp", "ra1"}, {"tcp", "ra0"}}));
  EXPECT_TRUE(info.lanes[0].HasRole("rma_bw"));
  EXPECT_TRUE(info.lanes[1].HasRole("rma_bw"));
}

// Not captured (no RDMA hardware here): written from UCX 1.13's format string
// "lane[%d]: %2d:%s/%s.%u md[%d] %-*c-> " and its role suffixes, as on a dual-port ConnectX.
constexpr std::string_view kRdmaSample = R"(#
# UCP endpoint
#
#               peer: node-b:53412
#                 lane[0]:  3:rc_mlx5/mlx5_0:1.0 md[2]      -> md[2]/ib/sysdev[0] rma_bw#0 am am_bw#0
#                 lane[1]:  9:rc_mlx5/mlx5_1:1.0 md[3]      -> md[3]/ib/sysdev[1] rma_bw#1 am_bw#1
#                 lane[2]:  5:ud_mlx5/mlx5_0:1.0 md[2]      -> md[2]/ib/sysdev[0] wireup{ud_mlx5/mlx5_0:1}
#                 lane[3]:  0:cma/memory.0 md[0]              -> md[0]/cma/sysdev[255] rma_bw#2
#                 lane[4]: cm rdmacm
#
#                tag_send: 0..<egr/short>..2007..<egr/bcopy>..8192..<rndv>..(inf)
#
#                  rma_bw: mds [2] [3] rndv_rkey_size 19
#
)";

TEST(ParseEpPrintInfo, RdmaLanes) {
  const UcxEndpointInfo info = Parse(kRdmaSample);
  EXPECT_EQ(info.peer, "node-b:53412");
  ASSERT_EQ(info.lanes.size(), 5u);
  EXPECT_EQ(info.lanes[0].transport, "rc_mlx5");
  EXPECT_EQ(info.lanes[0].device, "mlx5_0:1");
  EXPECT_EQ(info.lanes[0].resource_index, 3);
  EXPECT_EQ(info.lanes[0].memory_domain, 2);
  EXPECT_EQ(info.lanes[0].remote_component, "ib");
  EXPECT_EQ(info.lanes[1].device, "mlx5_1:1");
  EXPECT_EQ(info.lanes[2].transport, "ud_mlx5");
  EXPECT_EQ(info.lanes[2].roles, std::vector<std::string>{"wireup{ud_mlx5/mlx5_0:1}"});
  EXPECT_TRUE(info.lanes[2].HasRole("wireup"));
  EXPECT_EQ(info.lanes[3].transport, "cma");
  EXPECT_EQ(info.lanes[3].device, "memory");
  EXPECT_TRUE(info.lanes[4].connection_manager);
  EXPECT_EQ(info.lanes[4].transport, "rdmacm");
  EXPECT_TRUE(info.lanes[4].device.empty());
  EXPECT_EQ(TransportDevices(info), (Pairs{{"rc_mlx5", "mlx5_0:1"},
                                           {"rc_mlx5", "mlx5_1:1"},
                                           {"ud_mlx5", "mlx5_0:1"},
                                           {"cma", "memory"}}));
}

TEST(ParseEpPrintInfo, VlanDeviceKeepsItsDotBeforeThePathIndex) {
  const UcxEndpointInfo info =
      Parse("#  lane[0]:  1:tcp/eth0.100.0 md[0]  -> md[0]/tcp/sysdev[255] am\n");
  EXPECT_EQ(info.lanes[0].device, "eth0.100");
  EXPECT_EQ(info.lanes[0].path_index, 0u);
}

TEST(ParseEpPrintInfo, OlderFormatWithoutPathIndexAndWithProxy) {
  EpInfoParseOptions old_format;
  old_format.device_has_path_index = false;
  const UcxEndpointInfo info = Parse(
      "#   lane[0]:  3:rc_mlx5/mlx5_0:1 md[2] <proxy>    -> md[2]/ib rma_bw#0 am\n"
      "#   lane[1]:  1:tcp/eth0.100 md[0]                -> addr[1].md[0]/tcp   am_bw#1\n",
      old_format);
  ASSERT_EQ(info.lanes.size(), 2u);
  EXPECT_EQ(info.lanes[0].device, "mlx5_0:1");
  EXPECT_FALSE(info.lanes[0].path_index);
  EXPECT_EQ(info.lanes[0].remote_component, "ib");
  EXPECT_EQ(info.lanes[0].roles, (std::vector<std::string>{"rma_bw#0", "am"}));
  EXPECT_EQ(info.lanes[1].device, "eth0.100");
  EXPECT_EQ(info.lanes[1].remote_component, "tcp");
}

TEST(ParseEpPrintInfo, BrokenLaneLineIsAnErrorNamingTheLine) {
  std::string error;
  EXPECT_FALSE(ParseEpPrintInfo("#\n#   lane[0]:  0:tcp md[0] -> md[0]/tcp am\n", &error));
  EXPECT_EQ(error,
            "line 2: lane line not understood (expected transport/device): "
            "#   lane[0]:  0:tcp md[0] -> md[0]/tcp am");
  EXPECT_FALSE(ParseEpPrintInfo("# lane[0]:  0:tcp/ra0.0 md[0]\n", &error));
  EXPECT_EQ(error,
            "line 1: lane line not understood (expected '->' and the remote side): "
            "# lane[0]:  0:tcp/ra0.0 md[0]");
  EXPECT_FALSE(ParseEpPrintInfo("# lane[x]: 0:tcp/ra0.0 md[0] -> md[0]/tcp\n", &error));
  EXPECT_NE(error.find("expected lane[N]:"), std::string::npos);
}

TEST(ParseEpPrintInfo, TextWithoutLanesIsAnError) {
  std::string error;
  EXPECT_FALSE(ParseEpPrintInfo("", &error));
  EXPECT_FALSE(ParseEpPrintInfo("#\n# UCP endpoint\n#\n#  peer: x\n", &error));
  EXPECT_EQ(error,
            "no lane lines found: not the output of ucp_ep_print_info, or the endpoint has no "
            "lanes");
}

}  // namespace
}  // namespace rail::probe
