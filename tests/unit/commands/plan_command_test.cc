#include "rail/commands/plan_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rail::commands {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A temporary file removed with the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("plan_command_test." + std::to_string(getpid()) + "." + std::to_string(counter_++)))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

const std::vector<fleet::PlannedPair> kPlan = {
    {"10.0.0.2:9841", "rail0"}, {"10.0.0.3:9841", "rail0"}, {"10.0.0.4:9841", "rail1"}};

// A configuration with a fleet section whose probes[] entries (none naming peers) are `kinds`,
// each over `rails` (empty: every rail).
agent::AgentConfig FleetConfigWith(const std::vector<std::string>& kinds,
                            const std::vector<std::string>& rails = {}) {
  agent::AgentConfig config;
  config.probing.fleet = probing::FleetConfig{};
  for (const auto& kind : kinds) {
    probing::ProbeConfig entry;
    entry.kind = kind;
    entry.rails = rails;
    config.probing.probes.push_back(entry);
  }
  return config;
}

TEST(ProbesOfPlanTest, SingleRailKindsProbeEveryPlannedPair) {
  const auto probes = ProbesOfPlan(FleetConfigWith({"ucx_rtt"}), {"rail0", "rail1"}, kPlan);
  EXPECT_THAT(probes, ElementsAre(PlanCommandProbe{"10.0.0.2:9841", "rail0", "ucx_rtt"},
                                  PlanCommandProbe{"10.0.0.3:9841", "rail0", "ucx_rtt"},
                                  PlanCommandProbe{"10.0.0.4:9841", "rail1", "ucx_rtt"}));
}

TEST(ProbesOfPlanTest, MultiRailKindsRunOverAllRailsWithTheFirstRailsPeers) {
  const auto probes =
      ProbesOfPlan(FleetConfigWith({"multirail_capacity"}), {"rail0", "rail1"}, kPlan);
  EXPECT_THAT(probes,
              ElementsAre(PlanCommandProbe{"10.0.0.2:9841", "rail0+rail1", "multirail_capacity"},
                          PlanCommandProbe{"10.0.0.3:9841", "rail0+rail1", "multirail_capacity"}));
}

TEST(ProbesOfPlanTest, AnEntrysRailsNarrowItsProbes) {
  EXPECT_THAT(
      ProbesOfPlan(FleetConfigWith({"ucx_throughput"}, {"rail1"}), {"rail0", "rail1"}, kPlan),
      ElementsAre(PlanCommandProbe{"10.0.0.4:9841", "rail1", "ucx_throughput"}));
  EXPECT_THROW(
      ProbesOfPlan(FleetConfigWith({"ucx_throughput"}, {"rail7"}), {"rail0", "rail1"}, kPlan),
      agent::ConfigError);
}

TEST(ProbesOfPlanTest, EntriesOfOneKindAreListedOnce) {
  EXPECT_THAT(ProbesOfPlan(FleetConfigWith({"ucx_rtt", "ucx_rtt"}), {"rail0", "rail1"}, kPlan),
              SizeIs(3));
}

TEST(ProbesOfPlanTest, EntriesNamingPeersAreNotThePlans) {
  auto config = FleetConfigWith({"ucx_rtt"});
  config.probing.peers.push_back({"b", "10.0.0.9:9841"});
  config.probing.probes.front().peers = {"b"};
  EXPECT_THAT(ProbesOfPlan(config, {"rail0", "rail1"}, kPlan), IsEmpty());
}

std::string PeersFile(int hosts) {
  nlohmann::json targets = nlohmann::json::array();
  for (int host = 1; host <= hosts; ++host) {
    targets.push_back("10.0.0." + std::to_string(host) + ":9841");
  }
  nlohmann::json groups = nlohmann::json::array();
  groups.push_back({{"targets", targets}});
  groups.push_back({{"targets", {"10.0.1.1:9841"}}, {"labels", {{"rails", "rail1"}}}});
  return groups.dump();
}

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

Outcome RunPlan(const PlanCommandOptions& options) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunPlanCommand(options, out, err);
  return {code, out.str(), err.str()};
}

PlanCommandOptions Options(const std::string& peers_file, const std::string& self) {
  PlanCommandOptions options;
  options.peers_file = peers_file;
  options.self = self;
  options.rails = {"rail0", "rail1"};
  options.epoch = 7;
  options.output = "json";
  return options;
}

TEST(PlanCommandTest, PrintsTheHostsPlanAsJson) {
  const TempFile peers(PeersFile(10));
  const auto outcome = RunPlan(Options(peers.path(), "10.0.0.1:9841"));
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_THAT(outcome.err, IsEmpty());
  const auto json = nlohmann::json::parse(outcome.out);
  EXPECT_EQ(json["self"], "10.0.0.1:9841");
  EXPECT_EQ(json["epoch"], 7);
  // 3 peers on each of 2 rails, 2 default kinds.
  ASSERT_THAT(json["probes"], SizeIs(12));
  for (const auto& probe : json["probes"]) {
    EXPECT_NE(probe["peer"], "10.0.0.1:9841");
    const std::string kind = probe["kind"];
    EXPECT_TRUE(kind == "ucx_rtt" || kind == "ucx_throughput") << kind;
  }
}

