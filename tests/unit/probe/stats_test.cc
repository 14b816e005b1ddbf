#include "rail/probe/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace rail::probe {
namespace {

TEST(NearestRankPercentile, SmallKnownSets) {
  const std::vector<double> four = {1, 2, 3, 4};
  EXPECT_EQ(NearestRankPercentile(four, 0), 1);
  EXPECT_EQ(NearestRankPercentile(four, 25), 1);  // rank ceil(1.0) = 1
  EXPECT_EQ(NearestRankPercentile(four, 26), 2);
  EXPECT_EQ(NearestRankPercentile(four, 50), 2);  // rank 2, no interpolation to 2.5
  EXPECT_EQ(NearestRankPercentile(four, 75), 3);
  EXPECT_EQ(NearestRankPercentile(four, 99), 4);
  EXPECT_EQ(NearestRankPercentile(four, 100), 4);

  // The textbook example of the method: {15, 20, 35, 40, 50}.
  const std::vector<double> five = {15, 20, 35, 40, 50};
  EXPECT_EQ(NearestRankPercentile(five, 5), 15);
  EXPECT_EQ(NearestRankPercentile(five, 30), 20);
  EXPECT_EQ(NearestRankPercentile(five, 40), 20);
  EXPECT_EQ(NearestRankPercentile(five, 50), 35);
  EXPECT_EQ(NearestRankPercentile(five, 100), 50);
}

TEST(NearestRankPercentile, ExactRanksAreNotPushedUpByRounding) {
  // 1..1000: p99.9 is rank 999 exactly, though 99.9 / 100 * 1000 is 999.0000000000001 in doubles.
  std::vector<double> samples(1000);
  std::iota(samples.begin(), samples.end(), 1.0);
  EXPECT_EQ(NearestRankPercentile(samples, 99.9), 999);
  EXPECT_EQ(NearestRankPercentile(samples, 99), 990);
  EXPECT_EQ(NearestRankPercentile(samples, 90), 900);
  EXPECT_EQ(NearestRankPercentile(samples, 50), 500);
  EXPECT_TRUE(std::isnan(NearestRankPercentile({}, 50)));
}

TEST(Summarise, OneSampleIsEveryPercentile) {
  const auto summary = Summarise({4.2e-6});
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 1u);
  for (double value :
       {summary->min, summary->p50, summary->p90, summary->p99, summary->p999, summary->max}) {
    EXPECT_EQ(value, 4.2e-6);
  }
}

TEST(Summarise, UnsortedSamplesWithDuplicates) {
  // Ten samples, out of order, with ties.
  const auto summary = Summarise({5, 1, 3, 3, 3, 9, 2, 3, 7, 1});
  ASSERT_TRUE(summary);
  // Sorted: 1 1 2 3 3 3 3 5 7 9
  EXPECT_EQ(summary->count, 10u);
  EXPECT_EQ(summary->min, 1);
  EXPECT_EQ(summary->p50, 3);  // rank 5
  EXPECT_EQ(summary->p90, 7);  // rank 9
  EXPECT_EQ(summary->p99, 9);  // rank ceil(9.9) = 10
  EXPECT_EQ(summary->p999, 9);
  EXPECT_EQ(summary->max, 9);
}

TEST(Summarise, AllEqualSamples) {
  const auto summary = Summarise(std::vector<double>(37, 2.5e-5));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->min, 2.5e-5);
  EXPECT_EQ(summary->p999, 2.5e-5);
}

TEST(Summarise, ThousandSamplesSeparateTheTail) {
  // 990 fast round trips, 9 slow, 1 very slow: p99 is still fast, p99.9 slow, max very slow.
  std::vector<double> samples(990, 10e-6);
  samples.insert(samples.end(), 9, 500e-6);
  samples.push_back(20e-3);
  const auto summary = Summarise(samples);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->p50, 10e-6);
  EXPECT_EQ(summary->p99, 10e-6);    // rank 990
  EXPECT_EQ(summary->p999, 500e-6);  // rank 999
  EXPECT_EQ(summary->max, 20e-3);
}

TEST(Summarise, NaNsAreDroppedAndNothingLeftIsNullopt) {
  const auto summary = Summarise({std::nan(""), 2.0, std::nan(""), 1.0});
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 2u);
  EXPECT_EQ(summary->min, 1.0);
  EXPECT_EQ(summary->max, 2.0);
  EXPECT_FALSE(Summarise({}));
  EXPECT_FALSE(Summarise({std::nan("")}));
}

TEST(Summarise, InPlaceLeavesTheSamplesSortedWithoutNaNs) {
  std::vector<double> samples{3.0, std::nan(""), 1.0, 2.0};
  const auto summary = SummariseInPlace(samples);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 3u);
  EXPECT_EQ(summary->p50, 2.0);
  EXPECT_EQ(samples, (std::vector<double>{1.0, 2.0, 3.0}));
}

TEST(RttBuckets, StartAtOneMicrosecondAndGrowByAtMostOnePointFive) {
  const std::vector<double> buckets = RttBuckets();
  ASSERT_GE(buckets.size(), 2u);
  EXPECT_DOUBLE_EQ(buckets.front(), 1e-6);
  EXPECT_EQ(buckets.back(), 10.0);
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_GT(buckets[i], buckets[i - 1]);
    EXPECT_LE(buckets[i] / buckets[i - 1], 1.5 * (1 + 1e-12)) << "bucket " << i;
  }
  // 1 µs * 1.5^39 = 7.4 s < 10 s < 1.5^40: 40 exponential bounds, then 10 s.
  EXPECT_EQ(buckets.size(), 41u);
}

TEST(RttBuckets, ConfigurableMax) {
  const std::vector<double> buckets = RttBuckets(1.0);
  EXPECT_EQ(buckets.back(), 1.0);
  EXPECT_LE(buckets.back() / buckets[buckets.size() - 2], 1.5);
}

TEST(ExponentialBuckets, MaxOnAnExactPowerIsNotDuplicated) {
  std::string error;
  const auto buckets = ExponentialBuckets(1.0, 1.5, 1.5 * 1.5 * 1.5, &error);
  EXPECT_EQ(buckets, (std::vector<double>{1.0, 1.5, 2.25, 3.375}));
}

TEST(ExponentialBuckets, RefusesCoarseOrDegenerateLayouts) {
  std::string error;
  EXPECT_TRUE(ExponentialBuckets(1e-6, 2.0, 10, &error).empty());
  EXPECT_EQ(error, "bucket growth factor must be in (1, 1.5]");
  EXPECT_TRUE(ExponentialBuckets(1e-6, 1.0, 10, &error).empty());
  EXPECT_TRUE(ExponentialBuckets(0, 1.5, 10, &error).empty());
  EXPECT_EQ(error, "first bucket bound must be a positive number");
  EXPECT_TRUE(ExponentialBuckets(1, 1.5, 1, &error).empty());
  EXPECT_EQ(error, "largest bucket bound must be greater than the first");
}

}  // namespace
}  // namespace rail::probe
