#!/usr/bin/python3
"""Three initiators probe one responder at once in the network-namespace lab (issue 11).

Host b runs one responder agent; host a runs three agents (responders on ports of their own),
each probing b over both rails with tcp_throughput and ucx_throughput on short intervals, so that
their bulk runs really collide, and with short tcp_rtt and ucx_rtt runs. For RAIL_LAB_BUSY_SECONDS (default
120: three rounds of the 40 s bulk jobs) every agent is scraped every few seconds. What it shows:

* the responder admits one bulk run at a time (bulk_concurrency: host, the default): its count
  of overlapping bulk transfers (rail_responder_bulk_overlaps_total) is 0, and it served bulk
  transfers all along;
* the initiators were told busy and retried (rail_probe_busy_total > 0), which proves they
  collided;
* busy never reads as a failure: no scrape of any initiator shows rail_probe_success 0 or a
  failing rail_check_ok (probe_throughput included, unless RAIL_LAB_BUSY_STRICT=0, see STRICT),
  and every kind succeeded on every rail.

Needs root (network namespaces); skips with a message otherwise.
"""

import os
import statistics
import sys
import time

import harness
import lab
from lab import find

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlbusy")
DURATION = float(os.environ.get("RAIL_LAB_BUSY_SECONDS", "120"))
POLL = 5.0  # seconds between scrapes of every agent
INITIATORS = ("a1", "a2", "a3")
INITIATOR_PORTS = {"a1": 9851, "a2": 9852, "a3": 9853}  # their own responders, in host a
BULK_KINDS = ("tcp_throughput", "ucx_throughput")
KINDS = BULK_KINDS + ("tcp_rtt", "ucx_rtt")
# Each initiator has four bulk jobs (two kinds on two rails), 1 s of data each: twelve runs of
# about 1.5 s every 40 s at the responder, about half its time, and every first run within 4 s
# of the start: they collide. Each rail's two bulk jobs take 2 x 5 s / 36 s = 28% of the budget.
# The RTT kinds busy-poll (ucx_rtt) or ping-pong flat out for their duration, and the lab's four
# agents share this machine's cores: short RTT runs keep them from starving the bulk transfer
# under way (at 1 s every 10 s the three initiators' RTT runs took more than a core, and bulk
# runs measured 0.5..11 Gbit/s on healthy veths).

RESPONDER_LIMITS = ("probes_per_minute_per_peer: 600, probe_burst_per_peer: 100, "
                    "max_connections_per_ip: 32, max_concurrent_sessions: 64")
PROBES = (
    "  - {kind: tcp_throughput, streams: 2, duration: 1s, timeout: 5s, interval: 40s}\n"
    "  - {kind: ucx_throughput, operation: put, duration: 1s, timeout: 5s, interval: 40s}\n"
    "  - {kind: tcp_rtt, duration: 250ms, timeout: 5s, interval: 20s}\n"
    "  - {kind: ucx_rtt, duration: 250ms, timeout: 5s, interval: 20s}\n")


def initiator_config(secret, port):
    """An agent of host a with its responder on `port` (three share the host), probing b."""
    return (lab.rails_yaml("a") +
            "responder: {listen_address: ':%d', secret_file: %s}\n" % (port, secret) +
            "peers:\n  - {name: b, address: '%s'}\n" % lab.peer_address("b") +
            lab.BUDGET + "probes:\n" + PROBES)


# The probe_throughput verdict compares each rail's latest throughput with its sibling's. With the
# RTT kinds kept off bulk transfers by the responder's gate too, the spread of the runs shrank to
# 17..23 Gbit/s (tcp) and 12..14 Gbit/s (ucx), and the verdict held in 180 of 180 scrapes (it
# failed in 24 of 180 while a busy-polling ucx_rtt could run beside a transfer on these 2 cores).
# On a machine shared with other work the veths' throughput follows whatever else runs on its
# cores: RAIL_LAB_BUSY_STRICT=0 then reports that verdict's failures instead of asserting them.
STRICT = os.environ.get("RAIL_LAB_BUSY_STRICT", "1") != "0"
NOISY_CHECKS = () if STRICT else ("probe_throughput",)


def failing(samples):
    """What reads as a failure in one scrape: probe_success 0 and failing verdicts, split into
    (asserted, noisy)."""
    bad = ["rail_probe_success %s" % labels for name, labels, value in samples
           if name == "rail_probe_success" and value != 1.0]
    noisy = []
    for name, labels, value in samples:
        if name == "rail_check_ok" and value != 1.0:
            (noisy if labels.get("check") in NOISY_CHECKS else bad).append(
                "rail_check_ok %s" % labels)
    return bad, noisy


class LabBusyTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "lab-busy-secret\n")
        # The three initiators share host a's address, which the responder's per-address limits
        # count as one peer: give that address room for three agents' probes.
        config_b = cls.lab.config("b.yaml", "b", secret=secret, limits=RESPONDER_LIMITS)
        cls.responder = cls.lab.start_agent("b", ["--config.file=" + config_b])
        cls.initiators = {}
        for name in INITIATORS:
            config = cls.lab.write(name + ".yaml", initiator_config(secret, INITIATOR_PORTS[name]))
            cls.initiators[name] = cls.lab.start_agent("a", ["--config.file=" + config],
                                                       name="rail_exporter@" + name)

    def test_collisions_are_busy_never_failures_and_nothing_overlaps(self):
        started = time.monotonic()
        failures = []  # (seconds, agent, what)
        noisy_failures = []
        succeeded = {name: set() for name in INITIATORS}  # (kind, rail) seen at 1
        throughput = {}  # (kind, rail): [bytes/s of every current sample]
        last = {}
        scrapes = 0
        while time.monotonic() - started < DURATION:
            time.sleep(POLL)
            for name, agent in self.initiators.items():
                scrapes += 1
                samples = agent.samples()
                last[name] = samples
                now = round(time.monotonic() - started)
                bad, noisy = failing(samples)
                failures += [(now, name, what) for what in bad]
                noisy_failures += [(now, name, what) for what in noisy]
                for sample_name, labels, value in samples:
                    if sample_name == "rail_probe_success" and value == 1.0:
                        succeeded[name].add((labels["kind"], labels["rail"]))
                    if sample_name == "rail_probe_throughput_bytes_per_second":
                        throughput.setdefault((labels["kind"], labels["rail"]), set()).add(
                            (name, labels.get("size"), value))
        elapsed = time.monotonic() - started

        responder = self.responder.samples()
        overlaps = find(responder, "rail_responder_bulk_overlaps_total")
        transfers = find(responder, "rail_responder_bulk_transfers_total")
        refused = find(responder, "rail_responder_errors_total", reason="busy")
        busy = {name: sum(find(last[name], "rail_probe_busy_total")) for name in INITIATORS}
        errors = {name: {(labels["kind"], labels["rail"], labels["reason"]): value
                         for sample_name, labels, value in last[name]
                         if sample_name == "rail_probe_errors_total"} for name in INITIATORS}
        report = ["lab_busy: %.0f s, 3 initiators x %s x 2 rails" % (elapsed, "/".join(KINDS)),
                  "responder: bulk transfers %s, overlaps %s, busy refusals %s" % (
                      transfers, overlaps, refused),
                  "initiators: rail_probe_busy_total %s" % busy,
                  "initiators: rail_probe_errors_total %s" % errors,
                  ("every verdict asserted in %d scrapes" % scrapes) if STRICT else
                  "%s failing in %d of %d scrapes (reported, not asserted: RAIL_LAB_BUSY_STRICT=0)" % (
                      "/".join(NOISY_CHECKS), len({(t, n) for t, n, _ in noisy_failures}), scrapes)]
        for (kind, rail), values in sorted(throughput.items()):
            gbps = [value * 8 / 1e9 for _, _, value in values]
            report.append("%s %s: %d distinct runs seen, %.2f..%.2f Gbit/s (median %.2f)" % (
                kind, rail, len(gbps), min(gbps), max(gbps), statistics.median(gbps)))
        print("\n".join(report), file=sys.stderr)

        self.assertEqual(failures, [], "failing probes or verdicts:\n%s" % "\n".join(
            "%4d s %s: %s" % failure for failure in failures))
        self.assertEqual(overlaps, [0.0], "the responder served overlapping bulk transfers")
        self.assertTrue(transfers and transfers[0] > 0, "the responder served no bulk transfer")
        self.assertGreater(sum(busy.values()), 0, "no initiator was told busy: they never collided")
        self.assertTrue(refused and refused[0] >= sum(busy.values()),
                        "every busy an initiator counted is a refusal the responder counted")
        for name in INITIATORS:
            missing = [(kind, rail) for kind in KINDS for rail in lab.RAILS
                       if (kind, rail) not in succeeded[name]]
            self.assertEqual(missing, [], "%s: kinds without a successful run" % name)


if __name__ == "__main__":
    harness.main()
