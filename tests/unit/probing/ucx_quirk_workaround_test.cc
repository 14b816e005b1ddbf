// ucx_device_quirk_workaround: which settings the probe worker gets, from the rails' devices and
// the UCX version the worker reports (a stand-in executable answers --ucx-version here).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probing {
namespace {

// An executable that prints `version` for --ucx-version, as rail_exporter_probe_worker does.
class StandInWorker {
 public:
  explicit StandInWorker(const std::string& version) {
    char directory[] = "/tmp/rail-quirk-XXXXXX";
    directory_ = ::mkdtemp(directory) ? directory : "";
    path_ = directory_ + "/rail_exporter_probe_worker";
    std::ofstream(path_) << "#!/bin/sh\necho " << version << "\n";
    ::chmod(path_.c_str(), 0755);
  }
  ~StandInWorker() {
    ::unlink(path_.c_str());
    ::rmdir(directory_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string directory_;
  std::string path_;
};

ProbingConfig Workaround(bool on) {
  ProbingConfig config;
  config.ucx_device_quirk_workaround = on;
  return config;
}

std::vector<std::string> SettingsFor(const std::string& tree, const ProbingConfig& config,
                                     const std::string& ucx_version) {
  const StandInWorker worker(ucx_version);
  const sysfs::RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/" + tree + "/sys");
  return UcxQuirkWorkaround(sys, config, {}, worker.path());
}

TEST(UcxQuirkWorkaroundTest, SoftRoceWithUcx113GetsTheSettingWhenAskedFor) {
  EXPECT_EQ(SettingsFor("rxe-dual-rail", Workaround(true), "1.13.1"),
            std::vector<std::string>{"UCX_UD_VERBS_ETH_DGID_CHECK=n"});
}

TEST(UcxQuirkWorkaroundTest, NothingWhenNotAskedFor) {
  EXPECT_TRUE(SettingsFor("rxe-dual-rail", Workaround(false), "1.13.1").empty());
}

TEST(UcxQuirkWorkaroundTest, NothingWithoutAQuirk) {
  EXPECT_TRUE(SettingsFor("rxe-dual-rail", Workaround(true), "1.16.0").empty());
  EXPECT_TRUE(SettingsFor("spark-dual-rail", Workaround(true), "1.13.1").empty());
}

}  // namespace
}  // namespace rail::probing
