#include "web/connection_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rail::web::detail {
namespace {

using ::testing::HasSubstr;

// Descriptors that leave exactly `connections` connections: the inverse of the documented rule.
std::uint64_t FilesFor(std::uint64_t connections) {
  return 2 * (connections + kReservedFiles);
}

TEST(FitConnections, NoLimitKeepsTheCeiling) {
  const ConnectionCeiling ceiling = FitConnections(1000, {});
  EXPECT_EQ(ceiling.connections, 1000);
  EXPECT_EQ(ceiling.lowered_by, "");
}

TEST(FitConnections, AnAmpleLimitKeepsTheCeiling) {
  const ConnectionCeiling ceiling = FitConnections(1000, {FilesFor(1000)});
  EXPECT_EQ(ceiling.connections, 1000);
  EXPECT_EQ(ceiling.lowered_by, "");
}

TEST(FitConnections, OpenFilesLowerTheCeilingAndAreNamed) {
  const ConnectionCeiling ceiling = FitConnections(1000, {FilesFor(1000) - 2});
  EXPECT_EQ(ceiling.connections, 999);
  EXPECT_THAT(ceiling.lowered_by, HasSubstr("RLIMIT_NOFILE " + std::to_string(FilesFor(999))));
}

TEST(FitConnections, TheUsualSoftLimitOf1024Leaves384) {
  // 1024 / 2 = 512 for everything but the sysfs cache, 128 of them reserved.
  EXPECT_EQ(FitConnections(1000, {1024}).connections, 384);
}

TEST(FitConnections, NeverBelowTheMinimumNorAboveWhatWasAskedFor) {
  EXPECT_EQ(FitConnections(1000, {16}).connections, kMinConnections);
  EXPECT_EQ(FitConnections(2, {16}).connections, 2);
  EXPECT_EQ(FitConnections(2, {16}).lowered_by, "");
}

}  // namespace
}  // namespace rail::web::detail
