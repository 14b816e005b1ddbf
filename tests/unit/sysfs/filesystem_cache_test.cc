// RootedFilesystem's cache of open descriptors, on real files: what a kept descriptor must still
// answer like a fresh open would, and where the documented one-interval window lies.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "rail/sysfs/filesystem.h"

namespace rail::sysfs {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

namespace fs = std::filesystem;

void WriteInPlace(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::trunc);  // truncates the same inode
  out << contents;
}

void ReplaceByRename(const fs::path& path, const std::string& contents) {
  const fs::path temporary = path.string() + ".new";
  WriteInPlace(temporary, contents);
  fs::rename(temporary, path);
}

std::size_t OpenDescriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

RootedFilesystem::Options CheckEveryRead() {
  RootedFilesystem::Options options;
  options.directory_check_interval = 0ms;
  return options;
}

RootedFilesystem::Options CheckHourly() {
  RootedFilesystem::Options options;
  options.directory_check_interval = 1h;
  return options;
}

// One tree for the whole suite, each test in its own directory: the cache trusts a directory
// only once it has not changed for a second, so the suite waits for that once, up front.
class FileCacheTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir_template[] = "/tmp/rail-file-cache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    root_ = new fs::path(dir_template);
    for (const char* dir : {"inplace", "deleted", "replaced", "stale", "vanished/dev", "bound",
                            "limit", "listing", "threads", "errors", "absent", "absent_check",
                            "group", "regroup/dev/stats", "gidtable/dev/ports/1/gids"}) {
      fs::create_directories(*root_ / dir);
    }
    WriteInPlace(*root_ / "inplace/value", "1\n");
    WriteInPlace(*root_ / "deleted/value", "1\n");
    WriteInPlace(*root_ / "replaced/value", "old\n");
    WriteInPlace(*root_ / "stale/value", "old\n");
    WriteInPlace(*root_ / "vanished/dev/value", "first device\n");
    for (int i = 0; i < 20; ++i) {
      WriteInPlace(*root_ / "bound" / std::to_string(i), std::to_string(i));
      WriteInPlace(*root_ / "threads" / std::to_string(i), std::to_string(i));
    }
    for (int i = 0; i < 100; ++i) {
      WriteInPlace(*root_ / "limit" / std::to_string(i), std::to_string(i));
    }
    WriteInPlace(*root_ / "listing/a", "");
    WriteInPlace(*root_ / "group/b", "");
    WriteInPlace(*root_ / "group/a", "");
    WriteInPlace(*root_ / "regroup/dev/stats/rx_bytes", "1\n");
    WriteInPlace(*root_ / "gidtable/dev/ports/1/gids/0",
                 "fe80:0000:0000:0000:0000:0000:0000:0001\n");
    WriteInPlace(*root_ / "errors/value", "1\n");
    WriteInPlace(*root_ / "absent/value", "1\n");
    WriteInPlace(*root_ / "absent_check/value", "1\n");
    std::this_thread::sleep_for(1200ms);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
    root_ = nullptr;
  }

  static fs::path* root_;
};

fs::path* FileCacheTest::root_ = nullptr;

TEST_F(FileCacheTest, FileRewrittenInPlaceIsReadFresh) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("inplace/value", &contents), 0);
  EXPECT_EQ(contents, "1\n");
  EXPECT_EQ(sys.cached_files(), 1u);
  const std::size_t descriptors = OpenDescriptors();

  WriteInPlace(*root_ / "inplace/value", "22\n");
  ASSERT_EQ(sys.ReadFile("inplace/value", &contents), 0);
  EXPECT_EQ(contents, "22\n");
  WriteInPlace(*root_ / "inplace/value", "3");  // shorter, no newline
  ASSERT_EQ(sys.ReadFile("/inplace/value/", &contents), 0);
  EXPECT_EQ(contents, "3");
  // Served by the one kept descriptor: nothing opened, nothing dropped.
  EXPECT_EQ(OpenDescriptors(), descriptors);
  EXPECT_EQ(sys.cached_files(), 1u);
}

