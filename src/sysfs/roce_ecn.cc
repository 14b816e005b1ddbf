#include "rail/sysfs/roce_ecn.h"

#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

std::optional<bool> ParseEnable(std::string_view text) {
  const auto value = ParseUnsigned(TrimValue(text));
  if (!value || *value > 1) return std::nullopt;
  return *value == 1;
}

void ReadEnables(const Filesystem& sys, const std::string& folder, ReadErrors& errors,
                 std::array<std::optional<bool>, 8>& out) {
  for (unsigned priority = 0; priority < out.size(); ++priority) {
    out[priority] = detail::ReadParsed(sys, folder + "/" + std::to_string(priority), errors,
                                       detail::Presence::kOptional, ParseEnable);
  }
}

}  // namespace

std::optional<RoceEcn> ReadRoceEcn(const Filesystem& sys, const std::string& netdev,
                                   ReadErrors& errors) {
  const std::string ecn = "class/net/" + netdev + "/ecn";
  if (!sys.IsDirectory(ecn)) return std::nullopt;
  RoceEcn out;
  ReadEnables(sys, ecn + "/roce_np/enable", errors, out.notification_point);  // roce_np/enable/<p>
  ReadEnables(sys, ecn + "/roce_rp/enable", errors, out.reaction_point);      // roce_rp/enable/<p>
  return out;
}

}  // namespace rail::sysfs
