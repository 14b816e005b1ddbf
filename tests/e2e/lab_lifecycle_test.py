#!/usr/bin/python3
"""The agent stopped at random moments while it is scraped and probed, and reloaded while it is
scraped (issue 21).

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

Host b runs an agent that answers probes and probes host a's responder every second over both
rails (tcp_rtt, ucx_rtt): host a's responder always has sessions. Host a's agent has a responder,
finds its peers through a file_sd file (fleet discovery, both responders listed) and probes them
by the fleet plan (tcp_rtt, ucx_rtt every second). Six clients scrape host a's /metrics and /
over its management link all the time.

test_stops: STOPS times (RAIL_STOP_CYCLES, default 30), host a's agent is started and sent
SIGTERM at a random moment (0 to 4 s, RAIL_STOP_LATEST_SECONDS, after its own binary started: during the start, with the
worker coming up, and while serving, with probes and sessions in flight); the seed is printed and can be given
back with RAIL_STOP_SEED. Each stop must end with exit status 0 within STOP_BOUND seconds (the
bound docs/deploy.md states; the unit's TimeoutStopSec is above it), the probe worker the agent
had started must be gone, and host b's agent must log every session the stopping responder ended
as a `shutdown` refusal: no probe of host a by host b may fail with any other reason than
`shutdown` or a refused connection (host a not listening between two lives), except runs that
host b's own worker took down with it when UCX 1.13 asserted in it (a peer gone during wire-up),
which are allowed only with that assertion in host b's log, and counted.

test_reload: host a's agent with --web.enable-lifecycle, continuously scraped by six clients,
is given a new file (one probe added, one removed, one unchanged) by POST /-/reload, then a bad
file by SIGHUP and by POST, then a file changing a restart-only setting. No scrape is refused or
answered 5xx, the unchanged probe's rail_probe_runs_total never decreases in any client's
scrapes, the removed probe's series go and the added one's come, and
rail_exporter_config_last_reload_successful follows (1, 0, 0), its success timestamp moving only
with the good file. Host b's agent (no --web.enable-lifecycle) answers POST /-/reload with 403.
"""

import http.client
import os
import random
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import figure_invariants
import harness
import lab
from lab import find, running

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rllife")
MGMT_NET = os.environ.get("RAIL_LAB_MGMT_NET", "10.213.0")
STOPS = int(os.environ.get("RAIL_STOP_CYCLES", "30"))
SEED = int(os.environ.get("RAIL_STOP_SEED", str(random.SystemRandom().randrange(1 << 31))))
STOP_BOUND = 11.0  # seconds from SIGTERM to exit: the stop deadline (10 s, docs/deploy.md) + 1 s
# Seconds after the start at which the last SIGTERM may come (RAIL_STOP_LATEST_SECONDS): a
# sanitized build starts several times slower, and its stops must still reach a serving agent.
LATEST_STOP = float(os.environ.get("RAIL_STOP_LATEST_SECONDS", "4"))
SCRAPERS = 6
WEB_PORT = 19840
# Sessions all the time: four series (two kinds over two rails) each hold a session about 1 s of
# every 3 s, so a stop nearly always finds one open.
PROBES = ("  - {kind: tcp_rtt, interval: 3s, jitter: 0.1, duration: 1s, timeout: 2500ms}\n"
          "  - {kind: ucx_rtt, interval: 3s, jitter: 0.1, duration: 1s, timeout: 2500ms}\n")
# The probes above come faster than a responder admits by default (60 a minute per peer).
LIMITS = "probes_per_minute_per_peer: 600, probe_burst_per_peer: 100"
# A refused probe of a peer that does not listen: the only failure besides `shutdown` that a
# stopping peer may cause.
NOT_LISTENING = ("connect", "refused", "unreachable")