TEST_F(FileCacheTest, DeletedCachedFileReadsEnoent) {
  RootedFilesystem sys(root_->string(), CheckEveryRead());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("deleted/value", &contents), 0);
  ASSERT_EQ(sys.ReadFile("deleted/value", &contents), 0);
  EXPECT_EQ(sys.cached_files(), 1u);

  fs::remove(*root_ / "deleted/value");
  contents = "untouched";
  EXPECT_EQ(sys.ReadFile("deleted/value", &contents), ENOENT);
  EXPECT_EQ(sys.cached_files(), 0u);  // the old descriptor is closed
  EXPECT_EQ(sys.ReadFile("deleted/value", &contents), ENOENT);
}

TEST_F(FileCacheTest, FileReplacedByRenameIsReadAtTheNextDirectoryCheck) {
  RootedFilesystem sys(root_->string(), CheckEveryRead());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("replaced/value", &contents), 0);
  EXPECT_EQ(contents, "old\n");
  ReplaceByRename(*root_ / "replaced/value", "new\n");
  ASSERT_EQ(sys.ReadFile("replaced/value", &contents), 0);
  EXPECT_EQ(contents, "new\n");
}

// The documented window: until its directory is looked at again, a kept descriptor reads the
// file it was opened on, even if the path now names another one. This also shows that reads
// are served from the kept descriptor.
TEST_F(FileCacheTest, ReplacementIsUnseenWithinTheCheckInterval) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("stale/value", &contents), 0);
  ReplaceByRename(*root_ / "stale/value", "new\n");
  ASSERT_EQ(sys.ReadFile("stale/value", &contents), 0);
  EXPECT_EQ(contents, "old\n");

  RootedFilesystem fresh(root_->string());
  ASSERT_EQ(fresh.ReadFile("stale/value", &contents), 0);
  EXPECT_EQ(contents, "new\n");  // a changed directory is not trusted for a second
}

TEST_F(FileCacheTest, VanishedAndRecreatedDirectoryIsReadAfresh) {
  RootedFilesystem sys(root_->string(), CheckEveryRead());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("vanished/dev/value", &contents), 0);
  EXPECT_EQ(contents, "first device\n");
  fs::remove_all(*root_ / "vanished/dev");
  EXPECT_EQ(sys.ReadFile("vanished/dev/value", &contents), ENOENT);
  std::vector<std::string> names;
  EXPECT_EQ(sys.ListDirectory("vanished/dev", &names), ENOENT);
  EXPECT_FALSE(sys.IsDirectory("vanished/dev"));

  fs::create_directories(*root_ / "vanished/dev");
  WriteInPlace(*root_ / "vanished/dev/value", "second device\n");
  ASSERT_EQ(sys.ReadFile("vanished/dev/value", &contents), 0);
  EXPECT_EQ(contents, "second device\n");
  EXPECT_TRUE(sys.IsDirectory("vanished/dev"));
}

TEST_F(FileCacheTest, BoundIsRespected) {
  RootedFilesystem::Options options;
  options.max_cached_files = 4;
  RootedFilesystem sys(root_->string(), options);
  const std::size_t descriptors = OpenDescriptors();
  std::string contents;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20; ++i) {
      ASSERT_EQ(sys.ReadFile("bound/" + std::to_string(i), &contents), 0);
      EXPECT_EQ(contents, std::to_string(i));
      EXPECT_LE(sys.cached_files(), 4u);
    }
  }
  EXPECT_LE(OpenDescriptors(), descriptors + 4);
}

TEST_F(FileCacheTest, BoundIsAtMostHalfTheDescriptorLimit) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 64);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  {
    RootedFilesystem sys(root_->string());  // default bound 8192
    std::string contents;
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(sys.ReadFile("limit/" + std::to_string(i), &contents), 0);
      EXPECT_EQ(contents, std::to_string(i));
    }
    EXPECT_LE(sys.cached_files(), low.rlim_cur / 2);
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
}

