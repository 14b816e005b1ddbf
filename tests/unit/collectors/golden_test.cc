// The whole scrape of each fixture tree, byte for byte, against tests/golden/. Set
// RAIL_UPDATE_GOLDEN=1 to rewrite the golden file after an intended change, then review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "rail/nic/dcb.h"
#include "rail/nic/ethtool.h"
#include "rail/sysfs/filesystem.h"
#include "support/fixture_paths.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using rail::test::kFixtures;

// Collector durations change from run to run; everything else in the scrape is deterministic.
std::string MaskDurations(const std::string& text) {
  static const std::regex kDuration(
      R"(^(rail_exporter_scrape_collector_duration_seconds\{[^}]*\}) .*$)", std::regex::multiline);
  return std::regex_replace(text, kDuration, "$1 <duration>");
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void ExpectGolden(const std::string& tree, const std::string& golden_name) {
  sysfs::RootedFilesystem sys(kFixtures + "/" + tree + "/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/" + tree + "/proc");
  Sources sources;
  sources.inventory.sys = &sys;
  sources.inventory.proc = &proc;
  // `ethtool -S` from the tree's recorded dumps (absent ones read as no statistics), never from
  // this machine's kernel.
  sysfs::RootedFilesystem dumps(kFixtures + "/" + tree + "/ethtool");
  nic::DumpStatisticsSource statistics(dumps);
  sources.inventory.nic_statistics = &statistics;
  // DCB answers recorded for the tree's netdevs (a tree without them: no_such_device for each).
  const nic::RecordedDcbReader dcb(kFixtures + "/" + tree + "/dcb");
  sources.inventory.dcb = &dcb;
  // The exporter collector reports this process (RSS, CPU, revision): not reproducible.
  std::vector<std::string> collectors;
  for (const auto& name : test::AllCollectorNames()) {
    if (name != "exporter") collectors.push_back(name);
  }
  CollectorSet set(sources, collectors);
  const std::string actual = MaskDurations(test::Serialize(set.Collect()));

  const std::string golden_path = kFixtures + "/../golden/" + golden_name;
  if (std::getenv("RAIL_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path) << actual;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  const std::string expected = ReadFile(golden_path);
  ASSERT_FALSE(expected.empty()) << golden_path << " is missing; run with RAIL_UPDATE_GOLDEN=1";
  // Report the first differing line only: the whole scrape is hundreds of lines.
  std::istringstream actual_lines(actual);
  std::istringstream expected_lines(expected);
  std::string actual_line;
  std::string expected_line;
  for (int line = 1;; ++line) {
    const bool more_actual = static_cast<bool>(std::getline(actual_lines, actual_line));
    const bool more_expected = static_cast<bool>(std::getline(expected_lines, expected_line));
    if (!more_actual && !more_expected) break;
    if (!more_actual || !more_expected || actual_line != expected_line) {
      ADD_FAILURE() << "scrape of " << tree << " differs from " << golden_path << " at line "
                    << line << "\n  expected: " << (more_expected ? expected_line : "<end>")
                    << "\n  actual:   " << (more_actual ? actual_line : "<end>");
      break;
    }
  }
}

TEST(GoldenTest, SparkDualRailScrape) {
  ExpectGolden("spark-dual-rail", "spark-dual-rail.prom");
}

TEST(GoldenTest, Hgx8GpuScrape) {
  ExpectGolden("hgx-8gpu", "hgx-8gpu.prom");
}

// Soft-RoCE: no PMA, the netdevs' statistics stand in for the ports' byte counters.
TEST(GoldenTest, RxeDualRailScrape) {
  ExpectGolden("rxe-dual-rail", "rxe-dual-rail.prom");
}

TEST(GoldenTest, BnxtRoceScrape) {
  ExpectGolden("bnxt-roce", "bnxt-roce.prom");
}

TEST(GoldenTest, BondedRoceScrape) {
  ExpectGolden("bonded-roce", "bonded-roce.prom");
}

}  // namespace
}  // namespace rail::collectors
