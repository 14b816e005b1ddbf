#pragma once
// Where the fixture trees lie (RAIL_FIXTURES comes from tests/CMakeLists.txt), named once for
// every test file: a unity build compiles several test files as one translation unit, where two
// files' own copies of a constant would collide.
#include <string>

namespace rail::test {

inline const std::string kFixtures = RAIL_FIXTURES;
// The DGX Spark tree: two ConnectX-7 ports.
inline const std::string kSparkTree = kFixtures + "/spark-dual-rail";
inline const std::string kSparkSys = kSparkTree + "/sys";
// Real `ethtool -S` dumps (tests/fixtures/ethtool/README.md names their sources).
inline const std::string kEthtoolDumps = kFixtures + "/ethtool";

}  // namespace rail::test
