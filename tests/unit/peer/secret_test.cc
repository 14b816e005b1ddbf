#include "rail/peer/secret.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rail::peer {
namespace {

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::path(::testing::TempDir()) /
                 ("secret_test_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::string Write(const std::string& contents, mode_t mode = 0600) {
    const std::string path = (directory_ / "secret").string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  std::filesystem::path directory_;
};

TEST_F(SecretFileTest, StripsExactlyOneTrailingNewline) {
  std::string error;
  auto secret = LoadSecretFile(Write("s3cret\n"), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), "s3cret");

  secret = LoadSecretFile(Write("s3cret\r\n"), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), "s3cret");

  secret = LoadSecretFile(Write("s3cret\n\n"), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), "s3cret\n");

  secret = LoadSecretFile(Write(" spaces count "), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), " spaces count ");
}

TEST_F(SecretFileTest, KeepsBinaryBytes) {
  std::string error;
  const std::string binary("a\0b\xff", 4);
  auto secret = LoadSecretFile(Write(binary, 0400), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), binary);
}

TEST_F(SecretFileTest, RefusesEmptyFile) {
  std::string error;
  const std::string path = Write("");
  EXPECT_FALSE(LoadSecretFile(path, &error));
  EXPECT_EQ(error, "secret file " + path +
                       " is empty; put a random secret in it, e.g. openssl rand -hex 32 > " + path);
  EXPECT_FALSE(LoadSecretFile(Write("\n"), &error));
  EXPECT_NE(error.find("is empty"), std::string::npos);
}

TEST_F(SecretFileTest, RefusesGroupOrWorldReadableFile) {
  std::string error;
  const std::string path = Write("s3cret", 0640);
  EXPECT_FALSE(LoadSecretFile(path, &error));
  EXPECT_EQ(error, "secret file " + path +
                       " has mode 0640, which lets group or others access it; restrict it "
                       "with: chmod 600 " +
                       path);
  EXPECT_FALSE(LoadSecretFile(Write("s3cret", 0604), &error));
  EXPECT_NE(error.find("mode 0604"), std::string::npos);
  EXPECT_FALSE(LoadSecretFile(Write("s3cret", 0620), &error));
  EXPECT_NE(error.find("mode 0620"), std::string::npos);
}

TEST_F(SecretFileTest, ReadableByOwnGroupWhenAnotherUserOwnsIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file another owner";
  std::string error;
  const std::string path = Write("s3cret", 0640);
  ASSERT_EQ(::chown(path.c_str(), 4242, ::getegid()), 0);
  const auto secret = LoadSecretFile(path, &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(secret->bytes(), "s3cret");
  ASSERT_EQ(::chmod(path.c_str(), 0440), 0);
  EXPECT_TRUE(LoadSecretFile(path, &error)) << error;
  // Never group write, never others, never a group that is not the agent's.
  ASSERT_EQ(::chmod(path.c_str(), 0660), 0);
  EXPECT_FALSE(LoadSecretFile(path, &error));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_FALSE(LoadSecretFile(path, &error));
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_EQ(::chown(path.c_str(), 4242, ::getegid() + 4242), 0);
  EXPECT_FALSE(LoadSecretFile(path, &error));
  EXPECT_NE(error.find("mode 0640"), std::string::npos);
}

TEST_F(SecretFileTest, RefusesMissingDirectoryAndOversizedFiles) {
  std::string error;
  const std::string missing = (directory_ / "absent").string();
  EXPECT_FALSE(LoadSecretFile(missing, &error));
  EXPECT_EQ(error, "secret file " + missing + ": cannot open: No such file or directory");

  ASSERT_EQ(::chmod(directory_.c_str(), 0700), 0);
  EXPECT_FALSE(LoadSecretFile(directory_.string(), &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;

  EXPECT_FALSE(LoadSecretFile(Write(std::string(kMaxSecretFileBytes + 1, 'x')), &error));
  EXPECT_NE(error.find("a secret is at most 4096 bytes"), std::string::npos) << error;
  EXPECT_TRUE(LoadSecretFile(Write(std::string(kMaxSecretFileBytes, 'x')), &error)) << error;
}

}  // namespace
}  // namespace rail::peer
