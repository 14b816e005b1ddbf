// The DCB answer parser on answers laid out as the kernel writes them (tests/fixtures/dcb/,
// made by make_answers.py; veth-eopnotsupp.nlmsg recorded from a veth), and the live reader on
// a netdev that exists everywhere.
#include "rail/nic/dcb.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <vector>

namespace rail::nic {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kAnswers = std::string(RAIL_FIXTURES) + "/dcb";

DcbConfig ParseFile(const std::string& name) {
  std::ifstream file(kAnswers + "/" + name, std::ios::binary);
  EXPECT_TRUE(file) << name;
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  return ParseDcbAnswer(std::as_bytes(std::span(bytes)));
}

TEST(DcbParseTest, PfcOnPriorityThreeWithDscpTrust) {
  const auto config = ParseFile("pfc3-dscp.nlmsg");
  ASSERT_EQ(config.state, DcbState::kAvailable) << config.error;
  ASSERT_TRUE(config.pfc);
  EXPECT_EQ(config.pfc->enabled, 0x08);
  EXPECT_EQ(config.pfc->capability, 8);
  for (unsigned priority = 0; priority < kPriorities; ++priority) {
    EXPECT_EQ(config.pfc->EnabledOn(priority), priority == 3) << priority;
  }
  EXPECT_EQ(config.pfc->requests[3], 1520u);
  EXPECT_EQ(config.pfc->indications[3], 98211u);
  EXPECT_EQ(config.pfc->indications[4], 0u);
  // The ethertype entry (FCoE) is not a DSCP mapping.
  EXPECT_THAT(config.dscp_map, ElementsAre(DscpMapping{26, 3}, DscpMapping{48, 6}));
  EXPECT_EQ(config.trust(), Trust::kDscp);
  EXPECT_EQ(config.dcbx, 0x09);
}

TEST(DcbParseTest, DefaultsAreNoPfcAndPcpTrust) {
  const auto config = ParseFile("defaults.nlmsg");
  ASSERT_EQ(config.state, DcbState::kAvailable) << config.error;
  ASSERT_TRUE(config.pfc);
  EXPECT_EQ(config.pfc->enabled, 0);
  EXPECT_FALSE(config.pfc->EnabledOn(3));
  EXPECT_TRUE(config.dscp_map.empty());
  EXPECT_EQ(config.trust(), Trust::kPcp);
}

TEST(DcbParseTest, DriverWithoutPfcReportsNone) {
  const auto config = ParseFile("no-pfc.nlmsg");
  ASSERT_EQ(config.state, DcbState::kAvailable) << config.error;
  EXPECT_FALSE(config.pfc);
  EXPECT_FALSE(config.dcbx);
}

TEST(DcbParseTest, VethHasNoDcbRatherThanPfcOff) {
  // Recorded from a veth: the kernel's NLMSG_ERROR carrying -EOPNOTSUPP.
  const auto config = ParseFile("veth-eopnotsupp.nlmsg");
  EXPECT_EQ(config.state, DcbState::kNotSupported);
  EXPECT_FALSE(config.pfc);
  EXPECT_THAT(config.error, HasSubstr("no DCB operations"));
  EXPECT_STREQ(DcbStateName(config.state), "not_supported");
}

TEST(DcbParseTest, MissingNetdev) {
  const auto config = ParseFile("no-such-device.nlmsg");
  EXPECT_EQ(config.state, DcbState::kNoSuchDevice);
}

TEST(DcbParseTest, TruncatedPfcIsAnErrorNotAConfiguration) {
  const auto config = ParseFile("truncated-pfc.nlmsg");
  EXPECT_EQ(config.state, DcbState::kError);
  EXPECT_FALSE(config.pfc);
  EXPECT_THAT(config.error, HasSubstr("DCB_ATTR_IEEE_PFC of 8 bytes"));
}

TEST(DcbParseTest, EmptyOrForeignAnswerIsAnError) {
  EXPECT_EQ(ParseDcbAnswer({}).state, DcbState::kError);
  std::ifstream file(kAnswers + "/pfc3-dscp.nlmsg", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The answer to someone else's request (another sequence number) is not ours.
  EXPECT_EQ(ParseDcbAnswer(std::as_bytes(std::span(bytes)), 12345).state, DcbState::kError);
  bytes[4] = 16;  // nlmsg_type RTM_NEWLINK: not a DCB answer
  const auto foreign = ParseDcbAnswer(std::as_bytes(std::span(bytes)));
  EXPECT_EQ(foreign.state, DcbState::kError);
  EXPECT_THAT(foreign.error, HasSubstr("not RTM_GETDCB"));
}

TEST(RecordedDcbReaderTest, ReadsTheNetdevsFile) {
  const RecordedDcbReader reader(std::string(RAIL_FIXTURES) + "/spark-dual-rail/dcb");
  const auto roce = reader.Read("enp1s0f0np0");
  EXPECT_EQ(roce.state, DcbState::kAvailable);
  EXPECT_TRUE(roce.pfc && roce.pfc->EnabledOn(3));
  EXPECT_EQ(reader.Read("eth9").state, DcbState::kNoSuchDevice);
}

TEST(NetlinkDcbReaderTest, LoopbackHasNoDcb) {
  // The kernel itself: lo exists in every network namespace and has no DCB operations.
  const auto config = NetlinkDcbReader().Read("lo");
  EXPECT_EQ(config.state, DcbState::kNotSupported) << config.error;
  EXPECT_EQ(NetlinkDcbReader().Read("rail-no-such0").state, DcbState::kNoSuchDevice);
}

}  // namespace
}  // namespace rail::nic
