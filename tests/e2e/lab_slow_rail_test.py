#!/usr/bin/python3
"""Bulk probes on a rail throttled to a few Mbit/s end with a low figure, not a timeout.

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

Issue 22, item 3: the default ucx_throughput (1 MiB messages, window 16, duration 2 s, timeout
12 s) on a ~50 Mbit/s rail ended in `timeout: put: cancelled with 2 operations outstanding`: its
warm-up (one window) and its drain after posting stopped were sized in operations, so a slow
rail spent longer in them than the timeout. Now both are bounded by time and the operations
still outstanding at the end are cancelled without failing the run. Here rail 1 is throttled
(tbf on both ends) to RATE and host a runs the default ucx_throughput (put, get and am) and
tcp_throughput on it with `rail_exporter probe`: each must succeed, with a throughput below the
rate and above a tenth of it, within the default timeout.
"""

import json
import os

import harness
import lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlslow")
PEER_B = lab.peer_address("b")
RATE = "20mbit"
RATE_BYTES_PER_SECOND = 20e6 / 8
DEFAULT_TIMEOUT = 12.0  # seconds: the default duration (2 s) plus 10 s


class LabSlowRailTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-lab-slow-"

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "lab-slow-rail-secret\n")
        cls.config_a = cls.lab.config("a.yaml", "a", secret=secret, peers={"b": PEER_B})
        config_b = cls.lab.config("b.yaml", "b", secret=secret)
        cls.agent_b = cls.lab.start_agent("b", ["--config.file=" + config_b])
        cls.lab.throttle(1, RATE)

    def probe(self, kind, extra=()):
        argv = [harness.BINARY, "probe", "--peer", PEER_B, "--kind", kind, "--rail", "rail1",
                "--output", "json", "--config.file=" + self.config_a] + list(extra)
        result = self.lab.exec("a", argv, timeout=120, check=False)
        runs = json.loads(result.stdout) if result.stdout.strip() else []
        self.assertEqual(result.returncode, 0, "probe %s %s failed:\n%s\n%s" % (
            kind, " ".join(extra), result.stdout, result.stderr))
        self.assertEqual(len(runs), 1, result.stdout)
        return runs[0]

    def assert_slow_but_measured(self, run, what):
        rate = run["throughput_bytes_per_second"]
        print("%s on rail 1 at %s: %.2f Mbit/s in %.2f s (%s)" % (
            what, RATE, rate * 8 / 1e6, run["seconds"], run.get("note", "no note")))
        self.assertTrue(run["success"], run)
        self.assertLess(rate, RATE_BYTES_PER_SECOND * 1.2, "faster than the shaped rate")
        self.assertGreater(rate, RATE_BYTES_PER_SECOND / 10, "the figure is not the rail's")
        self.assertLess(run["seconds"], DEFAULT_TIMEOUT)

    def test_default_ucx_throughput_ends_with_a_low_figure(self):
        for operation in ("put", "get", "am"):
            run = self.probe("ucx_throughput", ["--operation", operation])
            self.assertEqual(run["message_size_bytes"], 1 << 20, "not the default message size")
            self.assert_slow_but_measured(run, "ucx_throughput " + operation)

    def test_default_tcp_throughput_ends_with_a_low_figure(self):
        self.assert_slow_but_measured(self.probe("tcp_throughput"), "tcp_throughput")


if __name__ == "__main__":
    harness.main()
