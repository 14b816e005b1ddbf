// The agent's own figures: build, how many RDMA devices it sees, and the standard process_*
// metrics (CPU and memory matter: the agent lives on production GPU nodes).
#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/base/build_info.h"
#include "rail/sysfs/process.h"

namespace rail::collectors {
namespace {

// Named as Prometheus names its own, so that the same alerts and habits apply.
void CollectReload(const ConfigReloadState& reload, std::vector<prometheus::MetricFamily>& out) {
  detail::Gauge("rail_exporter_config_last_reload_successful",
                "1 when the last configuration load (start, SIGHUP or POST /-/reload) was "
                "applied; 0 when it was refused and the previous configuration still runs.")
      .Add({}, reload.last_successful ? 1.0 : 0.0)
      .MoveTo(out);
  detail::Gauge("rail_exporter_config_last_reload_success_timestamp_seconds",
                "Wall time of the last configuration load that was applied (the start counts).")
      .Add({}, std::chrono::duration<double>(reload.last_success.time_since_epoch()).count())
      .MoveTo(out);
}

class ExporterCollector final : public Collector {
 public:
  std::string Name() const override { return "exporter"; }
  std::string Help() const override {
    return "The agent itself: build, RDMA device count, process figures";
  }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    const auto& build = base::GetBuildInfo();
    detail::Gauge("rail_exporter_build_info",
                  "Build of rail_exporter (version, revision, compiler, UCX version); value 1.")
        .Add({{"version", build.version},
              {"revision", build.revision},
              {"compiler", build.compiler},
              {"ucx_version", snapshot.sources().health.own_ucx_version}},
             1)
        .MoveTo(out);
    detail::Gauge("rail_exporter_rdma_devices",
                  "RDMA devices found under class/infiniband that pass the device filter.")
        .Add({}, static_cast<double>(snapshot.Devices().size()))
        .MoveTo(out);

    if (const auto loaded = snapshot.sources().peer_secret_loaded) {
      detail::Gauge("rail_exporter_peer_secret_loaded",
                    "1 when responder.secret_file was loaded at start; 0: it could not be, and "
                    "the agent runs without peer traffic (no responder, probes or fleet).")
          .Add({}, *loaded ? 1.0 : 0.0)
          .MoveTo(out);
    }

    if (snapshot.sources().config_reload) CollectReload(snapshot.sources().config_reload(), out);

    if (snapshot.sources().self_proc == nullptr) return;
    const auto stats = sysfs::ReadProcessStats(*snapshot.sources().self_proc);
    auto gauge = [&out](const char* name, const char* help, auto value) {
      if (value) detail::Gauge(name, help).Add({}, static_cast<double>(*value)).MoveTo(out);
    };
    if (stats.cpu_seconds) {
      detail::Counter("process_cpu_seconds_total", "Total user and system CPU time in seconds.")
          .Add({}, *stats.cpu_seconds)
          .MoveTo(out);
    }
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", stats.resident_bytes);
    gauge("process_resident_memory_max_bytes", "Peak resident memory size (VmHWM) in bytes.",
          stats.peak_resident_bytes);
    gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", stats.virtual_bytes);
    gauge("process_start_time_seconds", "Start time of the process since the epoch in seconds.",
          stats.start_time_seconds);
    gauge("process_open_fds", "Number of open file descriptors.", stats.open_fds);
    gauge("process_max_fds", "Maximum number of open file descriptors.", stats.max_fds);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeExporterCollector() {
  return std::make_unique<ExporterCollector>();
}

}  // namespace rail::collectors
