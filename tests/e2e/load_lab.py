"""What the load test (load_test.py) and the soak (soak_test.py) share: agent A probing agent B
in the lab while wrk scrapes A's /metrics, the figures of a wrk run, A's probe counts, A's RSS,
and the summary table both write to one --summary file (markdown, for the README).

Needs root (network namespaces through scripts/lab) and Debian's wrk; a LoadLabTestCase skips
with a message when not root. Agent A runs scheduled TCP and UCX probes of agent B on both rails
the whole time.
"""

import json
import os
import subprocess

import harness
import proc_status
import lab
from lab import find, all_ones

WRK = os.environ.get("RAIL_WRK", "/usr/bin/wrk")
RACE_FRACTION = 0.001  # of the requests: see wrk_result
RTT_WAIT = 60.0  # seconds for every rtt probe of A to have succeeded before the load starts

# wrk's done() hook prints one JSON line: the figures without parsing its human output.
WRK_SCRIPT = """
local pause = %d
function delay() return pause end
done = function(summary, latency, requests)
  io.write(string.format(
    '{"requests": %%d, "duration_us": %%d, "connect": %%d, "read": %%d, "write": %%d, '
    .. '"status": %%d, "timeout": %%d, "p50_us": %%d, "p99_us": %%d, "max_us": %%d}\\n',
    summary.requests, summary.duration, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.status, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""

# Every kind of single-rail probe on both rails; the bulk ones within the budget.
PROBES = (
    "  - {kind: tcp_rtt, duration: 1s, timeout: 3s, interval: 5s}\n"
    "  - {kind: ucx_rtt, duration: 1s, timeout: 3s, interval: 5s}\n"
    "  - {kind: tcp_throughput, streams: 2, duration: 1s, timeout: 3s, interval: 20s}\n"
    "  - {kind: ucx_throughput, operation: put, duration: 1s, timeout: 3s,"
    " interval: 30s}\n")

SUMMARY_HEADER = [
    "| run | duration s | requests/s | errors / races | p50 ms | p99 ms | max ms | "
    "RSS MiB (before → peak/after) | probe runs / errors |",
    "|---|---:|---:|---:|---:|---:|---:|---|---:|"]


def rss_kib(pid):
    return proc_status.status(pid, ("VmRSS",))["VmRSS"]


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def probe_worker_pid(agent_pid):
    """The agent's probe worker (its child running rail_exporter_probe_worker), or None."""
    for child in lab.children(agent_pid):
        try:
            with open("/proc/%d/cmdline" % child, "rb") as cmdline:
                if b"rail_exporter_probe_worker" in cmdline.read():
                    return child
        except OSError:
            continue
    return None


def summary_table(rows, path=None):
    """The markdown table of rows (lists of cells). With path, the rows of the file's table whose
    run is not among rows' stay in it, so that the load test and the soak fill one table; the
    soak's rows come last."""
    lines = ["| %s |" % " | ".join(str(cell) for cell in row) for row in rows]
    if path and os.path.exists(path):
        runs = {str(row[0]) for row in rows}
        with open(path, encoding="utf-8") as handle:
            kept = [line.rstrip("\n") for line in handle
                    if line.startswith("| ") and line.rstrip("\n") not in SUMMARY_HEADER]
        lines = [line for line in kept if line[2:].split(" | ")[0] not in runs] + lines
    lines.sort(key=lambda line: line.startswith("| soak"))
    cpus = os.cpu_count()
    load = "%.1f" % os.getloadavg()[0]
    return "\n".join(["Load on /metrics while probing (tests/e2e/load_test.py, soak_test.py; "
                      "%d CPUs, load %s at the end):" % (cpus, load), ""] +
                     SUMMARY_HEADER + lines) + "\n"


