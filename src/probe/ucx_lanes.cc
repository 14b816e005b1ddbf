#include "rail/probe/ucx_lanes.h"

#include <algorithm>
#include <charconv>

namespace rail::probe {

namespace {

constexpr std::string_view kSpaces = " \t\r";

std::string_view TrimSpaces(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpaces) - begin + 1);
}

// Reads a lane line from left to right.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : rest_(text) {}

  void SkipSpaces() {
    rest_ = rest_.substr(std::min(rest_.find_first_not_of(kSpaces), rest_.size()));
  }

  bool Consume(std::string_view literal) {
    if (!rest_.starts_with(literal)) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }

  std::optional<unsigned> Number() {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), value);
    if (error != std::errc() || end == rest_.data()) return std::nullopt;
    rest_.remove_prefix(static_cast<std::size_t>(end - rest_.data()));
    return value;
  }

  // The next whitespace-separated token; empty at the end.
  std::string_view Token() {
    SkipSpaces();
    const std::size_t end = std::min(rest_.find_first_of(kSpaces), rest_.size());
    const std::string_view token = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return token;
  }

 private:
  std::string_view rest_;
};

// "tcp/ra0.0" or "rc_mlx5/mlx5_0:1.0" into transport, device and path index.
bool SplitResource(std::string_view resource, const EpInfoParseOptions& options, UcxLane* lane) {
  const std::size_t slash = resource.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == resource.size()) return false;
  lane->transport = std::string(resource.substr(0, slash));
  std::string_view device = resource.substr(slash + 1);
  const std::size_t dot = device.rfind('.');
  if (options.device_has_path_index && dot != std::string_view::npos && dot > 0) {
    const std::string_view digits = device.substr(dot + 1);
    unsigned path = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), path);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty()) {
      lane->path_index = path;
      device = device.substr(0, dot);
    }
  }
  lane->device = std::string(device);
  return true;
}

// "md[0]/tcp/sysdev[255]", "md[2]/ib" or "addr[1].md[2]/ib" into the component name.
std::string RemoteComponent(std::string_view remote) {
  const std::size_t slash = remote.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view after = remote.substr(slash + 1);
  return std::string(after.substr(0, after.find('/')));
}

// Parses what follows "lane[" on a lane line; returns an error text or nullopt.
std::optional<std::string> ParseLane(std::string_view text, const EpInfoParseOptions& options,
                                     UcxLane* lane) {
  Cursor cursor(text);
  const std::optional<unsigned> index = cursor.Number();
  if (!index || !cursor.Consume("]:")) return "expected lane[N]:";
  lane->index = static_cast<int>(*index);
  cursor.SkipSpaces();

  if (cursor.Consume("cm ")) {
    lane->connection_manager = true;
    lane->transport = std::string(cursor.Token());
    if (lane->transport.empty()) return "expected the name of the connection manager after cm";
    return std::nullopt;
  }

  const std::optional<unsigned> resource = cursor.Number();
  if (!resource || !cursor.Consume(":")) return "expected a resource index and ':'";
  lane->resource_index = static_cast<int>(*resource);
  if (!SplitResource(cursor.Token(), options, lane)) return "expected transport/device";

  cursor.SkipSpaces();
  const bool has_md = cursor.Consume("md[");
  const std::optional<unsigned> memory_domain = has_md ? cursor.Number() : std::nullopt;
  if (!memory_domain || !cursor.Consume("]")) return "expected md[N] after the device";
  lane->memory_domain = static_cast<int>(*memory_domain);

  // Markers before the arrow ("<proxy>" in older releases) say nothing about the transport.
  std::string_view token;
  do {
    token = cursor.Token();
  } while (!token.empty() && token != "->");
  if (token.empty()) return "expected '->' and the remote side";

  lane->remote_component = RemoteComponent(cursor.Token());
  for (token = cursor.Token(); !token.empty(); token = cursor.Token()) {
    lane->roles.emplace_back(token);
  }
  return std::nullopt;
}

}  // namespace

bool UcxLane::HasRole(std::string_view role) const {
  return std::any_of(roles.begin(), roles.end(), [role](const std::string& token) {
    const std::string_view name = std::string_view(token).substr(0, token.find_first_of("#{"));
    return name == role;
  });
}

std::optional<UcxEndpointInfo> ParseEpPrintInfo(std::string_view text, std::string* error,
                                                const EpInfoParseOptions& options) {
  UcxEndpointInfo info;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = std::min(text.find('\n'), text.size());
    const std::string_view raw_line = text.substr(0, newline);
    text.remove_prefix(std::min(newline + 1, text.size()));

    std::string_view line = raw_line;
    line.remove_prefix(std::min(line.find_first_not_of("# \t"), line.size()));
    if (line.starts_with("peer:")) {
      info.peer = std::string(TrimSpaces(line.substr(5)));
    } else if (line.starts_with("lane[")) {
      UcxLane lane;
      if (auto problem = ParseLane(line.substr(5), options, &lane)) {
        *error = "line " + std::to_string(line_number) + ": lane line not understood (" + *problem +
                 "): " + std::string(TrimSpaces(raw_line));
        return std::nullopt;
      }
      info.lanes.push_back(std::move(lane));
    }
  }
  if (info.lanes.empty()) {
    *error =
        "no lane lines found: not the output of ucp_ep_print_info, or the endpoint has no lanes";
    return std::nullopt;
  }
  return info;
}

std::vector<std::pair<std::string, std::string>> TransportDevices(const UcxEndpointInfo& info) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const UcxLane& lane : info.lanes) {
    if (lane.connection_manager) continue;
    std::pair<std::string, std::string> pair{lane.transport, lane.device};
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
      pairs.push_back(std::move(pair));
  }
  return pairs;
}

}  // namespace rail::probe
