#include "rail/inventory/gid_cache.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace rail::inventory {
namespace {

using namespace std::chrono_literals;

TEST(GidCacheTest, RereadsOnlyAfterTheRefreshInterval) {
  test::FakeClock clock;
  GidCache cache(30s, clock);
  int reads = 0;
  auto read = [&reads] {
    ++reads;
    sysfs::GidEntry entry;
    entry.index = static_cast<unsigned>(reads);
    return std::vector<sysfs::GidEntry>{entry};
  };
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 1u);
  clock.Advance(29s);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 1u);
  EXPECT_EQ(cache.Get("mlx5_0", 2, read).front().index, 2u) << "ports are cached apart";
  clock.Advance(2s);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 3u);
  EXPECT_EQ(reads, 3);
}

TEST(GidCacheTest, ZeroIntervalReadsEveryTime) {
  GidCache cache(0s);
  int reads = 0;
  auto read = [&reads] {
    ++reads;
    return std::vector<sysfs::GidEntry>{};
  };
  cache.Get("d", 1, read);
  cache.Get("d", 1, read);
  EXPECT_EQ(reads, 2);
}

}  // namespace
}  // namespace rail::inventory
