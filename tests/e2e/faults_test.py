#!/usr/bin/python3
"""Faults injected into running agents (issue 5): each one is reported with a reason, /metrics
keeps answering throughout, and the agent recovers without a restart.

Lab faults (root, network namespaces through scripts/lab; skipped with a message otherwise):
the peer killed with SIGKILL in the middle of a TCP and a UCX transfer; a rail's link set down in
the middle of a transfer and up again; a rail's veth pair deleted and re-created; a peer that
runs another agent version (the rail_exporter_other_version build of the same sources); the
peer's wall clock stepped forward and back (libfaketime, monotonic clock untouched, as an NTP
step does). The fixture-tree faults are in fixture_faults_test.py.

Agents A and B run in namespaces ${RAIL_LAB_PREFIX:-rlfault}-a and -b; A probes B. While a
lab test runs, a thread scrapes A every half second; every scrape must answer 200.
"""

import glob
import os
import re
import threading
import time

import harness
import lab
from lab import find, all_ones

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlfault")
PEER_B = lab.peer_address("b")
PEER_A = lab.peer_address("a")
WAIT = 60.0  # seconds for any awaited state of a lab agent


def libfaketime():
    """Debian's libfaketime (package libfaketime, pulled in by faketime), or None."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))
    return found[0] if found else None


class Scraper(threading.Thread):
    """Scrapes an agent every half second until stopped; counts the scrapes that failed."""

    def __init__(self, agent):
        super().__init__(daemon=True)
        self.agent = agent
        self.ok = 0
        self.failures = []
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.wait(0.5):
            try:
                if "rail_exporter_build_info" not in self.agent.scrape():
                    self.failures.append("scrape without rail_exporter_build_info")
                else:
                    self.ok += 1
            except AssertionError as error:
                self.failures.append(str(error))

    def stop(self):
        self._stop_event.set()
        self.join(timeout=30)


def errors_by_reason(samples, kind, rail=None):
    """{reason: count} of rail_probe_errors_total for one kind (and rail)."""
    reasons = {}
    for name, labels, value in samples:
        if name != "rail_probe_errors_total" or labels.get("kind") != kind:
            continue
        if rail is not None and labels.get("rail") != rail:
            continue
        reasons[labels["reason"]] = reasons.get(labels["reason"], 0) + value
    return reasons


class LabFaultsTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-faults-"

    @classmethod
    def set_up_lab(cls):
        cls.secret = cls.lab.secret("secret", "lab-shared-secret\n")
        cls.config_b = cls.lab.config("b.yaml", "b", secret=cls.secret)
        cls.agent_b = cls.lab.start_agent("b", ["--config.file=" + cls.config_b])

    def restart_b(self, binary=None, env=(), config=None):
        self.agent_b.stop()
        type(self).agent_b = self.lab.start_agent(
            "b", ["--config.file=" + (config or self.config_b)], binary=binary, env=env)

    def config_a(self, name, probes):
        """A's configuration with these probe lines (jitter 0: the first run starts at once)."""
        return self.lab.config(name, "a", secret=self.secret, peers={"b": PEER_B}, probes=probes)

    def start_a(self, name, probes):
        """Agent A with these probes, and a Scraper on it that the test's cleanup checks."""
        agent = self.lab.start_agent("a", ["--config.file=" + self.config_a(name, probes)])
        scraper = Scraper(agent)
        scraper.start()

        def check():
            scraper.stop()
            alive = agent.alive()
            log = agent.stderr_text()
            agent.stop()
            print("%s: %d scrapes answered during the test" % (self.id(), scraper.ok))
            for line in log.splitlines():
                if " failed: " in line:
                    print("  A: " + line)
            self.assertTrue(alive, "agent A died:\n" + log)
            self.assertEqual(scraper.failures, [], "scrapes of A failed during the fault")
            self.assertGreater(scraper.ok, 5)
        self.addCleanup(check)
        return agent

    def wait_for(self, agent, what, predicate, timeout=WAIT):
        """Polls agent's samples until predicate(samples) is truthy; returns its value."""
        value, samples = agent.wait_for(predicate, timeout, 0.5)
        if value:
            return value
        self.fail("%s: not within %.0f s; probe series:\n%s" % (what, timeout, "\n".join(
            "%s %s %s" % sample for sample in samples if sample[0].startswith(("rail_probe_s",
                                                                                 "rail_probe_e",
                                                                                 "rail_pre")))))

    def succeeded_since(self, samples, kind, rail, since):
        """Every series of kind on rail last ran after `since` (wall clock) and succeeded."""
        last = find(samples, "rail_probe_last_run_timestamp_seconds", kind=kind, rail=rail)
        ok = find(samples, "rail_probe_success", kind=kind, rail=rail)
        return bool(last) and min(last) > since and all_ones(ok)

    def wait_for_traffic(self, netdevs, min_bytes=20_000_000, timeout=20.0):
        """Waits until each of A's netdevs sent min_bytes more than when called."""
        before = {dev: self.lab.tx_bytes("a", dev) for dev in netdevs}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            moved = {dev: self.lab.tx_bytes("a", dev) - before[dev] for dev in netdevs}
            if all(value >= min_bytes for value in moved.values()):
                return moved
            time.sleep(0.1)
        self.fail("no transfer on %s within %.0f s" % (netdevs, timeout))

    def assert_failure_logged(self, agent, kind, reasons):
        pattern = r"probe %s\S* failed: (%s):" % (kind, "|".join(map(re.escape, reasons)))
        self.assertTrue(re.search(pattern, agent.stderr_text()),
                        "no log line /%s/ in:\n%s" % (pattern, agent.stderr_text()))

    # -- the faults ------------------------------------------------------------------------

    def test_peer_killed_mid_transfer(self):
        agent_a = self.start_a("kill.yaml", (
            "  - {kind: tcp_throughput, rails: [rail0], streams: 2, duration: 6s, timeout: 9s,"
            " interval: 20s, jitter: 0}\n"
            "  - {kind: ucx_throughput, rails: [rail1], operation: put, duration: 6s,"
            " timeout: 9s, interval: 20s, jitter: 0}\n"))
        moved = self.wait_for_traffic(["ra0", "ra1"])
        self.agent_b.proc.kill()  # SIGKILL: no goodbye on any connection
        self.agent_b.proc.wait(timeout=10)
        killed_at = time.time()
        print("peer killed after %s bytes" % moved)

        def failed(samples):
            tcp = errors_by_reason(samples, "tcp_throughput", "rail0")
            ucx = errors_by_reason(samples, "ucx_throughput", "rail1")
            return (tcp, ucx) if tcp and ucx else None
        tcp, ucx = self.wait_for(agent_a, "both transfers fail", failed, timeout=30)
        print("reasons: tcp_throughput %s, ucx_throughput %s" % (tcp, ucx))
        self.assert_failure_logged(agent_a, "tcp_throughput", list(tcp))
        self.assert_failure_logged(agent_a, "ucx_throughput", list(ucx))
        samples = agent_a.samples()
        self.assertEqual(find(samples, "rail_probe_success", kind="tcp_throughput"), [0.0])
        self.assertEqual(find(samples, "rail_probe_success", kind="ucx_throughput"), [0.0])

        self.restart_b()
        self.wait_for(agent_a, "both probes succeed again after the peer's restart",
                      lambda s: self.succeeded_since(s, "tcp_throughput", "rail0", killed_at)
                      and self.succeeded_since(s, "ucx_throughput", "rail1", killed_at))

    def test_link_down_and_up_during_a_probe(self):
        agent_a = self.start_a("link.yaml", (
            "  - {kind: tcp_throughput, rails: [rail1], streams: 2, duration: 6s, timeout: 9s,"
            " interval: 20s, jitter: 0}\n"
            "  - {kind: ucx_rtt, rails: [rail1], duration: 1s, timeout: 3s, interval: 5s,"
            " jitter: 0}\n"))
        self.wait_for_traffic(["ra1"])
        self.lab.exec("a", ["ip", "link", "set", "ra1", "down"])
        down_at = time.time()
        try:
            # The transfer the link went down under: it fails, or it reports what it moved over
            # the whole time it tried, not the rate of its first seconds.
            ended = self.wait_for(agent_a, "the transfer in flight ends", lambda s: find(
                s, "rail_probe_runs_total", kind="tcp_throughput", rail="rail1") == [1.0] and s)
            in_flight = {name: find(ended, name, kind="tcp_throughput", rail="rail1") for name in
                         ("rail_probe_success", "rail_probe_duration_seconds",
                          "rail_probe_throughput_bytes_per_second", "rail_probe_bytes")}
            print("transfer in flight when the link went down: %s" % in_flight)
            if in_flight["rail_probe_success"] == [1.0]:
                self.assertGreater(in_flight["rail_probe_duration_seconds"][0], 6 * 0.9)
            def failed(samples):
                return errors_by_reason(samples, "tcp_throughput", "rail1") or None
            reasons = self.wait_for(agent_a, "tcp_throughput on rail1 fails", failed, timeout=40)
            samples = agent_a.samples()
            self.assertEqual(find(samples, "rail_netdev_up", netdev="ra1"), [0.0])
            self.assertEqual(find(samples, "rail_netdev_up", netdev="ra0"), [1.0])
            rtt = self.wait_for(agent_a, "ucx_rtt on rail1 fails",
                                lambda s: errors_by_reason(s, "ucx_rtt", "rail1") or None)
            print("link down: tcp_throughput %s, ucx_rtt %s" % (reasons, rtt))
            self.assert_failure_logged(agent_a, "tcp_throughput", list(reasons))
        finally:
            self.lab.exec("a", ["ip", "link", "set", "ra1", "up"])
        up_at = time.time()
        self.wait_for(agent_a, "rail1 probes succeed again after the link came up",
                      lambda s: self.succeeded_since(s, "tcp_throughput", "rail1", up_at)
                      and self.succeeded_since(s, "ucx_rtt", "rail1", up_at))
        self.assertEqual(find(agent_a.samples(), "rail_netdev_up", netdev="ra1"), [1.0])
        print("link down for %.1f s" % (up_at - down_at))

    def test_rail_netdev_deleted_and_recreated(self):
        agent_a = self.start_a("netdev.yaml", (
            "  - {kind: tcp_rtt, rails: [rail1], duration: 1s, timeout: 3s, interval: 5s,"
            " jitter: 0}\n"
            "  - {kind: ucx_rtt, rails: [rail1], duration: 1s, timeout: 3s, interval: 5s,"
            " jitter: 0}\n"))
        started = time.time() - 1
        self.wait_for(agent_a, "rail1 probes succeed",
                      lambda s: self.succeeded_since(s, "tcp_rtt", "rail1", started)
                      and self.succeeded_since(s, "ucx_rtt", "rail1", started))
        self.lab.rail_del(1)
        try:
            self.wait_for(agent_a, "rail1 absent",
                          lambda s: find(s, "rail_present", rail="rail1") == [0.0])
            samples = agent_a.samples()
            self.assertEqual(find(samples, "rail_present", rail="rail0"), [1.0])
            self.assertEqual(find(samples, "rail_netdev_up", netdev="ra1"), [],
                             "a deleted netdev has no series")
            self.assertEqual(find(samples, "rail_info", rail="rail1"), [1.0],
                             "a configured rail stays listed while absent")
            self.assertEqual(find(self.agent_b.samples(), "rail_present", rail="rail1"), [0.0])
            tcp = self.wait_for(agent_a, "tcp_rtt on the deleted rail fails",
                                lambda s: errors_by_reason(s, "tcp_rtt", "rail1") or None)
            ucx = self.wait_for(agent_a, "ucx_rtt on the deleted rail fails",
                                lambda s: errors_by_reason(s, "ucx_rtt", "rail1") or None)
            print("netdev deleted: tcp_rtt %s, ucx_rtt %s" % (tcp, ucx))
            self.assert_failure_logged(agent_a, "tcp_rtt", list(tcp))
            self.assert_failure_logged(agent_a, "ucx_rtt", list(ucx))
        finally:
            self.lab.rail_add(1)
        added = time.time()
        self.wait_for(agent_a, "rail1 present and probed again",
                      lambda s: find(s, "rail_present", rail="rail1") == [1.0]
                      and self.succeeded_since(s, "tcp_rtt", "rail1", added)
                      and self.succeeded_since(s, "ucx_rtt", "rail1", added))

    def test_peer_of_another_version(self):
        other_version_binary = harness.OPTIONS.get("other-version-binary")
        if not other_version_binary or not os.access(other_version_binary, os.X_OK):
            self.fail("--other-version-binary (the rail_exporter_other_version target) missing")
        other = harness.run_to_exit(["--version"]).stdout
        print("this build: %s" % other.strip())
        agent_a = self.start_a("version.yaml", (
            "  - {kind: tcp_rtt, rails: [rail0], duration: 1s, timeout: 3s, interval: 4s,"
            " jitter: 0}\n"))
        self.wait_for(agent_a, "versions match first",
                      lambda s: find(s, "rail_peer_version_mismatch", peer="b") == [0.0])
        self.restart_b(binary=other_version_binary)
        try:
            mismatch = self.wait_for(
                agent_a, "rail_peer_version_mismatch 1",
                lambda s: find(s, "rail_peer_version_mismatch", peer="b") == [1.0] and s)
            versions = [labels["agent_version"] for name, labels, _ in mismatch
                        if name == "rail_peer_info" and labels.get("peer") == "b"]
            ours = [labels["version"] for name, labels, _ in mismatch
                    if name == "rail_exporter_build_info"]
            print("peer b reports agent_version %s, ours %s" % (versions, ours))
            self.assertEqual(len(versions), 1)
            self.assertTrue(versions[0].endswith("+e2e.other"), versions)
            self.assertNotEqual(versions, ours)
            # Another version is reported, not refused: the probes go on.
            self.assertEqual(find(mismatch, "rail_probe_success", kind="tcp_rtt"), [1.0])
            # The peer sees it too, from its side.
            self.assertIn(1.0, find(self.agent_b.samples(),
                                    "rail_responder_peer_version_mismatch"))
        finally:
            self.restart_b()
        self.wait_for(agent_a, "mismatch back to 0 with the same version",
                      lambda s: find(s, "rail_peer_version_mismatch", peer="b") == [0.0])

    def test_peer_clock_stepped(self):
        preload = libfaketime()
        if preload is None:
            self.fail("libfaketime is not installed (scripts/install-deps installs faketime)")
        # B probes A too, so that B's own results carry B's wall clock (finished_at).
        config_b = self.lab.config("b-probing.yaml", "b", secret=self.secret,
                                   peers={"a": PEER_A}, budget=None, probes=(
                                       "  - {kind: tcp_rtt, rails: [rail0], duration: 1s,"
                                       " timeout: 3s, interval: 4s, jitter: 0}\n"))
        clock = self.lab.write("faketime", "+0\n")
        # The wall clock only, re-read every second: an NTP step while B runs. The monotonic
        # clock, which every deadline uses, never steps.
        env = {"LD_PRELOAD": preload, "FAKETIME_TIMESTAMP_FILE": clock,
               "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        self.restart_b(env=env, config=config_b)
        self.addCleanup(self.restart_b)
        agent_a = self.start_a("clock.yaml", (
            "  - {kind: tcp_rtt, rails: [rail0], duration: 1s, timeout: 3s, interval: 4s,"
            " jitter: 0}\n"
            "  - {kind: ucx_rtt, rails: [rail1], duration: 1s, timeout: 3s, interval: 4s,"
            " jitter: 0}\n"))

        def b_clock_offset(samples):
            last = find(samples, "rail_probe_last_run_timestamp_seconds", kind="tcp_rtt")
            return (max(last) - time.time()) if last else None

        def auth_refusals():
            a = sum(find(agent_a.samples(), "rail_responder_errors_total"))
            b = sum(find(self.agent_b.samples(), "rail_responder_errors_total"))
            return a, b

        refusals = errors = None
        for step, offset in (("+0", 0), ("+2h", 7200), ("-1d", -86400), ("+0", 0)):
            with open(clock, "w") as handle:
                handle.write(step + "\n")
            stepped = time.time()
            # B's next results are stamped with its stepped clock (within a run's slack)...
            self.wait_for(self.agent_b, "B's clock at %s" % step,
                          lambda s: b_clock_offset(s) is not None
                          and abs(b_clock_offset(s) - offset) < 30
                          and all_ones(find(s, "rail_probe_success", kind="tcp_rtt")))
            # ...and both directions keep working: no refusal, no failure.
            self.wait_for(agent_a, "A's probes of B succeed with B at %s" % step,
                          lambda s: self.succeeded_since(s, "tcp_rtt", "rail0", stepped)
                          and self.succeeded_since(s, "ucx_rtt", "rail1", stepped))
            if refusals is None:  # B probed A before A was up: count from here on
                refusals = auth_refusals()
                errors = (errors_by_reason(agent_a.samples(), "tcp_rtt"),
                          errors_by_reason(self.agent_b.samples(), "tcp_rtt"))
            print("B's clock %s: B stamps its results %.0f s off; refusals (A, B) %s" % (
                step, b_clock_offset(self.agent_b.samples()), auth_refusals()))
        self.assertEqual(auth_refusals(), refusals,
                         "a peer's wall clock is no part of the handshake: nothing is refused")
        self.assertEqual((errors_by_reason(agent_a.samples(), "tcp_rtt"),
                          errors_by_reason(self.agent_b.samples(), "tcp_rtt")), errors,
                         "no probe failed in either direction while B's clock stepped")


if __name__ == "__main__":
    harness.main(path_options=["--other-version-binary"])
