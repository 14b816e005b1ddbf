#!/usr/bin/python3
"""Load (issue 5): wrk against /metrics while the agent probes its peer in the lab.

Needs root (network namespaces through scripts/lab) and Debian's wrk; skips with a message when
not root. Agent A runs scheduled TCP and UCX probes of agent B on both rails the whole time.

1. Paced: wrk with a Lua delay() between each connection's requests, 10 connections at one
   request per 30 ms each plus the response time, for 30 s: a rate above 200/s (at most ~330/s)
   without saturating the agent, which is what a fleet of Prometheus servers does. Debian's wrk
   has no -R (that is wrk2), and a Python client would measure Python. Then 10 s unpaced (two
   connections back to back) for the capacity. Both: no non-2xx answer, failed connect or
   timeout, socket errors within the bound of wrk_result() (the agent closes every connection
   after its response), achieved rate >= 200/s; p99 latency and the agent's RSS are reported.
2. Soak: RAIL_SOAK_SECONDS (default 600) of paced scraping at 5/s while the probes run, the
   agent's RSS sampled 60 times (every 10 s by default; a shortened soak samples more often).
   Growth beyond noise fails: the median of the last 10 samples must not exceed the median of
   samples 10-19 (after a warm-up of 10, when UCX, the allocator's per-thread arenas and the
   descriptor cache settle) by more than 2 MiB.
   Medians ignore a sample taken while a probe briefly holds its buffers; 2 MiB is above the
   step of a glibc arena's growth (which comes in 128 KiB-1 MiB steps) and below what a leak of
   one scrape's exposition (~10 KiB here) per scrape would add in 100 s (~5 MiB).

A table of the figures is printed and written to --summary (markdown, for the README).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import harness
import lab_probe_test as labkit

LAB = os.path.join(harness.REPO, "scripts", "lab")
PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlload")
NS_A, NS_B = PREFIX + "-a", PREFIX + "-b"
PEER_B = "10.200.0.2:9841"
WRK = os.environ.get("RAIL_WRK", "/usr/bin/wrk")
SOAK_SECONDS = int(os.environ.get("RAIL_SOAK_SECONDS", "600"))
RSS_SAMPLES = 60  # RSS samples of the soak: every 10 s over the default 600 s
RSS_NOISE_KIB = 2048
MIN_RATE = 200.0  # requests per second
RACE_FRACTION = 0.001  # of the requests: see wrk_result
SUMMARY = None  # --summary

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


def lab(*args):
    env = dict(os.environ, LAB_PREFIX=PREFIX)
    return subprocess.run([LAB] + list(args), env=env, capture_output=True, text=True,
                          timeout=60, check=True)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


class RssSampler(threading.Thread):
    """The largest RSS of a process, sampled every 0.5 s until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = rss_kib(pid)
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.wait(0.5):
            self.peak = max(self.peak, rss_kib(self.pid))

    def stop(self):
        self._stop_event.set()
        self.join(timeout=10)
        return self.peak


