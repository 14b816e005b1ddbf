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
import time

import harness
import lab
from lab import find

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rltmo")
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


class LabUcxTimeoutTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-lab-tmo-"

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "lab-timeout-secret\n")
        cls.agents = cls.lab.start_probing_pair(secret, PROBES, peer_name="peer")

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
        seen = {}

        def enough():
            self.assert_alive()
            seen.update({host: self.timeouts(agent) for host, agent in self.agents.items()})
            return all(seen[host][kind] >= wanted for host in seen
                       for kind, wanted in WANTED.items())
        if not lab.wait_until(enough, WAIT_TIMEOUT, 2):
            self.fail("too few timed-out runs within %.0f s (wanted %s): %s" % (
                WAIT_TIMEOUT, WANTED, seen))
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
