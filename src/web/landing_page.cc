// Renders the landing page: plain HTML with an inline style sheet and a refresh header, so that
// it works from a browser on an air-gapped management network (no external assets, no script).
#include "rail/web/landing_page.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace rail::web {
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

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Bits per second as RDMA people read link speeds: Gbit/s.
std::string Throughput(const std::optional<double>& bytes_per_second) {
  if (!bytes_per_second) return "";
  return Format("%.2f Gbit/s", *bytes_per_second * 8 / 1e9);
}

// Round trips in the unit people quote them in: microseconds on a healthy rail, milliseconds
// when something (a TCP fallback, a congested or loaded host) is wrong.
std::string RoundTrip(const std::optional<double>& seconds) {
  if (!seconds) return "";
  if (*seconds >= 1e-3) return Format("%.2f ms", *seconds * 1e3);
  return Format("%.1f &micro;s", *seconds * 1e6);
}

std::string CheckText(const health::CheckResult& check) {
  std::string text = check.check;
  if (!check.peer.empty()) text += " (" + check.peer + ")";
  if (check.held_back) text += " held back";
  if (!check.reason.empty()) text += ": " + check.reason;
  return text;
}

// One failing check, with its fix (health::Remedy) when the page has it.
void RenderCheck(std::ostringstream& html, const health::CheckResult& check,
                 const std::vector<std::string>& fixes, std::size_t index) {
  html << "<li>" << Escape(CheckText(check));
  if (index < fixes.size() && !fixes[index].empty()) {
    html << "<br><span class=\"fix\">fix: <code>" << Escape(fixes[index]) << "</code></span>";
  }
  html << "</li>";
}

void RenderChecks(std::ostringstream& html, const std::vector<health::CheckResult>& failing,
                  const std::vector<std::string>& fixes) {
  if (failing.empty()) {
    html << "<td class=\"ok\">none</td>";
    return;
  }
  const bool any_failing = std::any_of(failing.begin(), failing.end(),
                                       [](const health::CheckResult& check) { return !check.ok; });
  html << "<td class=\"" << (any_failing ? "bad" : "unknown") << "\"><ul>";
  for (std::size_t i = 0; i < failing.size(); ++i) RenderCheck(html, failing[i], fixes, i);
  html << "</ul></td>";
}

void RenderGpus(std::ostringstream& html, const std::vector<LandingGpuRow>& gpus) {
  if (gpus.empty()) return;
  html << "<h2>GPUs</h2>\n<table id=\"gpus\"><tr><th>GPU</th><th>attach</th><th>PCIe link</th>"
       << "<th>nearest RDMA device (path)</th></tr>\n";
  for (const auto& gpu : gpus) {
    html << "<tr class=\"gpu\" data-gpu=\"" << Escape(gpu.pci_bus_id) << "\"><td>"
         << Escape(gpu.pci_bus_id) << "</td><td>" << Escape(gpu.attach) << "</td><td class=\""
         << (gpu.healthy_link ? "ok" : "bad") << "\">" << Escape(gpu.link) << "</td><td>"
         << Escape(gpu.nearest) << "</td></tr>\n";
  }
  html << "</table>\n";
}

void RenderFleet(std::ostringstream& html, const std::optional<LandingFleet>& fleet) {
  if (!fleet) return;
  html << "<h2>Fleet</h2>\n<p id=\"fleet\">";
  if (fleet->self.empty()) {
    html << "<span class=\"bad\">This agent is not among the " << fleet->peers
         << " discovered targets: it probes no fleet peer.</span>";
  } else {
    html << "This agent is " << Escape(fleet->self) << " among " << fleet->peers
         << " targets; epoch " << fleet->epoch << ".";
  }
  html << "</p>\n<ul id=\"fleet-sources\">";
  for (const auto& source : fleet->sources) html << "<li>" << Escape(source) << "</li>";
  html
      << "</ul>\n<table id=\"fleet-plan\"><tr><th>rail</th><th>peers probed this epoch</th></tr>\n";
  for (const auto& [rail, peers] : fleet->planned) {
    html << "<tr><td>" << Escape(rail) << "</td><td>" << Escape(peers) << "</td></tr>\n";
  }
  html << "</table>\n";
}

