#include "rail/inventory/gid_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

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

// Says "changed" when told to, and remembers what it was asked to follow.
class ScriptedChanges final : public nic::NetdevChanges {
 public:
  void Follow(const std::set<std::string>& netdevs) override {
    followed = netdevs;
    ++follows;
  }
  bool Changed() override {
    ++polls;
    return std::exchange(pending, false);
  }
  bool pending = false;
  std::set<std::string> followed;
  int follows = 0;
  int polls = 0;
};

std::vector<sysfs::GidEntry> Table(std::initializer_list<const char*> netdevs, int generation) {
  std::vector<sysfs::GidEntry> table;
  for (const char* netdev : netdevs) {
    sysfs::GidEntry entry;
    entry.index = static_cast<unsigned>(generation);
    entry.netdev = netdev;
    table.push_back(entry);
  }
  return table;
}

TEST(GidCacheTest, AChangeOfItsNetdevsRereadsBeforeTheInterval) {
  test::FakeClock clock;
  ScriptedChanges changes;
  GidCache cache(5min, clock, &changes);
  int reads = 0;
  auto read = [&reads] { return Table({"eth2", "eth2.100"}, ++reads); };
  cache.Get("mlx5_0", 1, read);
  clock.Advance(1min);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 1u) << "nothing changed: kept";
  EXPECT_EQ(changes.followed, (std::set<std::string>{"eth2", "eth2.100"}))
      << "the netdevs its table names are followed (at the poll after the read)";
  changes.pending = true;
  clock.Advance(10s);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 2u) << "changed: read again";
  clock.Advance(1s);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 3u)
      << "the last read came before the change had settled in the kernel's workqueue";
  clock.Advance(GidCache::kSettle);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 4u) << "so was that one";
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 4u) << "read after it settled: kept";
  EXPECT_EQ(cache.Get("mlx5_0", 2, read).front().index, 5u) << "a new port is read at once";
  clock.Advance(GidCache::kPollInterval);
  cache.Get("mlx5_0", 2, read);
  EXPECT_EQ(changes.follows, 4)
      << "followed again at the poll after each read, the last two reads at one (an ifindex can "
         "change)";
  clock.Advance(5min);
  EXPECT_EQ(cache.Get("mlx5_0", 1, read).front().index, 6u) << "the interval still bounds it";
}

TEST(GidCacheTest, ThePortsOfOneScrapeLookAtTheNotificationsOnce) {
  test::FakeClock clock;
  ScriptedChanges changes;
  GidCache cache(5min, clock, &changes);
  auto read = [] { return Table({"eth2"}, 1); };
  for (unsigned port = 1; port <= 8; ++port) cache.Get("mlx5_" + std::to_string(port), 1, read);
  EXPECT_EQ(changes.polls, 1);
  EXPECT_EQ(changes.follows, 0) << "followed at the next poll";
  clock.Advance(15s);
  for (unsigned port = 1; port <= 8; ++port) cache.Get("mlx5_" + std::to_string(port), 1, read);
  EXPECT_EQ(changes.polls, 2);
  EXPECT_EQ(changes.follows, 1) << "once for the eight tables read";
}

TEST(GidCacheTest, WithoutChangesTheIntervalAloneRereads) {
  test::FakeClock clock;
  GidCache cache(5min, clock, nullptr);
  int reads = 0;
  auto read = [&reads] { return Table({"eth2"}, ++reads); };
  cache.Get("mlx5_0", 1, read);
  clock.Advance(4min);
  cache.Get("mlx5_0", 1, read);
  EXPECT_EQ(reads, 1);
  clock.Advance(1min);
  cache.Get("mlx5_0", 1, read);
  EXPECT_EQ(reads, 2);
}

}  // namespace
}  // namespace rail::inventory
