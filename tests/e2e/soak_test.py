#!/usr/bin/python3
"""Soak (issues 5, 11): the agent's and its probe worker's RSS and descriptors across a long
scrape-and-probe run in the lab.

Needs root (network namespaces through scripts/lab) and Debian's wrk; skips with a message when
not root. Agent A runs scheduled TCP and UCX probes of agent B on both rails the whole time
(load_lab.py, as in load_test.py).

RAIL_SOAK_SECONDS (default 150, at least 60) of paced scraping at 5/s while the probes run, the
agent's RSS sampled 60 times (every 2.5 s by default; a shorter soak samples more often), and
in no sample above 32 MiB (the probe worker: 24 MiB).
Before it, the agent takes the load test's two wrk runs (30 s paced with 10 connections, 10 s
without pause with 2), as when both were one test. Growth beyond noise fails: the median of the
last 10 samples must not exceed the median of samples 10-19 (after a warm-up of 10, when UCX, the
allocator's per-thread arenas and the descriptor cache settle) by more than 2 MiB.
Medians ignore a sample taken while a probe briefly holds its buffers; 2 MiB is above the step of
a glibc arena's growth (which comes in 128 KiB-1 MiB steps) and below what a leak of one scrape's
exposition (~10 KiB here) per scrape would add in 100 s (~5 MiB). wrk's answers count as in
load_test.py: no error, races within bound, and no probe fails during the soak.

The probe worker (the process holding UCX, rail/probe/worker.h) is sampled alike: the same RSS
rule, the same process throughout (no restart), and for both processes the floor of the open
descriptors (the fewest in the last 10 samples) at most FD_NOISE above the floor of samples
10-19. The floor, not the median: the worker holds 8 descriptors idle and 20 or 27 while it
serves or runs a probe, and 10 s samples catch those phases unevenly (medians 14 -> 20 in one
run without any leak); a descriptor leaked per probe run (~800 runs) would lift the floor.

Its row is added to the table of --summary (the load test's file, markdown, for the README).
"""

import os
import statistics
import time

import harness
import load_lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlsoak")
SOAK_SECONDS = int(os.environ.get("RAIL_SOAK_SECONDS", "150"))
RSS_SAMPLES = 60  # RSS samples of the soak: every 2.5 s over the default 150 s (CI time)
RSS_NOISE_KIB = 2048
# Ceilings of the two processes' RSS in any sample (docs/benchmarks.md, footprint): the agent
# probing and serving held 20-22 MiB in the lab, node_exporter on the same tree 20-21 MiB; the
# probe worker (UCX context, worker and its pools, a throughput run's buffers) 13-15 MiB.
AGENT_RSS_BOUND_KIB = 32 * 1024
WORKER_RSS_BOUND_KIB = 24 * 1024
FD_NOISE = 4
WARM_UP_SECONDS = 30  # paced wrk with 10 connections, then a third of it without pause


class SoakTest(load_lab.LoadLabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-soak-"

    def test_rss_stable_while_scraping_and_probing(self):
        seconds = SOAK_SECONDS
        self.assertGreaterEqual(seconds, 60, "RAIL_SOAK_SECONDS below 60")
        period = seconds / RSS_SAMPLES
        pid = self.agent_a.proc.pid
        worker = load_lab.probe_worker_pid(pid)
        self.assertIsNotNone(worker, "agent A runs no probe worker")
        # The soak starts where the load test's runs leave an agent, as it did while both were one
        # test: concurrent scrapes grow the allocator's arenas to their working size first, so
        # that the samples compare a settled agent with itself, not a fresh one with a warm one.
        self.wrk_result(self.wrk(WARM_UP_SECONDS, 10, 30), WARM_UP_SECONDS)
        self.wrk_result(self.wrk(WARM_UP_SECONDS // 3, 2, 0), WARM_UP_SECONDS // 3)
        runs_before, errors_before, reasons_before = self.probe_counts()
        scraper = self.wrk(seconds, 1, 200, threads=1)  # 5 scrapes a second
        samples, worker_samples, fds, worker_fds = [], [], [], []
        start = time.monotonic()
        try:
            while time.monotonic() - start < seconds:
                samples.append(load_lab.rss_kib(pid))
                worker_samples.append(load_lab.rss_kib(worker))
                fds.append(load_lab.open_fds(pid))
                worker_fds.append(load_lab.open_fds(worker))
                time.sleep(period - (time.monotonic() - start) % period)
        finally:
            result = self.wrk_result(scraper, seconds)
        runs_after, errors_after, _ = self.probe_counts()
        sixth = len(samples) // 6

        def settled_and_final(series):
            return (statistics.median(series[sixth:2 * sixth]),
                    statistics.median(series[-sixth:]))
        def floors(series):
            return min(series[sixth:2 * sixth]), min(series[-sixth:])
        baseline, final = settled_and_final(samples)
        worker_baseline, worker_final = settled_and_final(worker_samples)
        fd_baseline, fd_final = floors(fds)
        worker_fd_baseline, worker_fd_final = floors(worker_fds)
        print("RSS KiB every %.1f s: %s" % (period, samples))
        print("worker RSS KiB: %s" % worker_samples)
        print("open fds: agent %s; worker %s" % (fds, worker_fds))
        print("soak: %s; RSS median %d KiB (samples %d..%d) -> %d KiB (last %d); worker %d -> "
              "%d KiB; fd floor agent %d -> %d, worker %d -> %d" % (
                  result, baseline, sixth, 2 * sixth - 1, final, sixth, worker_baseline,
                  worker_final, fd_baseline, fd_final, worker_fd_baseline, worker_fd_final))
        self.add_row("soak: wrk 1 conn, 200 ms pause", seconds, result,
                     "median %.1f → %.1f (max %.1f); worker %.1f → %.1f; fd floor %d → %d, "
                     "worker %d → %d" % (
                         baseline / 1024, final / 1024, max(samples) / 1024,
                         worker_baseline / 1024, worker_final / 1024, fd_baseline, fd_final,
                         worker_fd_baseline, worker_fd_final),
                     (runs_after - runs_before, errors_after - errors_before), rate_format="%.1f")
        self.assertTrue(self.agent_a.alive(), self.agent_a.stderr_text())
        self.assertEqual(result["errors"], 0, result)
        self.assertLessEqual(result["races"], load_lab.RACE_FRACTION * result["requests"],
                             result)
        self.assertGreater(runs_after, runs_before)
        self.assertEqual(errors_after, errors_before, "probes failed during the soak: %s" %
                         self.probe_errors_since(reasons_before))
        self.assertLessEqual(final, baseline + RSS_NOISE_KIB,
                             "RSS grew beyond noise: %s" % samples)
        self.assertEqual(load_lab.probe_worker_pid(pid), worker, "the probe worker restarted")
        self.assertLessEqual(worker_final, worker_baseline + RSS_NOISE_KIB,
                             "the worker's RSS grew beyond noise: %s" % worker_samples)
        self.assertLessEqual(max(samples), AGENT_RSS_BOUND_KIB, "agent RSS: %s" % samples)
        self.assertLessEqual(max(worker_samples), WORKER_RSS_BOUND_KIB,
                             "worker RSS: %s" % worker_samples)
        self.assertLessEqual(fd_final, fd_baseline + FD_NOISE, "agent fds: %s" % fds)
        self.assertLessEqual(worker_fd_final, worker_fd_baseline + FD_NOISE,
                             "worker fds: %s" % worker_fds)


if __name__ == "__main__":
    harness.main(path_options=["--summary"])
