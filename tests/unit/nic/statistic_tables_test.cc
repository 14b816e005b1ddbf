// The allow-lists against the drivers' own names: data/nic-statistics/<driver>.tsv, parsed from the
// kernel's sources (scripts/nic-statistics-tables). Every name the agent maps, every RDMA counter
// it judges and every name of the recorded dumps must be one the driver emits, so that no check
// waits on a name that exists only in documentation or in our picture of the driver.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "rail/nic/ethtool.h"
#include "rail/nic/fabric_counters.h"
#include "rail/nic/rdma_counters.h"
#include "support/fixture_paths.h"

namespace rail::nic {
namespace {

const std::string kTables = std::string(RAIL_FIXTURES) + "/../../data/nic-statistics/";
using rail::test::kEthtoolDumps;

// A table's names, every run of digits generalised as the agent generalises a statistic's.
std::set<std::string> TableNames(const std::string& driver) {
  std::ifstream file(kTables + driver + ".tsv");
  EXPECT_TRUE(file) << "no table for " << driver;
  std::set<std::string> names;
  std::vector<unsigned> numbers;
  std::string line;
  bool header = true;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      EXPECT_EQ(line.substr(0, line.find('\t')), "name");
      header = false;
      continue;
    }
    names.insert(GeneraliseName(line.substr(0, line.find('\t')), &numbers));
  }
  EXPECT_GT(names.size(), 10u) << driver;
  return names;
}

TEST(StatisticTablesTest, EveryAllowListedNameIsOneTheDriverEmits) {
  std::vector<unsigned> numbers;
  for (const char* driver : {"mlx5_core", "bnxt_en", "ice"}) {
    const auto table = TableNames(driver);
    const auto allowed = AllowListNames(driver);
    EXPECT_FALSE(allowed.empty()) << driver;
    for (const auto name : allowed) {
      EXPECT_TRUE(table.contains(GeneraliseName(name, &numbers))) << driver << " emits no " << name;
    }
  }
}

TEST(StatisticTablesTest, TheDocumentedRxBitsPhyIsEmittedByNoDriver) {
  std::vector<unsigned> numbers;
  EXPECT_FALSE(TableNames("mlx5_core").contains("rx_bits_phy"));
  for (const auto name : AllowListNames("mlx5_core")) EXPECT_NE(name, "rx_bits_phy");
}

TEST(StatisticTablesTest, EveryRdmaCounterJudgedIsNamedSoByTheDriversItNames) {
  const std::map<std::string, std::set<std::string>> tables = {
      {"mlx5_ib", TableNames("mlx5_ib")},
      {"bnxt_re", TableNames("bnxt_re")},
      {"irdma", TableNames("irdma")},
      {"rdma_rxe", TableNames("rdma_rxe")}};
  for (const auto& counter : TransportCounters()) {
    std::istringstream drivers{std::string(counter.drivers)};
    std::string driver;
    int named = 0;
    while (drivers >> driver) {
      const auto table = tables.find(driver);
      if (table == tables.end()) continue;  // "(6.11", "on)": words about the version
      ++named;
      EXPECT_TRUE(table->second.contains(std::string(counter.file)))
          << driver << " has no hw_counters/" << counter.file;
    }
    EXPECT_GT(named, 0) << counter.file << " names no driver";
  }
  EXPECT_TRUE(tables.at("mlx5_ib").contains(std::string(kRdmaReceiveNotPosted)));
  for (const auto file : kDcqcnCounters) {
    EXPECT_TRUE(tables.at("mlx5_ib").contains(std::string(file))) << file;
  }
}

// Every name of a recorded dump, against its driver's table.
void ExpectEveryNameInTable(const std::string& dump) {
  std::ifstream file(kEthtoolDumps + "/" + dump);
  std::stringstream text;
  text << file.rdbuf();
  const auto statistics = ParseEthtoolDump(text.str());
  ASSERT_GT(statistics.names.size(), 100u) << dump;
  EXPECT_EQ(statistics.unparsable, 0u) << dump;
  std::ifstream info_file(kEthtoolDumps + "/" + dump + ".info");
  std::stringstream info;
  info << info_file.rdbuf();
  const auto driver = ParseDriverInfo(info.str());
  ASSERT_TRUE(driver) << dump;
  const auto table = TableNames(*driver);
  std::vector<unsigned> numbers;
  for (const auto& name : statistics.names) {
    EXPECT_TRUE(table.contains(GeneraliseName(name, &numbers)))
        << dump << ": " << *driver << " emits no " << name;
  }
}

TEST(StatisticTablesTest, EveryNameOfTheMadeDumpsIsInTheTables) {
  for (const char* dump : {"connectx7-mlx5-pfc3", "connectx7-mlx5-pfc5", "bnxt_en"}) {
    ExpectEveryNameInTable(dump);
  }
}

// The real dumps of kernels the tables cover (6.6 and later bnxt_en, an E810 of 2023); the two
// mlx5 dumps come from 4.15 and older and carry names those kernels had (their README).
TEST(StatisticTablesTest, EveryNameOfTheRealDumpsOfCoveredKernelsIsInTheTables) {
  for (const char* dump : {"real/bnxt_en-k66-ethq", "real/ice-2023-ethq"}) {
    ExpectEveryNameInTable(dump);
  }
}

}  // namespace
}  // namespace rail::nic
