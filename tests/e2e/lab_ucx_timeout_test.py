#!/usr/bin/python3
"""Two lab agents probing each other with UCX put runs that their timeout always cuts short.

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

Over the lab's tcp rails UCX 1.13 emulates put with active messages that the target answers one
by one. Before the initiator drained its posted puts on abort (UcxProbeSide::DrainAfterAbort), a
run ended by its timeout closed the endpoint while the peer still had puts queued, and the peer
agent died in ucp_put_handler ("Fatal: unexpected error: Endpoint timeout"), usually within the
first few such runs. Here both agents run ucx_throughput (put) on each rail and
multirail_capacity (put) against each other with `duration: 1s, timeout: 1100ms`: setting up a
probe takes longer than 100 ms, so every run is still posting puts when its deadline passes.
The test waits for several timed-out runs of each kind on each agent, and checks that both
agents stayed alive, kept serving /metrics and kept serving probes as responders.
"""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

import harness
from lab_probe_test import LabAgent, find

LAB = os.path.join(harness.REPO, "scripts", "lab")
PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rltmo")
AGENTS = {
    # host: (namespace, the other host's responder over rail 0, rail netdevs)
    "a": (PREFIX + "-a", "10.200.0.2:9841", ("ra0", "ra1")),
    "b": (PREFIX + "-b", "10.200.0.1:9841", ("rb0", "rb1")),
}
# Bulk budget per rail (at most 0.5): (timeout + 1 s per message size) over the shortest jittered
# interval, for ucx_throughput on the rail and multirail_capacity: 2 x 2.1 s / (9 s x 0.95) = 0.49.
PROBES = (
    "  - {kind: ucx_throughput, operation: put, message_sizes: [1048576], duration: 1s,"
    " timeout: 1100ms, interval: 9s, jitter: 0.05}\n"
    "  - {kind: multirail_capacity, operation: put, message_sizes: [1048576], duration: 1s,"
    " timeout: 1100ms, interval: 9s, jitter: 0.05}\n")
# Timed-out runs each agent must have seen of each kind (ucx_throughput counts both rails).
WANTED = {"ucx_throughput": 6, "multirail_capacity": 3}
WAIT_TIMEOUT = 150.0  # seconds; each kind runs about every 9 s per rail


def lab(*args):
    env = dict(os.environ, LAB_PREFIX=PREFIX)
    return subprocess.run([LAB] + list(args), env=env, capture_output=True, text=True,
                          timeout=60, check=True)


@unittest.skipUnless(os.geteuid() == 0, "needs root for network namespaces (scripts/lab)")
class LabUcxTimeoutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("ip") is None or shutil.which("curl") is None:
            raise unittest.SkipTest("needs iproute2 and curl")
        cls.tmp = tempfile.mkdtemp(prefix="rail-lab-tmo-")
        cls.agents = {}
        lab("down")
        lab("up")
        secret = os.path.join(cls.tmp, "secret")
        with open(secret, "w") as handle:
            handle.write("lab-timeout-secret\n")
        os.chmod(secret, 0o600)
        try:
            for host, (ns, peer, netdevs) in AGENTS.items():
                rails = "".join("  - {name: rail%d, netdev: %s}\n" % (index, netdev)
                                for index, netdev in enumerate(netdevs))
                config = os.path.join(cls.tmp, host + ".yaml")
                with open(config, "w") as handle:
                    handle.write(
                        "rails:\n" + rails +
                        "responder:\n  listen_address: ':9841'\n  secret_file: %s\n" % secret +
                        "peers:\n  - {name: peer, address: '%s'}\n" % peer +
                        "budget: {max_bulk_time_fraction_per_rail: 0.5,"
                        " max_bytes_per_hour: 100000000000000}\n" +
                        "probes:\n" + PROBES)
                cls.agents[host] = LabAgent(ns, ["--config.file=" + config])
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for agent in getattr(cls, "agents", {}).values():
            agent.stop()
        try:
            lab("down")
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_alive(self):
        for host, agent in self.agents.items():
            if not agent.alive():
                self.fail("agent %s died (rc=%s); its log ends:\n%s" % (
                    host, agent.proc.poll(), "\n".join(agent.stderr_lines()[-30:])))

    def timeouts(self, agent):
        samples = agent.samples()
        return {kind: sum(find(samples, "rail_probe_errors_total", kind=kind, reason="timeout"))
                for kind in WANTED}

    def test_timed_out_put_runs_leave_both_agents_alive(self):
        deadline = time.monotonic() + WAIT_TIMEOUT
        seen = {}
        while True:
            self.assert_alive()
            seen = {host: self.timeouts(agent) for host, agent in self.agents.items()}
            if all(seen[host][kind] >= wanted for host in seen for kind, wanted in WANTED.items()):
                break
            if time.monotonic() > deadline:
                self.fail("too few timed-out runs within %.0f s (wanted %s): %s" % (
                    WAIT_TIMEOUT, WANTED, seen))
            time.sleep(2)
        print("timed-out runs per agent: %s" % seen)
        # The peer dying used to show up a moment after the run that killed it.
        time.sleep(3)
        self.assert_alive()
        for host, agent in self.agents.items():
            samples = agent.samples()
            self.assertIn("rail_exporter_build_info", agent.scrape())
            # Each agent served the other's runs as a responder, and still listens.
            served = sum(find(samples, "rail_responder_sessions_total"))
            self.assertGreater(served, 0, "agent %s served no probe session" % host)


if __name__ == "__main__":
    harness.main()