class Scrapers:
    """SCRAPERS threads that GET the paths of a URL in turn until stopped. Each keeps what it saw:
    refused connections, statuses >= 500, the value of one series per scrape, and the figure
    invariants (figure_invariants.py) each /metrics answer broke."""

    def __init__(self, base, series=None, stopping_ok=False):
        self.base, self.series = base, series  # series: (name, labels) to record per scrape
        self.stopping_ok = stopping_ok
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.answered, self.refused, self.server_errors = 0, 0, []
        self.figure_problems = []  # AssertionError texts of figure_invariants
        self.values = [[] for _ in range(SCRAPERS)]
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(SCRAPERS)]

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def run(self, index):
        paths = ("/metrics", "/")
        turn = 0
        while not self.stopping.is_set():
            path = paths[turn % len(paths)]
            turn += 1
            try:
                with urllib.request.urlopen(self.base + path, timeout=10) as response:
                    body = response.read().decode()
                with self.lock:
                    self.answered += 1
                if path == "/metrics":
                    try:
                        figure_invariants.assert_invariants(
                            body, "client %d's GET %s/metrics" % (index, self.base))
                    except AssertionError as error:
                        with self.lock:
                            self.figure_problems.append(str(error))
                if path == "/metrics" and self.series:
                    values = find(harness_samples(body), self.series[0], **self.series[1])
                    if values:
                        self.values[index].append(values[0])
            except urllib.error.HTTPError as error:
                try:
                    body = error.read().decode(errors="replace")
                except (OSError, http.client.HTTPException):
                    body = None  # cut: the endpoint stopped while it wrote the answer
                with self.lock:
                    # 503 "Stopping" is the answer of a server that stops: honest, and allowed
                    # only where the test stops the agent.
                    if error.code >= 500 and not (self.stopping_ok and error.code == 503 and
                                                  body in ("Stopping\n", None)):
                        self.server_errors.append("%s %d %s" % (path, error.code, body[:80]))
            except (OSError, urllib.error.URLError, http.client.HTTPException):
                # Refused, or cut: a response still in flight at the end of the stop's wait is cut.
                with self.lock:
                    self.refused += 1
                time.sleep(0.02)


def harness_samples(text):
    return [(name, dict(labels), value)
            for name, series in harness.parse_samples(text).items()
            for labels, value in series.items()]


class LifecycleTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    MGMT_NET = MGMT_NET
    TMP_PREFIX = "rail-lifecycle-"

    @classmethod
    def set_up_lab(cls):
        cls.secret = cls.lab.secret("secret", "lifecycle-test-secret\n")
        cls.targets = cls.lab.write(
            "targets.json", '[{"targets": ["%s", "%s"]}]' % (lab.peer_address("a"),
                                                              lab.peer_address("b")))
        cls.config_a = cls.lab.write("a.yaml", cls.config_a_text(PROBES))
        config_b = cls.lab.config("b.yaml", "b", secret=cls.secret, responder_name="b",
                                  limits=LIMITS,
                                  peers={"a": lab.peer_address("a")}, probes=PROBES)
        cls.agent_b = cls.lab.start_agent("b", ["--config.file=" + config_b],
                                          address=cls.lab.mgmt_address("b"),
                                          name="rail_exporter@b")

    @classmethod
    def config_a_text(cls, probes, fleet=True):
        text = lab.agent_config("a", secret=cls.secret, responder_name="a", probes=probes,
                                limits=LIMITS)
        if fleet:
            text += ("fleet:\n  peers_per_rail: 1\n  discovery:\n"
                     "    file_sd: [{files: ['%s'], refresh_interval: 1s}]\n" % cls.targets)
        return text

    def spawn_a(self, args, log_name):
        """Host a's agent on its management address, port WEB_PORT, not waited for."""
        log = open(os.path.join(self.lab.tmp, log_name), "w")
        self.addCleanup(log.close)
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.lab.ns_a, harness.BINARY, "--config.file=" +
             self.config_a, "--web.listen-address=%s:%d" % (self.lab.mgmt_address("a"),
                                                             WEB_PORT)] + list(args),
            stdout=subprocess.DEVNULL, stderr=log)
        self.addCleanup(lambda: process.poll() is None and process.kill())
        return process

    @staticmethod
    def exe_is_agent(pid):
        try:
            return os.path.samefile("/proc/%d/exe" % pid, harness.BINARY)
        except OSError:
            return False

    @staticmethod
    def blocks_stop_signals(pid):
        """Whether the agent's main() has blocked SIGTERM (its first instruction). Before that the
        process is still being loaded (the dynamic loader, a sanitizer runtime's start, tens of
        milliseconds under ASan), and a signal then gets its default action, as it would in any
        program: no moment of the agent's own life."""
        try:
            with open("/proc/%d/status" % pid) as handle:
                for line in handle:
                    if line.startswith("SigBlk:"):
                        return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
        except OSError:
            pass
        return False

    def read(self, name):
        with open(os.path.join(self.lab.tmp, name)) as handle:
            return handle.read()

    def b_failures_of_a(self):
        """Reasons of host b's failed probes of host a, from its log."""
        return re.findall(r"probe \S+/a/\S+ failed: ([\w:]+):", self.agent_b.stderr_text())

    def test_stops(self):
        print("lab_lifecycle: %d stops, seed %d (RAIL_STOP_SEED)" % (STOPS, SEED))
        with open(self.config_a, "w") as handle:  # test_reload may have run first
            handle.write(self.config_a_text(PROBES))
        rng = random.Random(SEED)
        base = "http://%s:%d" % (self.lab.mgmt_address("a"), WEB_PORT)
        durations, with_worker = [], 0
        with Scrapers(base, stopping_ok=True) as scrapers:
            for cycle in range(STOPS):
                log_name = "a-stop-%d.log" % cycle
                process = self.spawn_a([], log_name)
                # From the moment the agent's own code runs: before, the process is still the
                # `ip netns exec` that starts it, or the agent's image being loaded.
                self.assertTrue(lab.wait_until(
                    lambda: self.exe_is_agent(process.pid) and
                    self.blocks_stop_signals(process.pid), 10, 0.002),
                    "the agent never started")
                time.sleep(rng.uniform(0, LATEST_STOP))
                workers = lab.children(process.pid)
                with_worker += bool(workers)
                start = time.monotonic()
                process.send_signal(signal.SIGTERM)
                try:
                    status = process.wait(timeout=STOP_BOUND + 10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    status = "hung"
                elapsed = time.monotonic() - start
                durations.append(elapsed)
                log = self.read(log_name)
                context = "stop %d (seed %d): %s" % (cycle, SEED, log[-3000:])
                # Under the sanitizer builds the agent's and its worker's reports land here.
                self.assertNotRegex(log, "Sanitizer|runtime error:", context)
                self.assertEqual(status, 0, context)
                self.assertLessEqual(elapsed, STOP_BOUND, context)
                for pid in workers:
                    self.assertFalse(running(pid), "process %d outlived its agent: %s" %
                                     (pid, context))
        durations.sort()
        print("lab_lifecycle: stop took median %.2f s, max %.2f s; %d of %d stops had a worker; "
              "%d scrapes answered" % (durations[len(durations) // 2], durations[-1],
                                       with_worker, STOPS, scrapers.answered))
        self.assertGreater(scrapers.answered, 0)
        self.assertEqual(scrapers.server_errors, [])
        self.assertEqual(scrapers.figure_problems, [])
        reasons = self.b_failures_of_a()
        print("lab_lifecycle: host b's failed probes of host a, by reason: %s" %
              {reason: reasons.count(reason) for reason in set(reasons)})
        self.assertIn("shutdown", reasons, "no session of host b was ended by a stop")
        unexpected = [reason for reason in reasons if reason != "shutdown" and
                      not any(word in reason for word in NOT_LISTENING)]
        # UCX 1.13 aborts a process whose endpoint's peer goes away during wire-up (wireup_ep.c
        # asserts): that is why UCX runs in the worker process, which the agent restarts. Host b's
        # probes that its own worker's death ended are reported, and allowed only with UCX's
        # assertion in its log; anything else is a session the stop did not end with `shutdown`.
        b_log = self.agent_b.stderr_text()
        ucx_aborts = len(re.findall(r"\.c:\d+\s+Assertion .* failed", b_log))
        if ucx_aborts:
            print("lab_lifecycle: UCX asserted %d time(s) in host b's worker" % ucx_aborts)
            unexpected = [reason for reason in unexpected
                          if reason not in ("worker_crashed", "worker_unavailable")]
        self.assertEqual(unexpected, [], b_log[-5000:])

    def post_reload(self, target):
        request = urllib.request.Request("http://%s/-/reload" % target, data=b"", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def scrape_a(self, base):
        with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
            return harness_samples(figure_invariants.assert_invariants(
                response.read().decode(), "GET %s/metrics" % base))

    def test_reload(self):
        kept = {"kind": "tcp_rtt", "rail": "rail0", "peer": "b"}
        first = ("  - {kind: tcp_rtt, peers: [b], rails: [rail0], interval: 1500ms, duration: 200ms,"
                 " timeout: 1s}\n"
                 "  - {kind: ucx_rtt, peers: [b], rails: [rail1], interval: 1500ms, duration: 200ms,"
                 " timeout: 1s}\n")
        second = ("  - {kind: tcp_rtt, peers: [b], rails: [rail0], interval: 1500ms, duration: 200ms,"
                 " timeout: 1s}\n"
                  "  - {kind: tcp_rtt, peers: [b], rails: [rail1], interval: 1500ms, duration: 200ms,"
                  " timeout: 1s}\n")
        with open(self.config_a, "w") as handle:
            handle.write(self.config_a_text(first, fleet=False) +
                         "peers:\n  - {name: b, address: '%s'}\n" % lab.peer_address("b"))
        process = self.spawn_a(["--web.enable-lifecycle"], "a-reload.log")
        base = "http://%s:%d" % (self.lab.mgmt_address("a"), WEB_PORT)
        target = "%s:%d" % (self.lab.mgmt_address("a"), WEB_PORT)
        self.assertTrue(lab.wait_until(lambda: re.search(harness.LISTENING,
                                                         self.read("a-reload.log")), 30, 0.2))

        def runs(samples, **labels):
            return find(samples, "rail_probe_runs_total", **labels)

        self.assertTrue(lab.wait_until(lambda: (runs(self.scrape_a(base), **kept) or [0])[0] >= 2
                                       and runs(self.scrape_a(base), kind="ucx_rtt"), 60))
        with Scrapers(base, ("rail_probe_runs_total", kept)) as scrapers:
            time.sleep(2)
            before = self.scrape_a(base)
            stamp = find(before, "rail_exporter_config_last_reload_success_timestamp_seconds")
            with open(self.config_a, "w") as handle:
                handle.write(self.config_a_text(second, fleet=False) +
                             "peers:\n  - {name: b, address: '%s'}\n" % lab.peer_address("b"))
            status, body = self.post_reload(target)
            self.assertEqual((status, body), (200, "OK\n"))
            added = lab.wait_until(lambda: runs(self.scrape_a(base), kind="tcp_rtt",
                                                rail="rail1"), 30)
            self.assertTrue(added, "the added probe never ran")
            after = self.scrape_a(base)
            self.assertEqual(runs(after, kind="ucx_rtt"), [], "the removed probe's series stayed")
            self.assertEqual(find(after, "rail_exporter_config_last_reload_successful"), [1.0])
            self.assertGreater(
                find(after, "rail_exporter_config_last_reload_success_timestamp_seconds"), stamp)

            with open(self.config_a, "w") as handle:
                handle.write("probes: [this is not a probe\n")
            process.send_signal(signal.SIGHUP)
            self.assertTrue(lab.wait_until(
                lambda: "reload (SIGHUP) refused" in self.read("a-reload.log"), 20, 0.2))
            status, body = self.post_reload(target)
            self.assertEqual(status, 500, body)
            self.assertIn("failed to reload config", body)
            with open(self.config_a, "w") as handle:  # a restart-only change: the responder's
                handle.write(self.config_a_text(second, fleet=False).replace(
                    "  name: a\n", "  name: a-renamed\n") +
                    "peers:\n  - {name: b, address: '%s'}\n" % lab.peer_address("b"))
            status, body = self.post_reload(target)
            self.assertEqual(status, 500, body)
            self.assertIn("restart", body)
            refused = self.scrape_a(base)
            self.assertEqual(find(refused, "rail_exporter_config_last_reload_successful"), [0.0])
            self.assertEqual(
                find(refused, "rail_exporter_config_last_reload_success_timestamp_seconds"),
                find(after, "rail_exporter_config_last_reload_success_timestamp_seconds"))
            self.assertTrue(runs(refused, kind="tcp_rtt", rail="rail1"))
            time.sleep(3)
        self.assertTrue(process.poll() is None, "the agent died: " + self.read("a-reload.log"))
        self.assertEqual(scrapers.refused, 0)
        self.assertEqual(scrapers.server_errors, [])
        self.assertEqual(scrapers.figure_problems, [])
        for values in scrapers.values:
            self.assertTrue(values, "a client never saw the kept probe's runs")
            self.assertEqual(values, sorted(values), "rail_probe_runs_total decreased")
        self.assertGreater(max(max(values) for values in scrapers.values),
                           min(min(values) for values in scrapers.values))
        status, _ = self.post_reload(self.agent_b.target)
        self.assertEqual(status, 403)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(timeout=STOP_BOUND + 10), 0)


if __name__ == "__main__":
    harness.main()