TEST(PlanCommandTest, TextAndJsonListTheSameProbesAndRepeatAlike) {
  const TempFile peers(PeersFile(10));
  auto options = Options(peers.path(), "10.0.0.4:9841");
  options.kinds = {"ucx_rtt"};
  const auto json_outcome = RunPlan(options);
  EXPECT_EQ(RunPlan(options).out, json_outcome.out);
  options.output = "text";
  const auto text_outcome = RunPlan(options);
  ASSERT_EQ(text_outcome.code, 0) << text_outcome.err;
  std::string expected;
  const auto json = nlohmann::json::parse(json_outcome.out);
  ASSERT_THAT(json["probes"], SizeIs(6));
  for (const auto& probe : json["probes"]) {
    expected += probe["peer"].get<std::string>() + " " + probe["rail"].get<std::string>() + " " +
                probe["kind"].get<std::string>() + "\n";
  }
  EXPECT_EQ(text_outcome.out, expected);
}

TEST(PlanCommandTest, FlagsChangeThePlan) {
  const TempFile peers(PeersFile(30));
  auto options = Options(peers.path(), "10.0.0.5:9841");
  const auto base = RunPlan(options).out;
  options.epoch = 8;
  EXPECT_NE(RunPlan(options).out, base);
  options.epoch = 7;
  options.seed = 99;
  EXPECT_NE(RunPlan(options).out, base);
  options.seed.reset();
  options.peers_per_rail = 1;
  options.kinds = {"ucx_rtt"};
  EXPECT_THAT(nlohmann::json::parse(RunPlan(options).out)["probes"], SizeIs(2));
}

TEST(PlanCommandTest, HostOnOneRailPlansOnlyIt) {
  const TempFile peers(PeersFile(10));
  auto options = Options(peers.path(), "10.0.1.1:9841");
  options.rails = {"rail1"};
  const auto outcome = RunPlan(options);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  const auto json = nlohmann::json::parse(outcome.out);
  ASSERT_THAT(json["probes"], SizeIs(6));  // 3 peers, 2 kinds
  for (const auto& probe : json["probes"]) {
    EXPECT_EQ(probe["rail"], "rail1");
  }
}

TEST(PlanCommandTest, RefusesWhatItCannotPlanWithOneLine) {
  const TempFile peers(PeersFile(10));
  const TempFile broken("[{\"targets\": [\"no-port\"]}]");
  struct Case {
    std::string name;
    PlanCommandOptions options;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"missing file", Options("/nonexistent/peers.json", "10.0.0.1:9841"),
                   "/nonexistent/peers.json"});
  cases.push_back({"bad file", Options(broken.path(), "10.0.0.1:9841"), broken.path()});
  cases.push_back({"self not listed", Options(peers.path(), "10.9.9.9:9841"), "10.9.9.9:9841"});
  cases.push_back({"unknown rail", Options(peers.path(), "10.0.1.1:9841"), "rail0"});
  auto no_self = Options(peers.path(), "");
  no_self.self.reset();
  cases.push_back({"no self", no_self, "--self"});
  auto bad_kind = Options(peers.path(), "10.0.0.1:9841");
  bad_kind.kinds = {"ping"};
  cases.push_back({"unknown kind", bad_kind, "ping"});
  auto bad_output = Options(peers.path(), "10.0.0.1:9841");
  bad_output.output = "yaml";
  cases.push_back({"bad output", bad_output, "--output"});
  for (const auto& c : cases) {
    const auto outcome = RunPlan(c.options);
    EXPECT_EQ(outcome.code, 2) << c.name;
    EXPECT_THAT(outcome.out, IsEmpty()) << c.name;
    EXPECT_THAT(outcome.err, HasSubstr(c.message)) << c.name;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << c.name;
  }
}

TEST(PlanCommandTest, KindsComeFromTheConfigurationsEntriesWithoutPeers) {
  const TempFile peers(PeersFile(10));
  const TempFile config(R"(
fleet:
  peers_per_rail: 2
  seed: 5
  discovery:
    static: ["10.0.0.1:9841"]
probes:
  - kind: ucx_throughput
    rails: [rail1]
  - kind: tcp_rtt
)");
  auto options = Options(peers.path(), "10.0.0.1:9841");
  options.config_file = config.path();
  const auto outcome = RunPlan(options);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  const auto json = nlohmann::json::parse(outcome.out);
  // k = 2 from the configuration: 2 peers over rail1 for ucx_throughput, 2 on each rail for
  // tcp_rtt.
  ASSERT_THAT(json["probes"], SizeIs(6));
  std::map<std::string, int> by_kind;
  for (const auto& entry : json["probes"]) ++by_kind[entry["kind"].get<std::string>()];
  EXPECT_EQ(by_kind["ucx_throughput"], 2);
  EXPECT_EQ(by_kind["tcp_rtt"], 4);
  // The flags win over the configuration.
  options.peers_per_rail = 1;
  options.kinds = {"ucx_rtt"};
  EXPECT_THAT(nlohmann::json::parse(RunPlan(options).out)["probes"], SizeIs(2));
}

TEST(PlanCommandTest, DefaultRailsComeFromSysfs) {
  const TempFile peers(PeersFile(10));
  auto options = Options(peers.path(), "10.0.0.1:9841");
  options.rails.clear();
  options.sysfs_root = RAIL_FIXTURES "/spark-dual-rail/sys";
  const auto outcome = RunPlan(options);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_THAT(nlohmann::json::parse(outcome.out)["probes"], ::testing::Not(IsEmpty()));

  options.sysfs_root = "/nonexistent";
  const auto none = RunPlan(options);
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, HasSubstr("--rails"));
}

}  // namespace
}  // namespace rail::commands
