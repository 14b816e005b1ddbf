// Recorded DCB answers (tests/fixtures/<tree>/dcb/<netdev>.nlmsg), read through the parser the
// live answer takes.
#include <fstream>
#include <iterator>
#include <vector>

#include "rail/nic/dcb.h"

namespace rail::nic {

DcbConfig RecordedDcbReader::Read(const std::string& netdev) const {
  std::ifstream file(folder_ + "/" + netdev + ".nlmsg", std::ios::binary);
  if (!file) {
    DcbConfig config;
    config.state = DcbState::kNoSuchDevice;
    config.error = "no recorded answer for " + netdev;
    return config;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  return ParseDcbAnswer(std::as_bytes(std::span(bytes)));
}

}  // namespace rail::nic
