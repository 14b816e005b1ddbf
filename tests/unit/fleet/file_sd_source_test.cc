#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fetched_addresses.h"
#include "rail/fleet/discovery.h"
#include "support/fake_clock.h"

namespace rail::fleet {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class FileSdSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "file_sd_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }
  std::unique_ptr<Source> Make(std::vector<std::string> files) {
    return MakeFileSdSource(FileSdConfig{std::move(files), std::chrono::seconds(5)});
  }

  fs::path dir_;
};

constexpr const char* kTwoPeers = R"([{"targets": ["10.0.0.2:9841", "10.0.0.1:9841"]}])";

TEST_F(FileSdSourceTest, ReadsAFileSortedAndNamesItself) {
  const std::string path = Write("peers.json", kTwoPeers);
  auto source = Make({path});
  EXPECT_EQ(source->Name(), "file_sd:" + path);
  EXPECT_EQ(source->RefreshInterval(), std::chrono::seconds(5));
  const auto result = source->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"10.0.0.1:9841", "10.0.0.2:9841"}));
}

TEST_F(FileSdSourceTest, GoodThenBadThenGoodKeepsTheLastGoodListInDiscovery) {
  const std::string path = Write("peers.json", kTwoPeers);
  test::FakeClock clock;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(Make({path}));
  Discovery discovery(std::move(sources), clock);
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(discovery.Targets().size(), 2u);

  Write("peers.json", R"([{"targets": ["10.0.0.3"]}])");  // no port
  clock.Advance(std::chrono::seconds(5));
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_EQ(discovery.Targets().size(), 2u);
  auto status = discovery.Status()[0];
  EXPECT_FALSE(status.healthy);
  EXPECT_THAT(status.last_error, HasSubstr(path + ": [0].targets[0]"));
  EXPECT_EQ(status.failures, 1u);

  Write("peers.json", R"([{"targets": ["10.0.0.3:9841"]}])");
  clock.Advance(std::chrono::seconds(5));
  EXPECT_TRUE(discovery.Refresh());
  ASSERT_EQ(discovery.Targets().size(), 1u);
  EXPECT_EQ(discovery.Targets()[0].address, "10.0.0.3:9841");
  EXPECT_TRUE(discovery.Status()[0].healthy);
}

// Rewritten in place with the same size and modification time: not re-read. (Were it re-read,
// the new contents would show.)
TEST_F(FileSdSourceTest, RereadsOnlyWhenSizeOrTimeChanged) {
  const std::string path = Write("peers.json", R"([{"targets": ["a:1"]}])");
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  auto source = Make({path});
  EXPECT_EQ(Addresses(source->Fetch(base::SystemClock())), (std::vector<std::string>{"a:1"}));

  {
    std::fstream file(path, std::ios::in | std::ios::out);
    file << R"([{"targets": ["b:1"]}])";
  }
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_EQ(Addresses(source->Fetch(base::SystemClock())), (std::vector<std::string>{"a:1"}));

  const timespec later[2] = {before.st_atim, {before.st_mtim.tv_sec + 1, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), later, 0), 0);
  EXPECT_EQ(Addresses(source->Fetch(base::SystemClock())), (std::vector<std::string>{"b:1"}));
}

TEST_F(FileSdSourceTest, GlobsMergeAcrossFiles) {
  Write("a.json", R"([{"targets": ["a:1", "c:1"]}])");
  Write("b.yml", "- targets: [b:1, c:1]\n");
  Write("ignored.txt", "not file_sd");
  auto source = Make({(dir_ / "*.json").string(), (dir_ / "*.yml").string()});
  const auto result = source->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_EQ(Addresses(result), (std::vector<std::string>{"a:1", "b:1", "c:1"}));
}

TEST_F(FileSdSourceTest, AGlobMatchingNothingIsNoError) {
  const auto result = Make({(dir_ / "*.json").string()})->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_TRUE(result.targets->empty());
}

TEST_F(FileSdSourceTest, AMissingFileFailsTheRefresh) {
  const std::string path = (dir_ / "absent.json").string();
  const auto result = Make({path})->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr(path + ": No such file"));
}

TEST_F(FileSdSourceTest, OneBadFileAmongGoodOnesFailsTheRefresh) {
  Write("a.json", kTwoPeers);
  const std::string bad = Write("b.json", R"({"targets": ["a:1"]})");
  const auto result = Make({(dir_ / "*.json").string()})->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr(bad + ": not a list"));
}

TEST_F(FileSdSourceTest, AnEmptyFileListsNoPeers) {
  const auto result = Make({Write("peers.json", "")})->Fetch(base::SystemClock());
  ASSERT_TRUE(result.targets) << result.error;
  EXPECT_TRUE(result.targets->empty());
}

TEST_F(FileSdSourceTest, ADirectoryFailsTheRefresh) {
  fs::create_directory(dir_ / "peers.d.json");
  const auto result = Make({(dir_ / "*.json").string()})->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("peers.d.json: not a regular file"));
}

TEST_F(FileSdSourceTest, AnUnreadableFileFailsTheRefresh) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const std::string path = Write("peers.json", kTwoPeers);
  fs::permissions(path, fs::perms::none);
  const auto result = Make({path})->Fetch(base::SystemClock());
  EXPECT_FALSE(result.targets);
  EXPECT_THAT(result.error, HasSubstr("cannot be read"));
}

}  // namespace
}  // namespace rail::fleet
