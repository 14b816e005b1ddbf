// The fake libcuda.so.1 (tests/fake_cuda/) from a test: its path, and a scoped configuration
// (RAIL_FAKE_CUDA_CONFIG) and call log (RAIL_FAKE_CUDA_LOG) in a directory of their own.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace rail::testing {

#ifdef RAIL_FAKE_CUDA_LIBRARY
inline constexpr const char* kFakeCudaLibrary = RAIL_FAKE_CUDA_LIBRARY;
// The same driver as one before CUDA 12.5 exports it: cuGetProcAddress without _v2.
inline constexpr const char* kFakeCudaBefore125Library = RAIL_FAKE_CUDA_BEFORE_12_5_LIBRARY;
#else
inline constexpr const char* kFakeCudaLibrary = nullptr;
inline constexpr const char* kFakeCudaBefore125Library = nullptr;
#endif
inline constexpr const char* kNoFakeCuda =
    "the fake CUDA driver needs the CUDA headers (/usr/local/cuda/include/cuda.h); not built";

class FakeCuda {
 public:
  explicit FakeCuda(const nlohmann::json& config) {
    char pattern[] = "/tmp/rail_fake_cuda.XXXXXX";
    dir_ = mkdtemp(pattern);
    config_path_ = dir_ + "/config.json";
    log_path_ = dir_ + "/calls.log";
    std::ofstream(config_path_) << config.dump();
    setenv("RAIL_FAKE_CUDA_CONFIG", config_path_.c_str(), 1);
    setenv("RAIL_FAKE_CUDA_LOG", log_path_.c_str(), 1);
  }
  ~FakeCuda() {
    unsetenv("RAIL_FAKE_CUDA_CONFIG");
    unsetenv("RAIL_FAKE_CUDA_LOG");
    std::filesystem::remove_all(dir_);
  }
  FakeCuda(const FakeCuda&) = delete;
  FakeCuda& operator=(const FakeCuda&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& log_path() const { return log_path_; }
  // The pids that made `call`, one per line of the log.
  std::vector<long> CallersOf(const std::string& call) const {
    std::vector<long> pids;
    std::ifstream log(log_path_);
    long pid = 0;
    std::string name;
    while (log >> pid >> name) {
      if (name == call) pids.push_back(pid);
    }
    return pids;
  }

  static nlohmann::json Device(const std::string& pci_bus_id, const std::string& name) {
    return {{"pci_bus_id", pci_bus_id}, {"name", name},    {"integrated", false},
            {"gpu_direct_rdma", true},  {"dma_buf", true}, {"gpu_direct_rdma_with_vmm", true}};
  }

 private:
  std::string dir_;
  std::string config_path_;
  std::string log_path_;
};

}  // namespace rail::testing
