// What the driver's output can get wrong, through the ethtool and health collectors: a name listed
// twice, lines that do not parse, a dump cut short, no statistics at all. Each dump is the real
// bnxt_en dump of tests/fixtures/ethtool/real/ with the damage done by the test, read for the
// bnxt-roce fixture's netdev; the exposition stays valid and the damage is counted and visible.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "rail/collectors/collector_set.h"
#include "rail/nic/ethtool.h"
#include "support/fake_clock.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using namespace std::chrono_literals;

const std::string kBnxtTree = std::string(RAIL_FIXTURES) + "/bnxt-roce";
const std::string kNetdev = "ens1f0np0";

std::string RealDump() {
  std::ifstream file(std::string(RAIL_FIXTURES) + "/ethtool/real/bnxt_en-k66-ethq");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// `text` as the driver's answer, parsed as a recorded dump is.
class TextStatistics final : public nic::StatisticsSource {
 public:
  int Read(const std::string&, nic::EthtoolStatistics* out) const override {
    *out = nic::ParseEthtoolDump(text);
    return out->names.empty() && out->unparsable == 0 ? EOPNOTSUPP : 0;
  }
  std::optional<std::string> Driver(const std::string&) const override { return "bnxt_en"; }
  std::string text;
};

class EthtoolBadInputTest : public ::testing::Test {
 protected:
  EthtoolBadInputTest() : sys_(kBnxtTree + "/sys"), proc_(kBnxtTree + "/proc") {
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &proc_;
    sources_.inventory.nic_statistics = &statistics_;
    sources_.health.clock = &clock_;
  }

  double Errors(const std::vector<prometheus::MetricFamily>& families, const char* reason) {
    return test::Sample(families, "rail_nic_statistics_errors_total",
                        {{"netdev", kNetdev}, {"reason", reason}})
        .value_or(-1);
  }

  sysfs::RootedFilesystem sys_;
  sysfs::RootedFilesystem proc_;
  TextStatistics statistics_;
  test::FakeClock clock_;
  Sources sources_;
};

// Every sample line's series once: what Prometheus rejects a scrape for.
void ExpectEverySeriesOnce(const std::vector<prometheus::MetricFamily>& families) {
  const std::string text = prometheus::TextSerializer().Serialize(families);
  std::set<std::string> series;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << line;
  }
}

TEST_F(EthtoolBadInputTest, ANameListedTwiceGivesOneSeriesAndACountedError) {
  const std::string dump = RealDump();
  const auto at = dump.find("     rx_stat_discard: ");
  ASSERT_NE(at, std::string::npos);
  statistics_.text = dump + "     rx_stat_discard: 999999\n";
  const CollectorSet set(sources_, {"ethtool", "health"});
  const auto families = set.Collect();
  ExpectEverySeriesOnce(families);
  EXPECT_EQ(test::Sample(families, "rail_nic_receive_discards_total",
                         {{"netdev", kNetdev}, {"stage", "port"}}),
            49337)
      << "the first occurrence is kept";
  EXPECT_EQ(Errors(families, "duplicate_name"), 1);
  EXPECT_EQ(Errors(families, "unparsable_line"), 0);
  EXPECT_EQ(test::Sample(families, "rail_nic_statistics_available", {{"netdev", kNetdev}}), 1);
  EXPECT_EQ(Errors(set.Collect(), "duplicate_name"), 2) << "counted at every read";
}

TEST_F(EthtoolBadInputTest, GarbageLinesAreCountedAndTheRestIsRead) {
  std::string dump = RealDump();
  dump.insert(dump.find("     rx_stat_discard: "),
              "     rx_stat_discard 12\n\x01\x02 garbage\n     rx_fcs_err_frames: lots\n");
  statistics_.text = dump;
  const CollectorSet set(sources_, {"ethtool"});
  const auto families = set.Collect();
  ExpectEverySeriesOnce(families);
  EXPECT_EQ(Errors(families, "unparsable_line"), 3);
  EXPECT_EQ(test::Sample(families, "rail_nic_receive_discards_total", {{"stage", "port"}}), 49337);
}

TEST_F(EthtoolBadInputTest, ATruncatedDumpKeepsWhatItHolds) {
  const std::string dump = RealDump();
  statistics_.text = dump.substr(0, dump.find("     rx_stat_discard: ") + 12);
  const CollectorSet set(sources_, {"ethtool"});
  const auto families = set.Collect();
  ExpectEverySeriesOnce(families);
  EXPECT_EQ(Errors(families, "unparsable_line"), 1);
  EXPECT_FALSE(test::Sample(families, "rail_nic_receive_discards_total", {{"stage", "port"}}));
  EXPECT_TRUE(test::Sample(families, "rail_nic_global_pause_frames_total", {{"direction", "rx"}}));
}

TEST_F(EthtoolBadInputTest, NoStatisticsIsAStateAndNoFabricVerdict) {
  for (const char* text : {"", "no stats available\n"}) {
    statistics_.text = text;
    const CollectorSet set(sources_, {"ethtool", "health"});
    set.Collect();
    clock_.Advance(30s);
    const auto families = set.Collect();
    ExpectEverySeriesOnce(families);
    EXPECT_EQ(test::Sample(families, "rail_nic_statistics_available", {{"netdev", kNetdev}}), 0)
        << "'" << text << "'";
    for (const char* check : {"port_discards", "link_errors", "pfc_pause", "global_pause"}) {
      EXPECT_FALSE(test::Sample(families, "rail_check_ok", {{"check", check}}))
          << check << " judged a NIC that lists no statistics";
    }
    EXPECT_EQ(Errors(families, "unparsable_line"), 0);
  }
}

}  // namespace
}  // namespace rail::collectors