TEST_F(FileCacheTest, CachingCanBeSwitchedOff) {
  RootedFilesystem::Options options;
  options.cache_open_files = false;
  RootedFilesystem sys(root_->string(), options);
  std::string contents;
  ASSERT_EQ(sys.ReadFile("inplace/value", &contents), 0);
  EXPECT_EQ(sys.cached_files(), 0u);
}

TEST_F(FileCacheTest, CachedDirectoryListsEntriesAddedSince) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  std::vector<std::string> names;
  ASSERT_EQ(sys.ListDirectory("listing", &names), 0);
  EXPECT_THAT(names, ElementsAre("a"));
  EXPECT_EQ(sys.cached_files(), 1u);
  WriteInPlace(*root_ / "listing/c", "");
  WriteInPlace(*root_ / "listing/b", "");
  ASSERT_EQ(sys.ListDirectory("listing", &names), 0);
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));
  fs::remove(*root_ / "listing/a");
  ASSERT_EQ(sys.ListDirectory("listing/", &names), 0);
  EXPECT_THAT(names, ElementsAre("b", "c"));
  // A path cached as a directory is still read as one, and the other way round.
  std::string contents;
  EXPECT_EQ(sys.ReadFile("listing", &contents), EISDIR);
  ASSERT_EQ(sys.ReadFile("listing/b", &contents), 0);
  EXPECT_EQ(sys.ListDirectory("listing/b", &names), ENOTDIR);
}

// An attribute group is listed on its kept descriptor once and then answered from the names
// kept: an entry added since is unseen (the kernel never adds one), while ListDirectory sees it.
TEST_F(FileCacheTest, AttributeGroupListingIsKeptWhileTheDirectoryLives) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  std::vector<std::string> names;
  for (int listing = 0; listing < 3; ++listing) {
    ASSERT_EQ(sys.ListAttributeGroup("group", &names), 0);
    EXPECT_THAT(names, ElementsAre("a", "b"));
  }
  WriteInPlace(*root_ / "group/c", "");
  ASSERT_EQ(sys.ListAttributeGroup("group/", &names), 0);
  EXPECT_THAT(names, ElementsAre("a", "b"));
  ASSERT_EQ(sys.ListDirectory("group", &names), 0);
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));
  EXPECT_EQ(sys.ListAttributeGroup("group/a", &names), ENOTDIR);
  EXPECT_EQ(sys.ListAttributeGroup("group/missing", &names), ENOENT);
}

// A device re-created under the same name is a new directory: its group is listed afresh at the
// directory's next look.
TEST_F(FileCacheTest, AttributeGroupOfARecreatedDeviceIsListedAfresh) {
  RootedFilesystem sys(root_->string(), CheckEveryRead());
  std::vector<std::string> names;
  for (int listing = 0; listing < 2; ++listing) {
    ASSERT_EQ(sys.ListAttributeGroup("regroup/dev/stats", &names), 0);
    EXPECT_THAT(names, ElementsAre("rx_bytes"));
  }
  fs::remove_all(*root_ / "regroup/dev");
  EXPECT_EQ(sys.ListAttributeGroup("regroup/dev/stats", &names), ENOENT);
  fs::create_directories(*root_ / "regroup/dev/stats");
  WriteInPlace(*root_ / "regroup/dev/stats/tx_bytes", "2\n");
  ASSERT_EQ(sys.ListAttributeGroup("regroup/dev/stats", &names), 0);
  EXPECT_THAT(names, ElementsAre("tx_bytes"));
}