// The fabric checks' states; one state for all when they agree ("not read" on a veth).
void RenderFabric(std::ostringstream& html, const std::vector<LandingFabricCheck>& fabric) {
  const auto any = [&](const char* state) {
    return std::any_of(fabric.begin(), fabric.end(),
                       [&](const auto& one) { return one.state == state; });
  };
  const bool alike = std::all_of(fabric.begin(), fabric.end(), [&](const auto& one) {
    return one.state == fabric.front().state;
  });
  // Green only when every check passes: no verdict is no pass.
  const char* css = any("failing") ? "bad" : (alike && any("ok")) ? "ok" : "unknown";
  html << "<td class=\"fabric " << css << "\">";
  if (!fabric.empty() && alike) {
    html << Escape(fabric.front().state) << "</td>";
    return;
  }
  for (std::size_t i = 0; i < fabric.size(); ++i) {
    const auto& one = fabric[i];
    html << (i == 0 ? "" : ", ") << "<span data-check=\"" << Escape(one.check) << "\" class=\""
         << (one.state == "failing" ? "bad"
             : one.state == "ok"    ? "ok"
                                    : "unknown")
         << "\">" << Escape(one.label) << ": " << Escape(one.state) << "</span>";
  }
  html << "</td>";
}

void RenderRow(std::ostringstream& html, const LandingRailRow& row) {
  html << "<tr class=\"rail\" data-rail=\"" << Escape(row.rail) << "\"><td>" << Escape(row.rail)
       << "</td><td>" << Escape(row.device) << "</td><td>" << Escape(row.netdev)
       << "</td><td class=\"" << (row.healthy_state ? "ok" : "bad") << "\">" << Escape(row.state)
       << "</td><td>" << Escape(row.speed) << "</td><td>" << Escape(row.ipv4) << "</td><td>"
       << Escape(row.roce_gid) << "</td><td title=\"" << Escape(row.throughput_probe) << "\">"
       << Throughput(row.throughput_bytes_per_second) << "</td><td>"
       << RoundTrip(row.rtt_p50_seconds) << "</td><td>" << RoundTrip(row.rtt_p99_seconds)
       << "</td><td>" << Escape(row.transport) << "</td><td>" << Escape(row.qos) << "</td><td>"
       << Escape(row.switch_port) << "</td>";
  RenderFabric(html, row.fabric);
  RenderChecks(html, row.failing, row.fixes);
  html << "</tr>\n";
}

}  // namespace

std::string RenderLandingPage(const LandingPage& page) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<meta http-equiv=\"refresh\" content=\"" << page.refresh_seconds << "\">"
       << "<title>rail_exporter</title><style>"
       << "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
       << "td,th{border:1px solid #999;padding:.3em .6em;text-align:left;vertical-align:top}"
       << "th{background:#eee}.ok{color:#070}.bad{color:#b00}ul{margin:0;padding-left:1.2em}"
       << ".fix{color:#333}.unknown{color:#777}"
       << "</style></head><body>\n"
       << "<h1>rail_exporter</h1>\n<p>Version " << Escape(page.version) << " ("
       << Escape(page.revision) << "), UCX " << Escape(page.ucx_version)
       << ". This page refreshes every " << page.refresh_seconds << " s.</p>\n"
       << "<p><a href=\"" << Escape(page.telemetry_path) << "\">Metrics</a></p>\n";
  if (!page.has_rdma_devices) {
    html << "<p>No RDMA device found under " << Escape(page.sysfs_root)
         << "/class/infiniband: netdev and bond inventory only.</p>\n";
  }
  html << "<h2>Rails</h2>\n<table id=\"rails\"><tr><th>rail</th><th>device</th><th>netdev</th>"
       << "<th>state</th><th>speed</th><th>IPv4</th><th>RoCE v2 GID</th><th>probe throughput</th>"
       << "<th>RTT p50</th><th>RTT p99</th><th>transport</th><th>QoS</th><th>switch port</th>"
       << "<th>fabric</th>"
       << "<th>failing checks</th></tr>\n";
  for (const auto& row : page.rails) RenderRow(html, row);
  html << "</table>\n";
  if (page.rails.empty()) html << "<p id=\"no-rails\">No rail: no active RDMA port.</p>\n";
  RenderGpus(html, page.gpus);
  RenderFleet(html, page.fleet);
  html << "<h2>Host checks</h2>\n";
  if (page.host_failing.empty()) {
    html << "<p id=\"host-checks\" class=\"ok\">No failing host check.</p>\n";
  } else {
    html << "<ul id=\"host-checks\" class=\"bad\">";
    for (std::size_t i = 0; i < page.host_failing.size(); ++i) {
      RenderCheck(html, page.host_failing[i], page.host_fixes, i);
    }
    html << "</ul>\n";
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace rail::web