class LoadLabTestCase(lab.LabTestCase):
    """Agents A and B in the lab, A probing B; wrk on A's /metrics; the rows of the summary."""

    TMP_PREFIX = "rail-load-"

    @classmethod
    def setUpClass(cls):
        cls.rows = []
        lab.require_tools(*cls.TOOLS)
        if not os.access(WRK, os.X_OK):
            raise AssertionError("%s is missing (scripts/install-deps installs wrk)" % WRK)
        super().setUpClass()

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "lab-shared-secret\n")
        # The probes below ask B for ~100 sessions a minute: above the default rate limit.
        config_b = cls.lab.config("b.yaml", "b", secret=secret,
                                  limits="probes_per_minute_per_peer: 600")
        config_a = cls.lab.config("a.yaml", "a", secret=secret,
                                  peers={"b": lab.peer_address("b")}, probes=PROBES)
        cls.agent_b = cls.lab.start_agent("b", ["--config.file=" + config_b])
        cls.agent_a = cls.lab.start_agent("a", ["--config.file=" + config_a])
        with open("/proc/%d/comm" % cls.agent_a.proc.pid) as comm:
            # `ip netns exec` execs the agent: its pid is the agent's, whose RSS is measured.
            assert comm.read().strip() == "rail_exporter", "pid is not the agent's"
        cls.url = "http://127.0.0.1:%d/metrics" % cls.agent_a.port
        # Probes are running before the load starts: every rtt probe answered once.
        done, _ = cls.agent_a.wait_for(lambda samples: all(
            all_ones(find(samples, "rail_probe_success", kind=kind, rail=rail))
            for kind in ("tcp_rtt", "ucx_rtt") for rail in lab.RAILS), RTT_WAIT)
        if not done:
            raise AssertionError("rtt probes did not succeed within %.0f s:\n%s" % (
                RTT_WAIT, cls.agent_a.scrape()))

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        if cls.rows:
            summary = harness.OPTIONS.get("summary")
            print("\n" + summary_table(cls.rows))
            if summary:
                table = summary_table(cls.rows, summary)
                with open(summary, "w", encoding="utf-8") as handle:
                    handle.write(table)
                print("summary written to %s" % summary)

    # -- helpers --------------------------------------------------------------------------

    def wrk(self, seconds, connections, pause_ms, threads=2):
        """wrk on A's /metrics from inside host a, started: connections connections, each
        pausing pause_ms between its requests, for seconds."""
        script = self.lab.write("pace-%d.lua" % pause_ms, WRK_SCRIPT % pause_ms)
        return subprocess.Popen(
            ["ip", "netns", "exec", self.lab.ns_a, WRK, "-t%d" % min(threads, connections),
             "-c%d" % connections, "-d%ds" % seconds, "--timeout", "5s", "-s", script,
             self.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL)

    def wrk_result(self, process, seconds):
        """The figures of a wrk run (its done() line), with its rate, errors and races."""
        out, err = process.communicate(timeout=seconds + 60)
        self.assertEqual(process.returncode, 0, "wrk failed:\n%s\n%s" % (out, err))
        lines = [line for line in out.splitlines() if line.startswith("{")]
        self.assertEqual(len(lines), 1, out)
        result = json.loads(lines[0])
        result["rate"] = result["requests"] / (result["duration_us"] / 1e6)
        # The agent's endpoint keeps wrk's connections alive; an older one closed each after its
        # response without a "Connection: close" header, which wrk counts as a socket error per
        # complete response (the close, read; or, when wrk's next request raced the close,
        # write). Errors: every non-2xx answer, failed connect and timeout; socket errors beyond
        # one per complete response are "races": requests wrk wrote into a connection the server
        # was closing (Prometheus retries those), bounded by RACE_FRACTION.
        result["errors"] = result["connect"] + result["status"] + result["timeout"]
        result["races"] = max(0, result["read"] + result["write"] - result["requests"])
        return result

    def probe_counts(self):
        """(runs, errors, {(kind, reason): errors}) of agent A's probes so far."""
        samples = self.agent_a.samples()
        runs = sum(find(samples, "rail_probe_runs_total"))
        reasons = {}
        for name, labels, value in samples:
            if name == "rail_probe_errors_total":
                key = (labels["kind"], labels["reason"])
                reasons[key] = reasons.get(key, 0) + value
        return runs, sum(reasons.values()), reasons

    def probe_errors_since(self, before):
        return {key: value - before.get(key, 0) for key, value in self.probe_counts()[2].items()
                if value > before.get(key, 0)}

    def add_row(self, label, seconds, result, rss, probes, rate_format="%.0f"):
        """A row of the summary: the wrk figures, rss (text) and probes ((runs, errors))."""
        self.rows.append([
            label, seconds, rate_format % result["rate"],
            "%d / %d" % (result["errors"], result["races"]), "%.2f" % (result["p50_us"] / 1e3),
            "%.2f" % (result["p99_us"] / 1e3), "%.1f" % (result["max_us"] / 1e3), rss,
            "%d / %d" % probes])