@unittest.skipUnless(os.geteuid() == 0, "needs root for network namespaces (scripts/lab)")
class LoadTest(unittest.TestCase):
    rows = []

    @classmethod
    def setUpClass(cls):
        # tearDownClass does not run when setUpClass fails: clean up here then.
        try:
            cls._set_up()
        except unittest.SkipTest:
            raise
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _set_up(cls):
        for tool in ("ip", "curl"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest("needs iproute2 and curl")
        if not os.access(WRK, os.X_OK):
            raise AssertionError("%s is missing (scripts/install-deps installs wrk)" % WRK)
        cls.tmp = tempfile.mkdtemp(prefix="rail-load-")
        cls.agents = []
        lab("down")
        lab("up")
        secret = cls.write("secret", "lab-shared-secret\n", 0o600)
        responder = "responder:\n  listen_address: ':9841'\n  secret_file: %s\n" % secret
        rails = {side: "rails:\n" + "".join("  - {name: %s, netdev: %s}\n" % (rail, ends[i])
                                            for rail, ends in labkit.RAILS.items())
                 for i, side in enumerate("ab")}
        # The probes below ask B for ~100 sessions a minute: above the default rate limit.
        config_b = cls.write("b.yaml", rails["b"] + responder +
                             "  limits: {probes_per_minute_per_peer: 600}\n")
        # Every kind of single-rail probe on both rails; the bulk ones within the budget.
        config_a = cls.write("a.yaml", rails["a"] + responder + (
            "peers:\n  - {name: b, address: '%s'}\n"
            "budget: {max_bulk_time_fraction_per_rail: 0.5, max_bytes_per_hour: 100000000000000}\n"
            "probes:\n"
            "  - {kind: tcp_rtt, duration: 1s, timeout: 3s, interval: 5s}\n"
            "  - {kind: ucx_rtt, duration: 1s, timeout: 3s, interval: 5s}\n"
            "  - {kind: tcp_throughput, streams: 2, duration: 1s, timeout: 3s, interval: 20s}\n"
            "  - {kind: ucx_throughput, operation: put, duration: 1s, timeout: 3s,"
            " interval: 30s}\n" % PEER_B))
        cls.agent_b = cls.start(NS_B, ["--config.file=" + config_b])
        cls.agent_a = cls.start(NS_A, ["--config.file=" + config_a])
        with open("/proc/%d/comm" % cls.agent_a.proc.pid) as comm:
            # `ip netns exec` execs the agent: its pid is the agent's, whose RSS is measured.
            assert comm.read().strip() == "rail_exporter", "pid is not the agent's"
        cls.url = "http://127.0.0.1:%d/metrics" % cls.agent_a.port
        # Probes are running before the load starts: every rtt probe answered once.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            samples = cls.agent_a.samples()
            if all(labkit.all_ones(labkit.find(samples, "rail_probe_success", kind=kind,
                                               rail=rail))
                   for kind in ("tcp_rtt", "ucx_rtt") for rail in labkit.RAILS):
                break
            time.sleep(1)
        else:
            raise AssertionError("rtt probes did not succeed within 60 s:\n" +
                                 cls.agent_a.scrape())

    @classmethod
    def tearDownClass(cls):
        for agent in getattr(cls, "agents", []):
            agent.stop()
        try:
            lab("down")
        finally:
            if getattr(cls, "tmp", None):
                shutil.rmtree(cls.tmp, ignore_errors=True)
        if cls.rows:
            table = cls.summary_table()
            print("\n" + table)
            if SUMMARY:
                with open(SUMMARY, "w") as handle:
                    handle.write(table)
                print("summary written to %s" % SUMMARY)

    @classmethod
    def write(cls, name, text, mode=0o644):
        path = os.path.join(cls.tmp, name)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, mode)
        return path

    @classmethod
    def start(cls, ns, args):
        agent = labkit.LabAgent(ns, args)
        cls.agents.append(agent)
        return agent

    @classmethod
    def summary_table(cls):
        cpus = os.cpu_count()
        load = "%.1f" % os.getloadavg()[0]
        lines = ["Load on /metrics while probing (tests/e2e/load_test.py; %d CPUs, load %s "
                 "at the end):" % (cpus, load), "",
                 "| run | duration s | requests/s | errors / races | p50 ms | p99 ms | max ms | "
                 "RSS MiB (before → peak/after) | probe runs / errors |",
                 "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        lines += ["| %s |" % " | ".join(str(cell) for cell in row) for row in cls.rows]
        return "\n".join(lines) + "\n"

    # -- helpers --------------------------------------------------------------------------

    def wrk(self, seconds, connections, pause_ms, threads=2):
        script = self.write("pace-%d.lua" % pause_ms, WRK_SCRIPT % pause_ms)
        return subprocess.Popen(
            ["ip", "netns", "exec", NS_A, WRK, "-t%d" % min(threads, connections),
             "-c%d" % connections, "-d%ds" % seconds, "--timeout", "5s", "-s", script,
             self.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL)

    def wrk_result(self, process, seconds):
        out, err = process.communicate(timeout=seconds + 60)
        self.assertEqual(process.returncode, 0, "wrk failed:\n%s\n%s" % (out, err))
        lines = [line for line in out.splitlines() if line.startswith("{")]
        self.assertEqual(len(lines), 1, out)
        result = json.loads(lines[0])
        result["rate"] = result["requests"] / (result["duration_us"] / 1e6)
        # The agent's web server (civetweb under prometheus-cpp, keep-alive off) closes every
        # connection after its response without a "Connection: close" header. wrk assumes
        # keep-alive, so each complete response is followed by one socket error on its
        # connection (the close, read; or, when wrk's next request raced the close, write).
        # Errors: every non-2xx answer, failed connect and timeout; socket errors beyond one per
        # complete response are "races": requests wrk wrote into a connection the server was
        # closing (Prometheus retries those), bounded by RACE_FRACTION.
        result["errors"] = result["connect"] + result["status"] + result["timeout"]
        result["races"] = max(0, result["read"] + result["write"] - result["requests"])
        return result

    def probe_counts(self):
        """(runs, errors, {(kind, reason): errors}) of agent A's probes so far."""
        samples = self.agent_a.samples()
        runs = sum(labkit.find(samples, "rail_probe_runs_total"))
        reasons = {}
        for name, labels, value in samples:
            if name == "rail_probe_errors_total":
                key = (labels["kind"], labels["reason"])
                reasons[key] = reasons.get(key, 0) + value
        return runs, sum(reasons.values()), reasons

    def probe_errors_since(self, before):
        return {key: value - before.get(key, 0) for key, value in self.probe_counts()[2].items()
                if value > before.get(key, 0)}

    def run_wrk(self, label, seconds, connections, pause_ms):
        pid = self.agent_a.proc.pid
        rss_before = rss_kib(pid)
        runs_before, errors_before, reasons_before = self.probe_counts()
        sampler = RssSampler(pid)
        sampler.start()
        result = self.wrk_result(self.wrk(seconds, connections, pause_ms), seconds)
        peak = max(sampler.stop(), rss_before)
        rss_after = rss_kib(pid)
        runs_after, errors_after, _ = self.probe_counts()
        runs, probe_errors = runs_after - runs_before, errors_after - errors_before
        print("%s: %s" % (label, result))
        self.rows.append([
            label, seconds, "%.0f" % result["rate"], "%d / %d" % (result["errors"],
                                                                  result["races"]),
            "%.2f" % (result["p50_us"] / 1e3), "%.2f" % (result["p99_us"] / 1e3),
            "%.1f" % (result["max_us"] / 1e3),
            "%.1f → %.1f / %.1f" % (rss_before / 1024, peak / 1024, rss_after / 1024),
            "%d / %d" % (runs, probe_errors)])
        self.assertTrue(self.agent_a.alive(), self.agent_a.stderr_text())
        self.assertEqual(result["errors"], 0, "wrk counted errors: %s" % result)
        self.assertLessEqual(result["races"], RACE_FRACTION * result["requests"], result)
        self.assertGreaterEqual(result["rate"], MIN_RATE, result)
        self.assertGreater(runs, 0, "no probe ran during the load")
        self.assertEqual(probe_errors, 0, "probes failed under load: %s" %
                         self.probe_errors_since(reasons_before))
        return result

    # -- the runs ------------------------------------------------------------------------

    def test_1_paced_and_unpaced_load_while_probing(self):
        size = len(self.agent_a.scrape())
        print("exposition: %d bytes" % size)
        self.run_wrk("wrk 10 conn, 30 ms pause (paced)", 30, 10, 30)
        self.run_wrk("wrk 2 conn, no pause (capacity)", 10, 2, 0)

    def test_2_rss_stable_while_scraping_and_probing(self):
        seconds = SOAK_SECONDS
        self.assertGreaterEqual(seconds, 60, "RAIL_SOAK_SECONDS below 60")
        period = seconds / RSS_SAMPLES
        pid = self.agent_a.proc.pid
        runs_before, errors_before, reasons_before = self.probe_counts()
        scraper = self.wrk(seconds, 1, 200, threads=1)  # 5 scrapes a second
        samples = []
        start = time.monotonic()
        try:
            while time.monotonic() - start < seconds:
                samples.append(rss_kib(pid))
                time.sleep(period - (time.monotonic() - start) % period)
        finally:
            result = self.wrk_result(scraper, seconds)
        runs_after, errors_after, _ = self.probe_counts()
        sixth = len(samples) // 6
        baseline = statistics.median(samples[sixth:2 * sixth])
        final = statistics.median(samples[-sixth:])
        print("RSS KiB every %.1f s: %s" % (period, samples))
        print("soak: %s; RSS median %d KiB (samples %d..%d) -> %d KiB (last %d)" % (
            result, baseline, sixth, 2 * sixth - 1, final, sixth))
        self.rows.append([
            "soak: wrk 1 conn, 200 ms pause", seconds, "%.1f" % result["rate"],
            "%d / %d" % (result["errors"], result["races"]), "%.2f" % (result["p50_us"] / 1e3),
            "%.2f" % (result["p99_us"] / 1e3), "%.1f" % (result["max_us"] / 1e3),
            "median %.1f → %.1f (max %.1f)" % (baseline / 1024, final / 1024,
                                                 max(samples) / 1024),
            "%d / %d" % (runs_after - runs_before, errors_after - errors_before)])
        self.assertTrue(self.agent_a.alive(), self.agent_a.stderr_text())
        self.assertEqual(result["errors"], 0, result)
        self.assertLessEqual(result["races"], RACE_FRACTION * result["requests"], result)
        self.assertGreater(runs_after, runs_before)
        self.assertEqual(errors_after, errors_before, "probes failed during the soak: %s" %
                         self.probe_errors_since(reasons_before))
        self.assertLessEqual(final, baseline + RSS_NOISE_KIB,
                             "RSS grew beyond noise: %s" % samples)


def main():
    global SUMMARY
    args = sys.argv[1:]
    if "--summary" in args:
        index = args.index("--summary")
        SUMMARY = os.path.abspath(args[index + 1])
        del args[index:index + 2]
    sys.argv = sys.argv[:1] + args
    harness.main()


if __name__ == "__main__":
    main()
