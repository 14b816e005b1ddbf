#include "rail/fleet/self.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rail::fleet {
namespace {

using ::testing::HasSubstr;

SelfIdentity Identity() {
  SelfIdentity identity;
  identity.addresses = {"127.0.0.1", "10.0.0.2", "fd00::2"};
  identity.hostnames = {"node2", "node2.cluster.example"};
  identity.port = 9841;
  return identity;
}

std::vector<Target> Targets(std::vector<std::string> addresses) {
  std::vector<Target> targets;
  for (auto& address : addresses) targets.push_back({std::move(address), {}});
  return targets;
}

TEST(FindSelfTest, ByAddressAndResponderPort) {
  std::string error;
  EXPECT_EQ(
      FindSelf(Targets({"10.0.0.1:9841", "10.0.0.2:9841", "10.0.0.3:9841"}), Identity(), &error),
      "10.0.0.2:9841");
  EXPECT_EQ(FindSelf(Targets({"[fd00::1]:9841", "[fd00::2]:9841"}), Identity(), &error),
            "[fd00::2]:9841");
}

TEST(FindSelfTest, ByNameCaseInsensitively) {
  std::string error;
  EXPECT_EQ(FindSelf(Targets({"node1.cluster.example:9841", "Node2.Cluster.Example:9841"}),
                     Identity(), &error),
            "Node2.Cluster.Example:9841");
}

TEST(FindSelfTest, AnotherPortIsAnotherAgent) {
  std::string error;
  EXPECT_FALSE(FindSelf(Targets({"10.0.0.2:9842", "10.0.0.1:9841"}), Identity(), &error));
  EXPECT_THAT(error, HasSubstr("port 9841"));
}

TEST(FindSelfTest, TwoMatchesAreAmbiguous) {
  std::string error;
  EXPECT_FALSE(FindSelf(Targets({"10.0.0.2:9841", "node2:9841"}), Identity(), &error));
  EXPECT_THAT(error, HasSubstr("fleet.self"));
}

TEST(FindSelfTest, LocalIdentityHasLoopbackAndAName) {
  const auto identity = LocalIdentity(9841);
  EXPECT_EQ(identity.port, 9841);
  EXPECT_THAT(identity.addresses, ::testing::Contains("127.0.0.1"));
  EXPECT_FALSE(identity.hostnames.empty());
}

}  // namespace
}  // namespace rail::fleet