// GID slot files are never kept (their pages would pin kernel memory), their directory is, and
// each slot is opened relative to it: what a read answers is still the file as it is now,
// through a rewrite, a replacement and the device's re-creation within the check interval.
TEST_F(FileCacheTest, GidSlotsAreReadInTheirKeptDirectoryAndNeverKept) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  const std::string slot = "gidtable/dev/ports/1/gids/0";
  std::string contents;
  ASSERT_EQ(sys.ReadFile(slot, &contents), 0);
  EXPECT_EQ(contents, "fe80:0000:0000:0000:0000:0000:0000:0001\n");
  EXPECT_EQ(sys.cached_files(), 1u) << "the directory alone";
  WriteInPlace(*root_ / slot, "fe80:0000:0000:0000:0000:0000:0000:0002\n");
  ASSERT_EQ(sys.ReadFile(slot, &contents), 0);
  EXPECT_EQ(contents, "fe80:0000:0000:0000:0000:0000:0000:0002\n");
  ReplaceByRename(*root_ / slot, "fe80:0000:0000:0000:0000:0000:0000:0003\n");
  ASSERT_EQ(sys.ReadFile(slot, &contents), 0);
  EXPECT_EQ(contents, "fe80:0000:0000:0000:0000:0000:0000:0003\n");
  EXPECT_EQ(sys.ReadFile("gidtable/dev/ports/1/gids/1", &contents), ENOENT);
  EXPECT_EQ(sys.cached_files(), 1u);

  fs::remove_all(*root_ / "gidtable/dev");
  fs::create_directories(*root_ / "gidtable/dev/ports/1/gids");
  WriteInPlace(*root_ / slot, "fe80:0000:0000:0000:0000:0000:0000:0004\n");
  ASSERT_EQ(sys.ReadFile(slot, &contents), 0) << "the kept directory is a removed one's";
  EXPECT_EQ(contents, "fe80:0000:0000:0000:0000:0000:0000:0004\n");
}

// A missing file in a directory of the cache is remembered as missing within the documented
// window, like a replaced one: its creation is unseen until the directory is looked at again.
TEST_F(FileCacheTest, MissingFileIsUnseenWithinTheCheckInterval) {
  RootedFilesystem sys(root_->string(), CheckHourly());
  std::string contents;
  ASSERT_EQ(sys.ReadFile("absent/value", &contents), 0);  // the directory is the cache's now
  std::vector<std::string> names;
  EXPECT_EQ(sys.ReadFile("absent/missing", &contents), ENOENT);
  EXPECT_EQ(sys.ListDirectory("absent/missing_dir", &names), ENOENT);
  WriteInPlace(*root_ / "absent/missing", "created\n");
  fs::create_directories(*root_ / "absent/missing_dir/x");
  EXPECT_EQ(sys.ReadFile("absent/missing", &contents), ENOENT);
  EXPECT_EQ(sys.ListDirectory("absent/missing_dir", &names), ENOENT);

  RootedFilesystem fresh(root_->string());
  ASSERT_EQ(fresh.ReadFile("absent/missing", &contents), 0);
  EXPECT_EQ(contents, "created\n");
  ASSERT_EQ(fresh.ListDirectory("absent/missing_dir", &names), 0);
  EXPECT_THAT(names, ElementsAre("x"));
}

// The directory's next look finds it changed (a new ctime): what it remembered as missing is
// forgotten and the new file read.
TEST_F(FileCacheTest, MissingFileIsReadAfterTheNextDirectoryCheck) {
  RootedFilesystem::Options options;
  options.directory_check_interval = 200ms;
  RootedFilesystem sys(root_->string(), options);
  std::string contents;
  ASSERT_EQ(sys.ReadFile("absent_check/value", &contents), 0);
  EXPECT_EQ(sys.ReadFile("absent_check/missing", &contents), ENOENT);
  WriteInPlace(*root_ / "absent_check/missing", "created\n");
  std::this_thread::sleep_for(250ms);
  ASSERT_EQ(sys.ReadFile("absent_check/value", &contents), 0);  // looks at the directory
  ASSERT_EQ(sys.ReadFile("absent_check/missing", &contents), 0);
  EXPECT_EQ(contents, "created\n");
}

