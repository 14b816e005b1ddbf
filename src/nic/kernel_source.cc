// Statistics through the SIOCETHTOOL ioctl on a datagram socket, as ethtool(8) reads them. Every
// command used here is one the kernel answers without CAP_NET_ADMIN.
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "rail/base/unique_fd.h"
#include "rail/nic/ethtool.h"

namespace rail::nic {
namespace {

// The SIOCETHTOOL ioctl's socket; its descriptor is owned by a base::UniqueFd.
class EthtoolSocket {
 public:
  EthtoolSocket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}

  // 0 or an errno value.
  int Command(const std::string& netdev, void* request) const {
    if (!fd_) return EBADF;
    if (netdev.empty() || netdev.size() >= IFNAMSIZ) return ENODEV;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
    ifr.ifr_data = static_cast<char*>(request);
    return ::ioctl(fd_.get(), SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
  }

 private:
  base::UniqueFd fd_;
};

// The kernel sizes its answers to GSTRINGS and GSTATS by the driver's count at that moment, not
// by the caller's: a count that grew since GSSET_INFO would overrun a buffer sized exactly.
// Buffers get room for this many more entries, and an answer of another length is read again.
constexpr std::uint32_t kHeadroom = 256;

// A request header followed by `entries` elements of `entry_size` bytes, 8-byte aligned.
std::vector<std::uint64_t> RequestBuffer(std::size_t header, std::size_t entries,
                                         std::size_t entry_size) {
  return std::vector<std::uint64_t>((header + entries * entry_size + 7) / 8 + 1, 0);
}

class KernelStatisticsSource final : public StatisticsSource {
 public:
  int Read(const std::string& netdev, EthtoolStatistics* out) const override {
    int error = EAGAIN;
    for (int attempt = 0; attempt < 2 && error == EAGAIN; ++attempt) error = ReadOnce(netdev, out);
    return error;
  }

  std::optional<PauseParameters> Pause(const std::string& netdev) const override {
    ethtool_pauseparam pause{};
    pause.cmd = ETHTOOL_GPAUSEPARAM;
    if (socket_.Command(netdev, &pause) != 0) return std::nullopt;
    return PauseParameters{pause.autoneg != 0, pause.rx_pause != 0, pause.tx_pause != 0};
  }

  // Private flags are at most 32, one bit each of ETHTOOL_GPFLAGS's answer.
  std::optional<std::vector<PrivateFlag>> PrivateFlags(const std::string& netdev) const override {
    std::uint32_t count = 0;
    const int error = Count(netdev, &count, ETH_SS_PRIV_FLAGS);
    if (error == EOPNOTSUPP) return std::vector<PrivateFlag>{};
    if (error != 0 || count > 32) return std::nullopt;
    std::vector<std::uint64_t> strings_buffer;
    if (Strings(netdev, ETH_SS_PRIV_FLAGS, count, &strings_buffer) != 0) return std::nullopt;
    const auto* strings = reinterpret_cast<const ethtool_gstrings*>(strings_buffer.data());
    ethtool_value bits{};
    bits.cmd = ETHTOOL_GPFLAGS;
    if (socket_.Command(netdev, &bits) != 0) return std::nullopt;
    std::vector<PrivateFlag> flags;
    const auto* names = reinterpret_cast<const char*>(strings->data);
    for (std::uint32_t i = 0; i < count; ++i) {
      const char* name = names + static_cast<std::size_t>(i) * ETH_GSTRING_LEN;
      flags.push_back(
          {std::string(name, strnlen(name, ETH_GSTRING_LEN)), (bits.data >> i & 1) != 0});
    }
    return flags;
  }

  std::optional<std::string> Driver(const std::string& netdev) const override {
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    if (socket_.Command(netdev, &info) != 0) return std::nullopt;
    const std::string driver(info.driver, strnlen(info.driver, sizeof(info.driver)));
    if (driver.empty()) return std::nullopt;
    return driver;
  }

 private:
  // How many strings the driver has in `set`; EOPNOTSUPP when none.
  int Count(const std::string& netdev, std::uint32_t* count,
            ethtool_stringset set = ETH_SS_STATS) const {
    auto buffer = RequestBuffer(sizeof(ethtool_sset_info), 1, sizeof(std::uint32_t));
    auto* info = reinterpret_cast<ethtool_sset_info*>(buffer.data());
    info->cmd = ETHTOOL_GSSET_INFO;
    info->sset_mask = 1ULL << set;
    if (const int error = socket_.Command(netdev, info); error != 0) return error;
    if ((info->sset_mask & (1ULL << set)) == 0) return EOPNOTSUPP;
    *count = info->data[0];
    return *count == 0 ? EOPNOTSUPP : 0;
  }

  // The `count` names of string set `set` (ETH_GSTRING_LEN bytes each) into `buffer`, an
  // ethtool_gstrings; 0, the errno, or EAGAIN when the set changed size since it was counted.
  int Strings(const std::string& netdev, std::uint32_t set, std::uint32_t count,
              std::vector<std::uint64_t>* buffer) const {
    *buffer = RequestBuffer(sizeof(ethtool_gstrings), count + kHeadroom, ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<ethtool_gstrings*>(buffer->data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = set;
    strings->len = count;
    if (const int error = socket_.Command(netdev, strings); error != 0) return error;
    return strings->len == count ? 0 : EAGAIN;
  }

  int ReadOnce(const std::string& netdev, EthtoolStatistics* out) const {
    std::uint32_t count = 0;
    if (const int error = Count(netdev, &count); error != 0) return error;
    std::vector<std::uint64_t> strings_buffer;
    if (const int error = Strings(netdev, ETH_SS_STATS, count, &strings_buffer); error != 0) {
      return error;
    }
    const auto* strings = reinterpret_cast<const ethtool_gstrings*>(strings_buffer.data());

    auto stats_buffer = RequestBuffer(sizeof(ethtool_stats), count + kHeadroom, sizeof(__u64));
    auto* stats = reinterpret_cast<ethtool_stats*>(stats_buffer.data());
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = count;
    if (const int error = socket_.Command(netdev, stats); error != 0) return error;
    if (stats->n_stats != count) return EAGAIN;

    *out = DecodeStatistics(
        std::string_view(reinterpret_cast<const char*>(strings->data),
                         static_cast<std::size_t>(count) * ETH_GSTRING_LEN),
        std::span<const std::uint64_t>(reinterpret_cast<const std::uint64_t*>(stats->data), count));
    return 0;
  }

  EthtoolSocket socket_;
};

}  // namespace

std::unique_ptr<StatisticsSource> MakeKernelStatisticsSource() {
  return std::make_unique<KernelStatisticsSource>();
}

const StatisticsSource& KernelStatistics() {
  static const auto kSource = MakeKernelStatisticsSource();
  return *kSource;
}

}  // namespace rail::nic
