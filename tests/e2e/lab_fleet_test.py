#!/usr/bin/python3
"""Four agents in a four-host lab find each other through one file_sd file, probe by the fleet
plan, and one host's throttled rail is named by its probers and by the fleet rules (issue 13).

Needs root (network namespaces); skips with a message otherwise. The lab (scripts/lab up 4, prefix
$RAIL_LAB_PREFIX, default "rlfleet") has hosts a, b, c, d on one bridge per rail (host i at
10.200.0.i on rail0 and 10.201.0.i on rail1) and management links ($RAIL_LAB_MGMT_NET.i, default
10.212.0, apart from prometheus_lab's 10.210.0). One agent per host, each with a `fleet:` section
that reads the same file_sd file listing the four responders (10.200.0.i:9841); a and c find
themselves in it (their addresses), b and d are told (fleet.self). peers_per_rail is 2: on each
rail every host probes 2 peers and is probed by 2. Probes: ucx_rtt and ucx_throughput (host
memory, 0.5 s puts of 1 MiB messages, every ~30 s; PROBES says why). Debian's prometheus scrapes the
four agents over the management links with deploy/prometheus/rail_rules.yml loaded, every alert's
`for:` shortened to ALERT_FOR.

What it shows:
* every agent discovers the four targets (rail_fleet_peers 4: the merged targets, itself
  included; rail_fleet_discovery_targets{source="file_sd"} 4), finds itself among them
  (rail_fleet_self_found 1), and plans 2 peers per rail;
* the pairs each agent probes (the peer labels of its rail_probe_* series) are exactly what
  `rail_exporter plan` prints for the same file, and no other peer appears; each agent names its
  planned peers by the names they answer with (rail_fleet_peer_info; every responder has its own
  responder.name, since the lab's hosts share the machine's host name) and sees no duplicate;
* with host c's port on rail1 throttled to 200 Mbit/s (tbf on both of its ends), every host that
  the plan has probing c over rail1 measures c's rail1 at a fraction of what the pairs without c
  get, while c's rail0 stays fast;
* the fleet recording rules name c's rail1: fleet_peer_rail:sick is 1 for (c's target, rail1),
  whose ratio to the fleet median is below 0.5 and the lowest of rail1's peers, and
  fleet_rail:sick_peers:count of rail1 counts it. (A momentary verdict on another peer is only
  reported: two cores shared by four agents' UCX runs make single runs slow now and then, which
  is what the alerts' `for:` is for.);
* RailSickOnHost fires for c's target and rail1 and for nothing else, and the alert for a whole
  rail index (FleetRailIndexSick) never fires: one sick host is not a sick fleet. With 4 hosts one
  sick host is exactly the quarter of a rail's hosts that the fleet verdict needs more than;
* every panel expression of the fleet dashboard (dashboards/rail-fleet.json, through
  tests/e2e/dashboards.py) returns data, except those on FLEET_DASHBOARD_NO_DATA, each with the
  reason the lab cannot give it data (one that does fails too).
"""

import datetime
import json
import os
import statistics
import time

import dashboards
import harness
import lab
import prometheus_server
from prometheus_server import JOB, series_text, start_scraping

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlfleet")
MGMT_NET = os.environ.get("RAIL_LAB_MGMT_NET", "10.212.0")
HOSTS = tuple(lab.HOST_NAMES[:4])  # also the instance label Prometheus gives each host's agent
SELF_GIVEN = ("b", "d")  # fleet.self is set for these; a and c find themselves among the targets
PEERS_PER_RAIL = 2
KINDS = ("ucx_rtt", "ucx_throughput")
SICK_HOST, SICK_RAIL = "c", "rail1"
THROTTLE_MBIT = 200
# A throttled pair runs at <= 200 Mbit/s = 25 MB/s. It counts as slow below 40 MB/s (tbf's bucket
# lets a little more through at the start of a run) and below 40 % of the median of the pairs
# without c (unthrottled, UCX puts between two hosts of this lab ran at 90 to 750 MB/s, median
# ~150 MB/s, with four agents sharing two cores).
SLOW_BYTES_PER_SECOND = 40e6
SLOW_RATIO = 0.4

