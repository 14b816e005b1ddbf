#include "rail/fleet/target.h"

#include <gtest/gtest.h>

namespace rail::fleet {
namespace {

Target WithRails(std::string address, std::string rails) {
  return Target{std::move(address), {{std::string(kRailsLabel), std::move(rails)}}};
}

TEST(TargetRails, NoLabelMeansEveryRail) {
  const Target target{"10.0.0.1:9841", {{"rack", "r1"}}};
  EXPECT_FALSE(TargetRails(target).has_value());
  EXPECT_TRUE(OnRail(target, "rail0"));
  EXPECT_TRUE(OnRail(target, "anything"));
}

TEST(TargetRails, ListsTrimmedRails) {
  const auto rails = TargetRails(WithRails("a:1", " rail0, rail1 ,,rail3"));
  ASSERT_TRUE(rails.has_value());
  EXPECT_EQ(*rails, (std::vector<std::string>{"rail0", "rail1", "rail3"}));
}

TEST(TargetRails, EmptyLabelIsOnNoRail) {
  const Target target = WithRails("a:1", "");
  ASSERT_TRUE(TargetRails(target).has_value());
  EXPECT_TRUE(TargetRails(target)->empty());
  EXPECT_FALSE(OnRail(target, "rail0"));
}

TEST(OnRail, OnlyListedRails) {
  const Target target = WithRails("a:1", "rail0,rail2");
  EXPECT_TRUE(OnRail(target, "rail0"));
  EXPECT_TRUE(OnRail(target, "rail2"));
  EXPECT_FALSE(OnRail(target, "rail1"));
  EXPECT_FALSE(OnRail(target, "rail"));  // no prefix match
}

TEST(MergeTargets, OneEntryPerAddressSorted) {
  const auto merged = MergeTargets({{{"c:1", {}}, {"a:1", {}}}, {{"b:1", {}}, {"a:1", {}}}});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].address, "a:1");
  EXPECT_EQ(merged[1].address, "b:1");
  EXPECT_EQ(merged[2].address, "c:1");
}

TEST(MergeTargets, FirstSourceLabelsWinLaterOnesAdd) {
  const auto merged = MergeTargets({{Target{"a:1", {{"rails", "rail0"}}}},
                                    {Target{"a:1", {{"rails", "rail1"}, {"rack", "r2"}}}}});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].labels.at("rails"), "rail0");
  EXPECT_EQ(merged[0].labels.at("rack"), "r2");
}

TEST(MergeTargets, NothingToMerge) {
  EXPECT_TRUE(MergeTargets({}).empty());
  EXPECT_TRUE(MergeTargets({{}, {}}).empty());
}

}  // namespace
}  // namespace rail::fleet