TEST_F(FileCacheTest, ConcurrentReadersGetTheirOwnAnswers) {
  RootedFilesystem::Options options;
  options.max_cached_files = 8;  // evictions while other threads read
  RootedFilesystem sys(root_->string(), options);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string contents;
      for (int round = 0; round < 200; ++round) {
        const int i = (round * 7 + t) % 20;
        if (sys.ReadFile("threads/" + std::to_string(i), &contents) != 0 ||
            contents != std::to_string(i)) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(failures, ElementsAre(0, 0, 0, 0));
  EXPECT_LE(sys.cached_files(), 8u);
}

TEST_F(FileCacheTest, ReadErrorsAreReturnedAndNeverCached) {
  RootedFilesystem sys(root_->string());
  std::string contents = "stale";
  EXPECT_EQ(sys.ReadFile("errors", &contents), EISDIR);  // open() works, read() fails
  EXPECT_EQ(sys.ReadFile("errors", &contents), EISDIR);
  EXPECT_EQ(sys.ReadFile("errors/missing", &contents), ENOENT);
  EXPECT_EQ(sys.cached_files(), 0u);
  if (::geteuid() != 0) {  // root opens anything on a plain filesystem
    ::chmod((*root_ / "errors/value").c_str(), 0);
    EXPECT_EQ(sys.ReadFile("errors/value", &contents), EACCES);
    EXPECT_EQ(sys.ReadFile("errors/value", &contents), EACCES);
    EXPECT_EQ(sys.cached_files(), 0u);
  }
}

// The kernel's own answers, which no plain file gives: EINVAL from read() (lo has no speed) and
// EACCES from open() (a write-only attribute refuses readers, root included).
TEST(FileCacheSysfs, EinvalAndEaccesAreReturnedEveryTime) {
  RootedFilesystem sys("/sys");
  std::string contents;
  if (!sys.Exists("class/net/lo/speed")) GTEST_SKIP() << "no /sys/class/net/lo";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sys.ReadFile("class/net/lo/speed", &contents), EINVAL);
  std::string write_only;
  for (const char* path :
       {"bus/pci/rescan", "bus/platform/drivers_probe", "kernel/uevent_seqnum"}) {
    struct stat st;
    if (::stat((std::string("/sys/") + path).c_str(), &st) == 0 && (st.st_mode & 0444) == 0) {
      write_only = path;
      break;
    }
  }
  if (!write_only.empty()) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(sys.ReadFile(write_only, &contents), EACCES);
  }
  EXPECT_EQ(sys.cached_files(), 0u);
}

// kernfs runs show() again for every read at offset 0 of a kept descriptor.
TEST(FileCacheSysfs, KeptDescriptorReadsLiveCounter) {
  RootedFilesystem sys("/sys");
  const std::string counter = "class/net/lo/statistics/tx_packets";
  std::string before;
  if (sys.ReadFile(counter, &before) != 0) GTEST_SKIP() << "no /sys/class/net/lo";
  ASSERT_EQ(sys.ReadFile(counter, &before), 0);  // from the kept descriptor
  ASSERT_EQ(sys.cached_files(), 1u);

  const int sock = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard; nobody needs to listen
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 10; ++i) {
    ::sendto(sock, "x", 1, 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  }
  ::close(sock);

  std::string after;
  ASSERT_EQ(sys.ReadFile(counter, &after), 0);
  RootedFilesystem::Options off;
  off.cache_open_files = false;
  std::string uncached;
  ASSERT_EQ(RootedFilesystem("/sys", off).ReadFile(counter, &uncached), 0);
  const auto value = [](const std::string& text) { return std::stoull(text); };
  // /sys may show another network namespace's lo than the one the packets went through.
  if (value(uncached) < value(before) + 10) GTEST_SKIP() << "/sys shows another lo";
  EXPECT_GE(value(after), value(before) + 10);
  EXPECT_EQ(sys.cached_files(), 1u);
}

}  // namespace
}  // namespace rail::sysfs
