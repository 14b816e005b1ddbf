// The landing page at "/": what the agent is, where the metrics are, and the rails it sees.
#include <sstream>

#include "rail/agent.h"
#include "rail/build_info.h"
#include "rail/collector_set.h"
#include "rail/rails.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/infiniband.h"

namespace rail {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string Agent::RenderLandingPage() const {
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions read;
  read.counters = false;
  read.hw_counters = false;
  read.device_filter = device_filter_;
  const auto devices = sysfs::ReadInfiniband(*sys_, read, errors);
  const auto rails = DiscoverRails(devices, config_);
  const auto& build = GetBuildInfo();

  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<title>rail_exporter</title><style>"
       << "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
       << "td,th{border:1px solid #999;padding:.3em .6em;text-align:left}"
       << ".down{color:#b00}</style></head><body>\n"
       << "<h1>rail_exporter</h1>\n<p>Version " << Escape(build.version) << " ("
       << Escape(build.revision) << "), UCX " << Escape(build.ucx_version) << ".</p>\n"
       << "<p><a href=\"" << Escape(options_.web.telemetry_path) << "\">Metrics</a></p>\n";
  if (devices.empty()) {
    html << "<p>No RDMA device found under " << Escape(options_.sysfs_root)
         << "/class/infiniband: netdev and bond inventory only.</p>\n";
  }
  html << "<h2>Rails</h2>\n<table id=\"rails\"><tr><th>rail</th><th>device</th><th>port</th>"
       << "<th>netdev</th><th>link layer</th><th>IPv4</th><th>state</th></tr>\n";
  for (const auto& rail : rails) {
    const bool up = rail.device.empty() || rail.active;
    html << "<tr class=\"rail\"><td>" << Escape(rail.name) << "</td><td>" << Escape(rail.device)
         << "</td><td>" << (rail.port ? std::to_string(rail.port) : "") << "</td><td>"
         << Escape(rail.netdev) << "</td><td>" << Escape(rail.link_layer) << "</td><td>"
         << Escape(rail.ipv4) << "</td><td class=\"" << (up ? "up" : "down") << "\">"
         << (rail.device.empty() ? "netdev"
                                 : (!rail.present ? "missing" : (up ? "active" : "down")))
         << "</td></tr>\n";
  }
  html << "</table>\n</body></html>\n";
  return html.str();
}

}  // namespace rail
