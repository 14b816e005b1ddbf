#include "rail/fleet/duplicates.h"

#include <gtest/gtest.h>

namespace rail::fleet {
namespace {

TEST(MergeDuplicatesTest, OneAgentUnderTwoTargetsIsProbedOncePerRail) {
  const std::vector<PlannedPair> pairs = {{"10.0.0.5:9841", "rail0"},
                                          {"node5:9841", "rail0"},
                                          {"10.0.0.6:9841", "rail0"},
                                          {"node5:9841", "rail1"}};
  const std::map<std::string, std::string> names = {
      {"10.0.0.5:9841", "node5"}, {"node5:9841", "node5"}, {"10.0.0.6:9841", "node6"}};
  const auto merged = MergeDuplicates(pairs, names, "node1");
  // rail0: the first target by address keeps node5; rail1 has node5 once and keeps it.
  const std::vector<PlannedPair> expected = {
      {"10.0.0.5:9841", "rail0"}, {"10.0.0.6:9841", "rail0"}, {"node5:9841", "rail1"}};
  EXPECT_EQ(merged.pairs, expected);
  EXPECT_EQ(merged.duplicates, std::vector<std::string>{"node5:9841"});
}

TEST(MergeDuplicatesTest, ATargetThatIsThisAgentIsNotProbed) {
  const std::vector<PlannedPair> pairs = {{"node1:9841", "rail0"}, {"10.0.0.2:9841", "rail0"}};
  const auto merged = MergeDuplicates(pairs, {{"node1:9841", "node1"}}, "node1");
  EXPECT_EQ(merged.pairs, (std::vector<PlannedPair>{{"10.0.0.2:9841", "rail0"}}));
  EXPECT_EQ(merged.duplicates, std::vector<std::string>{"node1:9841"});
}

TEST(MergeDuplicatesTest, UnnamedTargetsAreKept) {
  const std::vector<PlannedPair> pairs = {{"a:1", "rail0"}, {"b:1", "rail0"}};
  const auto merged = MergeDuplicates(pairs, {}, "node1");
  EXPECT_EQ(merged.pairs, pairs);
  EXPECT_TRUE(merged.duplicates.empty());
}

}  // namespace
}  // namespace rail::fleet
