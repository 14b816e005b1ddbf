#include "rail/fleet/file_sd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rail::fleet {
namespace {

using ::testing::HasSubstr;

TEST(ParseFileSd, ReadsPrometheusJson) {
  const auto targets = ParseFileSd(R"([
    {"targets": ["10.0.0.1:9841", "10.0.0.2:9841"], "labels": {"rails": "rail0,rail1", "rack": "r7"}},
    {"targets": ["[fd00::3]:9841"]}
  ])",
                                   "peers.json");
  ASSERT_EQ(targets.size(), 3u);
  EXPECT_EQ(targets[0].address, "10.0.0.1:9841");
  EXPECT_EQ(targets[1].address, "10.0.0.2:9841");
  EXPECT_EQ(targets[0].labels.at("rails"), "rail0,rail1");
  EXPECT_EQ(targets[1].labels.at("rack"), "r7");
  EXPECT_EQ(targets[2].address, "[fd00::3]:9841");
  EXPECT_TRUE(targets[2].labels.empty());
}

TEST(ParseFileSd, ReadsYaml) {
  const auto targets = ParseFileSd(R"(
- targets:
    - node7:9841
    - 10.0.0.9:19841
  labels:
    rails: rail1
)",
                                   "peers.yml");
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].address, "node7:9841");
  EXPECT_EQ(targets[1].address, "10.0.0.9:19841");
  EXPECT_EQ(targets[1].labels, (std::map<std::string, std::string>{{"rails", "rail1"}}));
}

TEST(ParseFileSd, KeepsFileOrderAndDuplicates) {
  const auto targets =
      ParseFileSd(R"([{"targets": ["b:1", "a:1"]}, {"targets": ["b:1"]}])", "peers.json");
  ASSERT_EQ(targets.size(), 3u);
  EXPECT_EQ(targets[0].address, "b:1");
  EXPECT_EQ(targets[1].address, "a:1");
  EXPECT_EQ(targets[2].address, "b:1");
}

TEST(ParseFileSd, EmptyFileAndEmptyListHaveNoTargets) {
  EXPECT_TRUE(ParseFileSd("", "peers.json").empty());
  EXPECT_TRUE(ParseFileSd("[]", "peers.json").empty());
  EXPECT_TRUE(ParseFileSd(R"([{"targets": []}])", "peers.json").empty());
}

// Each refusal: the message names the source, the entry and the reason.
struct Refusal {
  const char* text;
  const char* where;
  const char* why;
};
void PrintTo(const Refusal& refusal, std::ostream* out) {
  *out << refusal.text;
}

class ParseFileSdRefuses : public ::testing::TestWithParam<Refusal> {};

TEST_P(ParseFileSdRefuses, NamingSourceAndEntry) {
  try {
    ParseFileSd(GetParam().text, "peers.json");
    FAIL() << "accepted: " << GetParam().text;
  } catch (const FileSdError& error) {
    const std::string message = error.what();
    EXPECT_THAT(message, HasSubstr("peers.json: "));
    EXPECT_THAT(message, HasSubstr(GetParam().where));
    EXPECT_THAT(message, HasSubstr(GetParam().why));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Entries, ParseFileSdRefuses,
    ::testing::Values(
        Refusal{R"({"targets": ["a:1"]})", "peers.json: not a list", "target groups"},
        Refusal{R"("a:1")", "peers.json: not a list", "target groups"},
        Refusal{R"([{"targets": ["a:1"]}, {"labels": {}}])", "[1].targets", "missing"},
        Refusal{R"([{"targets": "a:1"}])", "[0].targets", "not a list"},
        Refusal{R"([["a:1"]])", "[0]", "a group must be a map"},
        Refusal{R"([{"targets": ["a:1"], "label": {"rails": "rail0"}}])", "[0]",
                "unknown key \"label\""},
        Refusal{R"([{"targets": ["a:1", "b"]}])", "[0].targets[1]", "has no port"},
        Refusal{R"([{"targets": ["fd00::1"]}])", "[0].targets[0]", "has no port"},
        Refusal{R"([{"targets": ["a:0"]}])", "[0].targets[0]", "invalid port"},
        Refusal{R"([{"targets": ["a:99999"]}])", "[0].targets[0]", "invalid port"},
        Refusal{R"([{"targets": ["a:http"]}])", "[0].targets[0]", "invalid port"},
        Refusal{R"([{"targets": [":9841"]}])", "[0].targets[0]", "missing host"},
        Refusal{R"([{"targets": ["[fd00::1:9841"]}])", "[0].targets[0]", "missing ']'"},
        Refusal{R"([{"targets": ["http://a:1"]}])", "[0].targets[0]", "not host:port"},
        Refusal{R"([{"targets": ["a b:1"]}])", "[0].targets[0]", "not host:port"},
        Refusal{R"([{"targets": [["a:1"]]}])", "[0].targets[0]", "must be a \"host:port\""},
        Refusal{R"([{"targets": ["a:1"], "labels": ["rails"]}])", "[0].labels", "must be a map"},
        Refusal{R"([{"targets": ["a:1"], "labels": {"1rails": "x"}}])", "[0].labels",
                "\"1rails\" is not a label name"},
        Refusal{R"([{"targets": ["a:1"], "labels": {"rail-s": "x"}}])", "[0].labels",
                "\"rail-s\" is not a label name"},
        Refusal{R"([{"targets": ["a:1"], "labels": {"rails": ["rail0"]}}])", "[0].labels.rails",
                "must be a string"},
        Refusal{R"([{"targets": ["a:1"], "labels": {"rails": null}}])", "[0].labels.rails",
                "must be a string"},
        Refusal{R"([{"targets": ["a:1"])", "peers.json: line", ""}));

}  // namespace
}  // namespace rail::fleet
