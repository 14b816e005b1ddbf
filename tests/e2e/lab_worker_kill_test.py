#!/usr/bin/python3
"""Initiators killed during UCX put runs: the responder's agent keeps serving (issue 11).

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

With UCX 1.13 over tcp, an initiator that dies while its puts are in flight can make the
responder's UCX abort its process ("Fatal: unexpected error" in ucp_put_handler): before the
probe worker, that process was the agent (host b's died with SIGABRT at the 8th kill of a lab
run). Now every UCX context lives in the agent's probe worker process (rail/probe/worker.h).

Agents on host a and b probe each other (ucx_throughput put) every few seconds. Then, KILLS
times, `rail_exporter probe` in host a starts a put run against host b's responder and is
killed with SIGKILL ~1 s into it (its own probe worker dies with it: PR_SET_PDEATHSIG), while a
thread scrapes host b's agent twice a second. Checked: every scrape answered, host b's agent is
the same process, the killed initiators left no worker behind, host b counted its worker's
deaths (if UCX aborted it) as rail_exporter_probe_worker_restarts_total, and afterwards host b's
worker runs again, its next scheduled probe of host a succeeds and a new initiator's put run
against it succeeds.
"""

import os
import signal
import subprocess
import threading
import time

import harness
import lab
from lab import find, running

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlkill")
KILLS = int(os.environ.get("RAIL_WORKER_KILLS", "20"))
# The agents' own probes; bulk budget per rail: 2 x (1 s + 10 s timeout) / (60 s x 0.9) < 0.5.
PROBES = ("  - {kind: ucx_throughput, operation: put, rails: [rail0], message_sizes: [1048576],"
          " duration: 1s, interval: 60s, jitter: 0.1}\n"
          "  - {kind: ucx_rtt, rails: [rail0], duration: 500ms, timeout: 5s, interval: 10s,"
          " jitter: 0.1}\n")



class Scraper(threading.Thread):
    """Scrapes an agent every `period` seconds until stopped; counts answers and failures."""

    def __init__(self, agent, period=0.5):
        super().__init__(daemon=True)
        self.agent, self.period = agent, period
        self.answered, self.failures = 0, []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                if "rail_exporter_build_info" in self.agent.scrape():
                    self.answered += 1
                else:
                    self.failures.append("scrape without rail_exporter_build_info")
            except AssertionError as error:
                self.failures.append(str(error))
            self.stopping.wait(self.period)


class LabWorkerKillTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-lab-kill-"

    @classmethod
    def set_up_lab(cls):
        cls.secret = cls.lab.secret("secret", "lab-kill-secret\n")
        cls.agents = cls.lab.start_probing_pair(cls.secret, PROBES)

    def initiator(self, duration="3s"):
        """`rail_exporter probe` in host a: a put run against host b's responder over rail 0."""
        return subprocess.Popen(
            ["ip", "netns", "exec", self.lab.ns["a"], harness.BINARY, "probe",
             "--config.file=" + os.path.join(self.lab.tmp, "a.yaml"),
             "--peer=" + lab.peer_address("b"), "--kind=ucx_throughput", "--operation=put",
             "--rail=rail0", "--duration=" + duration, "--output=json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def kill_during_put(self, number):
        initiator = self.initiator()
        time.sleep(0.8 + 0.05 * (number % 8))  # set-up done, puts in flight
        workers = lab.children(initiator.pid)
        initiator.send_signal(signal.SIGKILL)
        initiator.communicate(timeout=30)
        return workers

    def worker_samples(self, agent):
        samples = agent.samples()
        restarts = {labels["reason"]: value for name, labels, value in samples
                    if name == "rail_exporter_probe_worker_restarts_total"}
        return samples, restarts

    def test_killed_initiators_never_stop_the_responder_agent(self):
        agent_b = self.agents["b"]
        pid_b = agent_b.proc.pid
        scraper = Scraper(agent_b)
        scraper.start()
        orphans = []
        try:
            for number in range(KILLS):
                for worker in self.kill_during_put(number):
                    if not lab.wait_until(lambda w=worker: not running(w), 5, 0.1):
                        orphans.append(worker)
        finally:
            time.sleep(2)
            scraper.stopping.set()
            scraper.join()
        self.assertTrue(agent_b.alive(), "\n".join(agent_b.stderr_lines()[-30:]))
        self.assertEqual(agent_b.proc.pid, pid_b)
        self.assertEqual(scraper.failures, [], "scrapes of host b failed during the kills")
        self.assertGreater(scraper.answered, KILLS)
        self.assertEqual(orphans, [], "killed initiators left probe workers behind")
        _, restarts = self.worker_samples(agent_b)
        print("%d initiators killed during put runs; host b answered %d scrapes, 0 failed; "
              "host b's worker restarts by reason: %s" % (KILLS, scraper.answered, restarts))

        # Host b's worker runs again, and host b's next probe of host a succeeds.
        up, samples = agent_b.wait_for(
            lambda s: find(s, "rail_exporter_probe_worker_up") == [1.0], 30, 0.5)
        self.assertTrue(up, "host b's probe worker is not back: %s" % [
            sample for sample in samples if "probe_worker" in sample[0]])
        runs_before = sum(find(samples, "rail_probe_runs_total", kind="ucx_rtt"))
        ok, samples = agent_b.wait_for(
            lambda s: sum(find(s, "rail_probe_runs_total", kind="ucx_rtt")) > runs_before and
            lab.all_ones(find(s, "rail_probe_success", kind="ucx_rtt")), 60, 1)
        self.assertTrue(ok, "no successful ucx_rtt probe of host b after the kills: %s" % [
            sample for sample in samples if sample[0] in ("rail_probe_success",
                                                          "rail_probe_errors_total")])
        # And host b still serves a put run.
        initiator = self.initiator("1s")
        output, errors = initiator.communicate(timeout=60)
        self.assertEqual(initiator.returncode, 0, output + errors)


if __name__ == "__main__":
    harness.main()
