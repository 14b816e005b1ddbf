// libcurl opened at run time (src/fleet/curl_library.h): every function resolved, and what the
// Kubernetes discovery says when the library is missing.
#include "fleet/curl_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fleet/kubernetes_source.h"

namespace rail::fleet {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(CurlLibraryTest, ResolvesEveryFunctionOfTheSystemLibcurl) {
  std::string error;
  const std::unique_ptr<CurlLibrary> library = CurlLibrary::Load(kCurlLibraryName, &error);
  ASSERT_NE(library, nullptr) << error;
  const CurlApi& api = library->api();
  EXPECT_NE(api.global_init, nullptr);
  EXPECT_NE(api.easy_init, nullptr);
  EXPECT_NE(api.easy_cleanup, nullptr);
  EXPECT_NE(api.easy_reset, nullptr);
  EXPECT_NE(api.easy_setopt, nullptr);
  EXPECT_NE(api.easy_perform, nullptr);
  EXPECT_NE(api.easy_getinfo, nullptr);
  EXPECT_NE(api.easy_strerror, nullptr);
  EXPECT_NE(api.easy_escape, nullptr);
  EXPECT_NE(api.free, nullptr);
  EXPECT_NE(api.slist_append, nullptr);
  EXPECT_NE(api.slist_free_all, nullptr);
  // Each pointer is the function of its name, not merely some symbol.
  EXPECT_STREQ(api.easy_strerror(CURLE_OK), "No error");
  curl_slist* list = api.slist_append(nullptr, "Accept: application/json");
  ASSERT_NE(list, nullptr);
  EXPECT_STREQ(list->data, "Accept: application/json");
  api.slist_free_all(list);
}

TEST(CurlLibraryTest, AMissingLibraryNamesItsDebianPackage) {
  std::string error;
  EXPECT_EQ(CurlLibrary::Load("libcurl-rail-missing.so.4", &error), nullptr);
  EXPECT_THAT(error, StartsWith("Kubernetes discovery needs libcurl-rail-missing.so.4 (Debian "
                                "package libcurl4): libcurl-rail-missing.so.4: cannot open"));
}

TEST(CurlLibraryTest, ALibraryWithoutCurlNamesTheFirstMissingFunction) {
  std::string error;
  EXPECT_EQ(CurlLibrary::Load("libz.so.1", &error), nullptr);
  EXPECT_THAT(error, StartsWith("libz.so.1 has no curl_global_init"));
}

TEST(CurlLibraryTest, TheProcessOpensItOnceWhateverTheThreads) {
  std::vector<const CurlLibrary*> seen(8, nullptr);
  std::vector<std::string> errors(seen.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = CurlLibrary::Process(&errors[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_NE(seen[0], nullptr) << errors[0];
  EXPECT_EQ(std::set<const CurlLibrary*>(seen.begin(), seen.end()).size(), 1u);
  EXPECT_EQ(std::set<std::string>(errors.begin(), errors.end()), std::set<std::string>{""});
  std::string error;
  EXPECT_EQ(CurlLibrary::Process(&error), seen[0]);
}

TEST(CurlLibraryTest, WithoutLibcurlTheSourceFailsEveryFetchWithTheReason) {
  KubernetesConfig config;
  config.service = "rail-exporter";
  config.namespace_ = "monitoring";
  config.token_file = "/nonexistent/token";
  const std::string why =
      "Kubernetes discovery needs libcurl.so.4 (Debian package libcurl4): libcurl.so.4: cannot "
      "open shared object file: No such file or directory";
  const std::unique_ptr<Source> source = MakeKubernetesSourceWith(config, nullptr, why);
  EXPECT_EQ(source->Name(), "kubernetes:monitoring/rail-exporter");
  for (int refresh = 0; refresh < 2; ++refresh) {
    const FetchResult result = source->Fetch(base::SystemClock());
    EXPECT_EQ(result.error, why);
    EXPECT_FALSE(result.targets.has_value());
  }
  // With the library, the same configuration gets as far as its (missing) token.
  const std::unique_ptr<Source> with_curl = MakeKubernetesSource(config);
  EXPECT_THAT(with_curl->Fetch(base::SystemClock()).error, HasSubstr("/nonexistent/token"));
}

}  // namespace
}  // namespace rail::fleet
