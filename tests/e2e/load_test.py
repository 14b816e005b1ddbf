#!/usr/bin/python3
"""Load (issue 5): wrk against /metrics while the agent probes its peer in the lab.

Needs root (network namespaces through scripts/lab) and Debian's wrk; skips with a message when
not root. Agent A runs scheduled TCP and UCX probes of agent B on both rails the whole time
(load_lab.py).

Paced: wrk with a Lua delay() between each connection's requests, 10 connections at one request
per 30 ms each plus the response time, for 30 s: a rate above 200/s (at most ~330/s) without
saturating the agent, which is what a fleet of Prometheus servers does. Debian's wrk has no -R
(that is wrk2), and a Python client would measure Python. Then 10 s unpaced (two connections back
to back) for the capacity. Both: no non-2xx answer, failed connect or timeout, socket errors
within the bound of wrk_result() (the agent closes every connection after its response), achieved
rate >= 200/s; p99 latency and the agent's RSS are reported.

The long RSS soak is soak_test.py (ctest e2e_soak). A table of the figures is printed and written
to --summary (markdown, for the README), the table the soak adds its row to.
"""

import os
import threading

import harness
import load_lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlload")
MIN_RATE = 200.0  # requests per second


class RssSampler(threading.Thread):
    """The largest RSS of a process, sampled every 0.5 s until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = load_lab.rss_kib(pid)
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.wait(0.5):
            self.peak = max(self.peak, load_lab.rss_kib(self.pid))

    def stop(self):
        self._stop_event.set()
        self.join(timeout=10)
        return self.peak


class LoadTest(load_lab.LoadLabTestCase):
    LAB_PREFIX = PREFIX

    def run_wrk(self, label, seconds, connections, pause_ms):
        pid = self.agent_a.proc.pid
        rss_before = load_lab.rss_kib(pid)
        runs_before, errors_before, reasons_before = self.probe_counts()
        sampler = RssSampler(pid)
        sampler.start()
        result = self.wrk_result(self.wrk(seconds, connections, pause_ms), seconds)
        peak = max(sampler.stop(), rss_before)
        rss_after = load_lab.rss_kib(pid)
        runs_after, errors_after, _ = self.probe_counts()
        runs, probe_errors = runs_after - runs_before, errors_after - errors_before
        print("%s: %s" % (label, result))
        self.add_row(label, seconds, result, "%.1f → %.1f / %.1f" % (
            rss_before / 1024, peak / 1024, rss_after / 1024), (runs, probe_errors))
        self.assertTrue(self.agent_a.alive(), self.agent_a.stderr_text())
        self.assertEqual(result["errors"], 0, "wrk counted errors: %s" % result)
        self.assertLessEqual(result["races"], load_lab.RACE_FRACTION * result["requests"],
                             result)
        self.assertGreaterEqual(result["rate"], MIN_RATE, result)
        self.assertGreater(runs, 0, "no probe ran during the load")
        self.assertEqual(probe_errors, 0, "probes failed under load: %s" %
                         self.probe_errors_since(reasons_before))
        return result

    def test_1_paced_and_unpaced_load_while_probing(self):
        size = len(self.agent_a.scrape())
        print("exposition: %d bytes" % size)
        self.run_wrk("wrk 10 conn, 30 ms pause (paced)", 30, 10, 30)
        self.run_wrk("wrk 2 conn, no pause (capacity)", 10, 2, 0)


if __name__ == "__main__":
    harness.main(path_options=["--summary"])