# Probe schedule. Each agent has 2 peers per rail, so per rail two ucx_throughput jobs count
# against the bulk budget, each its timeout plus 1 s per message size over its shortest interval:
# 2 x (6 s + 1 s) / (30 s x 0.95) = 0.49 of max_bulk_time_fraction_per_rail 0.5 (lab.BUDGET). The
# runs are short (0.5 s of 1 MiB puts), their timeout far longer: on the throttled port, 1 s runs
# with a 3 s timeout were cancelled with puts outstanding or in their final flush, and a failing
# prober blurs which host is sick. Every UCX run busy-polls a core at both ends, and the lab's 16
# (prober, peer, rail) pairs share two: short runs (round trips: 0.2 s every 15 s) keep the noise
# that makes a healthy pair slow now and then rare.
PROBES = (
    "  - {kind: ucx_throughput, operation: put, memory: host, message_sizes: [1048576],"
    " duration: 500ms, timeout: 6s, interval: 30s, jitter: 0.05}\n"
    "  - {kind: ucx_rtt, duration: 200ms, timeout: 5s, interval: 15s}\n")
THROUGHPUT_PERIOD = 31.5  # seconds: the longest ucx_throughput interval (30 s + 5 % jitter)
# Every alert's `for:` in the test's copy of rail_rules.yml: longer than a throughput period, so
# that one slow run alone (two cores, four agents) cannot fire an alert; it takes two in a row.
ALERT_FOR = "35s"
SICK_ALERT = "RailSickOnHost"
FLEET_ALERT = "FleetRailIndexSick"

FLEET_DASHBOARD = "rail-fleet.json"
# Fleet dashboard expressions without data in the lab even with a sick host: {expression
# substring: reason}.
FLEET_DASHBOARD_NO_DATA = {
    "increase(rail_fleet_discovery_errors_total{instance=~\".*\"}[30s])) > 0":
        "the errors of discovery sources, and the lab's file_sd file never fails",
    "fleet_rail_switch:hosts:count":
        "no lldpd in the fleet lab (scripts/lab lldp-up is not run): e2e_lab_lldp_prometheus "
        "has the rails x switches panel's data",
}
DISCOVERY_TIMEOUT = 30.0  # seconds for every agent to have read the file_sd file and planned
PLAN_TIMEOUT = 60.0  # seconds for every planned pair of every kind to have a result
# Seconds from the throttle to RailSickOnHost firing: both of c's rail1 probers must have run
# since (the median of two moves only then; each runs within a period, a busy responder can push
# a run by up to one more), then `for:`, then slack for the scrape and evaluation steps.
FIRE_TIMEOUT = 3 * THROUGHPUT_PERIOD + 35 + 20
POLL = 1.0


def target(host):
    """host's fleet identity: its responder on its rail0 address."""
    return lab.peer_address(host)


def host_of(address):
    return {target(host): host for host in HOSTS}.get(address, address)


def fleet_yaml(peers_file, host):
    """The fleet: section of host's agent."""
    text = "fleet:\n"
    if host in SELF_GIVEN:
        text += "  self: '%s'\n" % target(host)
    return text + ("  peers_per_rail: %d\n"
                   "  max_probe_series: 400\n"
                   "  discovery:\n"
                   "    file_sd:\n"
                   "      - files: ['%s']\n"
                   "        refresh_interval: 5s\n" % (PEERS_PER_RAIL, peers_file))


def pairs_text(pairs):
    return "\n".join("  %s -> %s over %s (%s)" % (prober, host_of(peer), rail, kind)
                     for prober, peer, rail, kind in sorted(pairs)) or "  (none)"


class LabFleetTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    LAB_HOSTS = len(HOSTS)
    MGMT_NET = MGMT_NET
    TMP_PREFIX = "rail-fleet-lab-"
    TOOLS = ("ip",)

    @classmethod
    def setUpClass(cls):
        prometheus_server.require_prometheus()
        cls.started = time.monotonic()
        super().setUpClass()

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "fleet-lab-secret\n")
        # One file for the whole fleet, as a deployment would share it.
        cls.peers_file = cls.lab.write("peers.json", json.dumps(
            [{"targets": [target(host) for host in HOSTS]}], indent=2))
        cls.configs, cls.agents = {}, {}
        for host in HOSTS:
            # Each responder names itself: the hosts share the machine's host name, and agents
            # take targets that answer with one name for one host.
            text = lab.agent_config(host, secret=secret, probes=PROBES,
                                    responder_name="fleet-" + host) + fleet_yaml(cls.peers_file,
                                                                                 host)
            cls.configs[host] = cls.lab.write(host + ".yaml", text)
        for host in HOSTS:
            cls.agents[host] = cls.lab.start_agent(
                host, ["--config.file=" + cls.configs[host]],
                address=cls.lab.mgmt_address(host), name="rail_exporter@" + host)

        cls.prometheus = start_scraping(cls.lab, cls.agents, ALERT_FOR, "2s")
        print("lab set up in %.1f s" % (time.monotonic() - cls.started))

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            print("total %.1f s" % (time.monotonic() - cls.started))

    # -- helpers ------------------------------------------------------------------------------

    def diagnostics(self):
        """Alert states, the throughput series and the lab, for a failure message."""
        lines = []
        for name in (SICK_ALERT, FLEET_ALERT):
            lines.append(name + " alerts:")
            for alert in self.prometheus.alerts(name):
                lines.append("  %s %s %s" % (alert["state"],
                                             json.dumps(alert["labels"], sort_keys=True),
                                             alert.get("value")))
        for expr in ('rail_probe_throughput_bytes_per_second{kind="ucx_throughput"}',
                     "rail_probe_success == 0"):
            lines.append(expr + ":")
            lines.append(series_text(self.prometheus.query(expr)))
        lines.append(self.lab.status())
        for host, agent in self.agents.items():
            lines.append("agent %s (alive=%s), last log lines:" % (host, agent.alive()))
            lines.extend("  " + line for line in agent.stderr_lines()[-10:])
        return "\n".join(lines)

    def planned(self, host, epoch):
        """{(host, peer, rail, kind)} that `rail_exporter plan` gives host for the lab's file.
        peers_per_rail and the kinds come from host's configuration, as the agent takes them;
        the rails are named, since the lab's rails are netdevs of the config, not sysfs's."""
        result = harness.run_to_exit([
            "plan", "--peers-file", self.peers_file, "--self", target(host),
            "--rails", ",".join(lab.RAIL_NAMES), "--epoch", str(epoch),
            "--config.file=" + self.configs[host], "--output", "json"])
        self.assertEqual(result.returncode, 0, "plan for %s failed:\n%s" % (host, result.stderr))
        plan = json.loads(result.stdout)
        self.assertEqual(plan["self"], target(host))
        self.assertEqual(plan["epoch"], epoch)
        return {(host, probe["peer"], probe["rail"], probe["kind"]) for probe in plan["probes"]}

    def probed(self):
        """{(host, peer, rail, kind)} of the rail_probe_success series of every agent."""
        pairs = set()
        for host, agent in self.agents.items():
            for name, labels, _ in agent.samples():
                if name == "rail_probe_success" and labels.get("kind") in KINDS:
                    pairs.add((host, labels.get("peer"), labels.get("rail"), labels["kind"]))
        return pairs

    def epoch(self):
        """The plan epoch every agent reports (they must agree)."""
        epochs = {host: lab.find(agent.samples(), "rail_fleet_plan_epoch")
                  for host, agent in self.agents.items()}
        self.assertTrue(all(len(values) == 1 for values in epochs.values()), epochs)
        self.assertEqual(len({values[0] for values in epochs.values()}), 1, epochs)
        return int(next(iter(epochs.values()))[0])

    def fleet_plan(self):
        epoch = self.epoch()
        return epoch, set().union(*(self.planned(host, epoch) for host in HOSTS))

    def throughput(self, since=0.0):
        """{(prober, peer, rail): bytes per second} of the ucx_throughput runs that ended after
        `since` (seconds since the epoch), read from Prometheus."""
        def by_pair(expr):
            return {(s["metric"]["instance"], s["metric"]["peer"], s["metric"]["rail"]):
                    float(s["value"][1]) for s in self.prometheus.query(expr)}
        values = by_pair('max by (instance, peer, rail) (rail_probe_throughput_bytes_per_second'
                         '{job="%s", kind="ucx_throughput"})' % JOB)
        ran = by_pair('max by (instance, peer, rail) (rail_probe_last_run_timestamp_seconds'
                      '{job="%s", kind="ucx_throughput"})' % JOB)
        return {pair: value for pair, value in values.items() if ran.get(pair, 0) > since}

    def by_labels(self, expr, *labels):
        """{(label values...): value} of expr now."""
        return {tuple(s["metric"].get(label) for label in labels): float(s["value"][1])
                for s in self.prometheus.query(expr)}

    def alerts(self, name, state=None):
        """{(peer, rail): activeAt as seconds since the epoch} of name's alerts (in state)."""
        return {(a["labels"].get("peer"), a["labels"].get("rail")):
                datetime.datetime.fromisoformat(a["activeAt"]).timestamp()
                for a in self.prometheus.alerts(name) if state in (None, a["state"])}

    # -- tests --------------------------------------------------------------------------------

    def test_1_every_agent_discovers_the_fleet_and_itself(self):
        def discovered(samples):
            return (lab.find(samples, "rail_fleet_peers") == [float(len(HOSTS))] and
                    lab.find(samples, "rail_fleet_self_found") == [1.0] and
                    sorted(lab.find(samples, "rail_fleet_plan_peers")) ==
                    [float(PEERS_PER_RAIL)] * len(lab.RAIL_NAMES))
        for host, agent in self.agents.items():
            ok, samples = agent.wait_for(discovered, DISCOVERY_TIMEOUT)
            self.assertTrue(ok, "agent %s: rail_fleet_peers %s (expected %d), self_found %s, "
                                "plan_peers %s; discovery: %s\n%s" % (
                                    host, lab.find(samples, "rail_fleet_peers"), len(HOSTS),
                                    lab.find(samples, "rail_fleet_self_found"),
                                    lab.find(samples, "rail_fleet_plan_peers"),
                                    [(n, l, v) for n, l, v in samples
                                     if n.startswith("rail_fleet_discovery_")],
                                    "\n".join(agent.stderr_lines()[-10:])))
            self.assertEqual(lab.find(samples, "rail_fleet_discovery_targets",
                                      source="file_sd:" + self.peers_file),
                             [float(len(HOSTS))], host)

    def test_2_agents_probe_exactly_the_plan(self):
        epoch, plan = self.fleet_plan()
        # The plan's own bounds, here exact since n = 4 > k = 2: every host probes k peers and is
        # probed by k on every rail, for every kind, and never itself.
        for host in HOSTS:
            for rail in lab.RAIL_NAMES:
                for kind in KINDS:
                    out = [p for p in plan if p[0] == host and p[2] == rail and p[3] == kind]
                    into = [p for p in plan if p[1] == target(host) and p[2] == rail and
                            p[3] == kind]
                    self.assertEqual((len(out), len(into)), (PEERS_PER_RAIL, PEERS_PER_RAIL),
                                     "%s on %s (%s):\n%s" % (host, rail, kind, pairs_text(plan)))
        self.assertFalse([p for p in plan if p[1] == target(p[0])], pairs_text(plan))

        lab.wait_until(lambda: plan <= self.probed(), PLAN_TIMEOUT)
        probed = self.probed()
        self.assertEqual(probed, plan, "epoch %d\nprobed, not planned:\n%s\nplanned, not "
                                       "probed:\n%s" % (epoch, pairs_text(probed - plan),
                                                        pairs_text(plan - probed)))
        self.assertEqual(self.epoch(), epoch, "the epoch changed during the test: run it again")
        # Each prober knows its planned peers by the names they gave in their welcome, and takes
        # none of them for a duplicate or for itself. The fleet thread records a name at its next
        # refresh after the handshake that brought it, so a probe can be seen before its name.
        def peer_names(samples):
            return {labels["peer"]: labels["name"] for name, labels, _ in samples
                    if name == "rail_fleet_peer_info"}

        for host, agent in self.agents.items():
            expected = {peer: "fleet-" + host_of(peer) for prober, peer, _, _ in plan
                        if prober == host}
            lab.wait_until(lambda: peer_names(agent.samples()) == expected, PLAN_TIMEOUT)
            samples = agent.samples()
            self.assertEqual(peer_names(samples), expected, host)
            self.assertEqual(lab.find(samples, "rail_fleet_duplicate_targets"), [0.0], host)
        print("plan of epoch %d (every agent probes exactly these):\n%s" % (epoch,
                                                                           pairs_text(plan)))

    def test_3_a_throttled_port_is_named_by_its_probers_and_the_fleet_rules(self):
        epoch, plan = self.fleet_plan()
        bulk = {(h, p, r) for h, p, r, kind in plan if kind == "ucx_throughput"}
        sick = target(SICK_HOST)
        probers = sorted(h for h, p, r in bulk if p == sick and r == SICK_RAIL)
        self.assertEqual(len(probers), PEERS_PER_RAIL, pairs_text(plan))

        # Before: every planned pair has a throughput result and nothing is sick.
        lab.wait_until(lambda: bulk <= set(self.throughput()), PLAN_TIMEOUT)
        before = self.throughput()
        self.assertEqual(bulk - set(before), set(), "pairs without a throughput result:\n%s\n\n%s"
                         % (pairs_text({p + ("ucx_throughput",) for p in bulk - set(before)}),
                            self.diagnostics()))
        self.assertEqual(self.alerts(SICK_ALERT, "firing"), {},
                         "%s fires before any throttling:\n%s" % (SICK_ALERT, self.diagnostics()))
        print("unthrottled ucx_throughput (MB/s): " + ", ".join(
            "%s->%s %s %.0f" % (h, host_of(p), r, v / 1e6) for (h, p, r), v in
            sorted(before.items())))

        throttled_at = time.time()
        self.lab.throttle(1, "%dmbit" % THROTTLE_MBIT, SICK_HOST)
        deadline = time.monotonic() + FIRE_TIMEOUT
        fired, fleet_fired, wrong = {}, {}, {}
        while time.monotonic() < deadline:
            firing = self.alerts(SICK_ALERT, "firing")
            wrong.update({key: at for key, at in firing.items() if key != (sick, SICK_RAIL)})
            fleet_fired.update(self.alerts(FLEET_ALERT, "firing"))
            # Only an alert that went pending after the throttle shows the throttle's effect.
            fired = {key: at for key, at in firing.items()
                     if key == (sick, SICK_RAIL) and at >= throttled_at}
            after = self.throughput(since=throttled_at)
            if fired and all((h, sick, SICK_RAIL) in after for h in probers):
                break
            time.sleep(POLL)
        self.assertTrue(fired, "%s did not fire for %s %s within %.0f s of throttling:\n%s" % (
            SICK_ALERT, sick, SICK_RAIL, FIRE_TIMEOUT, self.diagnostics()))
        print("%s pending %.1f s after throttling, seen firing after %.1f s" % (
            SICK_ALERT, fired[(sick, SICK_RAIL)] - throttled_at, time.time() - throttled_at))
        self.assertEqual(wrong, {}, "%s fires for another host or rail:\n%s" % (
            SICK_ALERT, self.diagnostics()))
        self.assertEqual(fleet_fired, {}, "%s fired for one sick host:\n%s" % (
            FLEET_ALERT, self.diagnostics()))

        # The fleet recording rules behind the alerts name the same host and rail.
        verdicts = self.by_labels('fleet_peer_rail:sick{job="%s"}' % JOB, "peer", "rail")
        self.assertEqual(set(verdicts), {(p, r) for _, p, r in bulk}, self.diagnostics())
        self.assertEqual(verdicts[(sick, SICK_RAIL)], 1.0, self.diagnostics())
        others = sorted(key for key, value in verdicts.items()
                        if value and key != (sick, SICK_RAIL))
        ratios = self.by_labels('fleet_peer_rail:probe_throughput:ratio_fleet_median{job="%s", '
                                'kind="ucx_throughput", rail="%s"}' % (JOB, SICK_RAIL), "peer")
        self.assertLess(ratios[(sick,)], 0.5, ratios)
        self.assertEqual(min(ratios, key=ratios.get), (sick,), ratios)
        self.assertGreaterEqual(self.by_labels('fleet_rail:sick_peers:count{job="%s", rail="%s"}'
                                               % (JOB, SICK_RAIL), "rail")[(SICK_RAIL,)], 1.0)
        print("%s's %s against the fleet median: %.2f (the other peers of %s: %s); other peer "
              "rails judged sick at this moment: %s" % (
                  SICK_HOST, SICK_RAIL, ratios[(sick,)], SICK_RAIL,
                  ", ".join("%s %.2f" % (host_of(p), v) for (p,), v in sorted(ratios.items())
                            if p != sick), others or "none"))

        # What c's probers measured after the throttle, against the pairs that do not involve c.
        after = self.throughput(since=throttled_at)
        healthy = [v for (h, p, r), v in after.items() if h != SICK_HOST and p != sick]
        self.assertTrue(healthy, self.diagnostics())
        reference = statistics.median(healthy)
        for prober in probers:
            value = after.get((prober, sick, SICK_RAIL))
            self.assertIsNotNone(value, "%s did not probe %s over %s after the throttle:\n%s" % (
                prober, SICK_HOST, SICK_RAIL, self.diagnostics()))
            self.assertLess(value, SLOW_BYTES_PER_SECOND, (prober, self.diagnostics()))
            self.assertLess(value, SLOW_RATIO * reference, (prober, reference,
                                                            self.diagnostics()))
        rail0 = [v for (h, p, r), v in after.items() if r == "rail0" and sick in (p, target(h))]
        for value in rail0:  # c's other rail is untouched
            self.assertGreater(value, SLOW_BYTES_PER_SECOND, self.diagnostics())
        print("after the throttle: %s's probers measure %s over %s at %s MB/s; pairs without %s "
              "%.0f MB/s (median)" % (
                  SICK_HOST, ", ".join(probers), SICK_RAIL,
                  ", ".join("%.1f" % (after[(h, sick, SICK_RAIL)] / 1e6) for h in probers),
                  SICK_HOST, reference / 1e6))

    def test_4_every_fleet_dashboard_expression_returns_data(self):
        # After test 3, c's rail1 is sick: the tables of sick hosts have rows.
        exprs = {"%s / %s" % (e.panel_title, e.ref_id): e.expr
                 for e in dashboards.dashboard_expressions(rate_interval="30s")
                 if e.dashboard == FLEET_DASHBOARD}
        self.assertGreater(len(exprs), 0, "no expression in dashboards/" + FLEET_DASHBOARD)
        excused = {name: reason for name, expr in exprs.items()
                   for part, reason in FLEET_DASHBOARD_NO_DATA.items() if part in expr}

        def without_data():
            return {name for name, expr in exprs.items() if not self.prometheus.query(expr)}
        lab.wait_until(lambda: without_data() <= set(excused), DISCOVERY_TIMEOUT)
        empty = without_data()
        self.assertEqual(sorted(empty - set(excused)), [],
                         "fleet dashboard expressions without data:\n%s\n\n%s" % (
                             "\n".join("  %s: %s" % (n, exprs[n]) for n in empty),
                             self.diagnostics()))
        self.assertEqual(sorted(set(excused) - empty), [],
                         "excused as impossible in the lab but with data: drop them from "
                         "FLEET_DASHBOARD_NO_DATA")
        for name in sorted(excused):
            print("without data in the lab, as expected: %s (%s)" % (name, excused[name]))


if __name__ == "__main__":
    harness.main()
