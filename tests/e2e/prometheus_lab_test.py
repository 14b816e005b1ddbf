#!/usr/bin/python3
"""A real Prometheus scrapes two agents in the lab and evaluates the shipped rules (issue 4).

Needs root (network namespaces); skips with a message otherwise. The lab (scripts/lab, prefix
$RAIL_LAB_PREFIX, default "rlprom") gets management links (`scripts/lab mgmt-up`, addresses
$RAIL_LAB_MGMT_NET.1/.2, default 10.210.0): Debian's prometheus runs in the root namespace and
scrapes both agents over them, never over the rails, so throttling a rail cannot slow a scrape.
Hosts a and b each run an agent that probes the other over both rails (netdev-only rails, UCX's
tcp transport, a shared secret): TCP throughput every ~17 s and UCX throughput every ~30 s, with
1 s runs, round trips every 10 s, the multi-rail probes once soon after the start (PROBES says why).

Prometheus scrapes every second and evaluates every second a copy of
deploy/prometheus/rail_rules.yml in which only the `for:` durations are rewritten (every alert's
`for` becomes ALERT_FOR, 40 s, instead of 2 to 30 minutes: a test cannot wait 5 minutes for
RailProbeThroughputLow). The expressions are the shipped ones, byte for byte.

What it shows:
* both targets are up;
* every recording rule of rail_rules.yml returns data, except those on NO_DATA_IN_LAB, each with
  the reason the lab cannot produce it; a rule on that list that does return data fails too
  (those on NOISY_IN_LAB, whose data depends on the machine's noise, are only reported);
* every panel expression of the Grafana dashboards (tests/e2e/dashboards.py, when present:
  dashboard_expressions()) returns data, with the same kind of exception list;
* after rail 1 is throttled to a twentieth of what its TCP probes measured unthrottled,
  RailProbeThroughputLow fires for rail1 and never for rail0 (read from /api/v1/alerts), the
  dashboards' failing-check panels show the agent's own probe_throughput check failing on rail1,
  and the alert resolves once the throttle is removed.
"""

import datetime
import importlib
import importlib.util
import json
import os
import re
import time

import yaml

import harness
import lab
import prometheus_server
from prometheus_server import JOB, RULES, series_text, start_scraping

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlprom")
MGMT_NET = os.environ.get("RAIL_LAB_MGMT_NET", "10.210.0")
HOSTS = lab.HOSTS  # also the instance label Prometheus gives each host's agent
# Replaces every alert's `for:` in the test's copy of rail_rules.yml. Longer than two intervals of
# tcp_throughput (15.3 to 18.7 s) and than one of ucx_throughput (27 to 33 s): a slow run, which
# the 2-core machine's load can cause on either rail (sibling ratios of 0.55 were seen unthrottled),
# never fires an alert alone; it takes three TCP or two UCX runs in a row.
ALERT_FOR = "40s"

# Probe schedule. Bulk probes must fit max_bulk_time_fraction_per_rail (at most 0.5): a job counts
# its timeout + 1 s per message size, over its interval shortened by the jitter. Here
# 3.5 s / (17 s x 0.9) + 7 s / (30 s x 0.9) + 2 x 11 s / (3600 s x 0.996) = 0.494 per rail.
# * tcp_throughput runs every ~17 s and ucx_throughput every ~30 s (jittered, so that the two
#   agents' and the two rails' runs do not fall into a fixed pattern of overlaps on a 2-core
#   machine).
# * The UCX probes get timeouts far beyond their 1 s runs, even on a throttled rail: a UCX run
#   cancelled by its timeout in the middle of puts has crashed the peer agent (UCX 1.13, tcp
#   transport: "Fatal: unexpected error: Endpoint timeout" in ucp_put_handler on the responder).
# * The multi-rail probes run once, within 14.4 s of the start (the first run is due at
#   interval x U[0, jitter]; not at once, when the other agent may not be listening yet; a result
#   stays current for three intervals): they give the dashboards data. The throttling waits for
#   their results, so that none of them runs while rail 1 is throttled.
PROBES = (
    "  - {kind: tcp_throughput, streams: 2, duration: 1s, timeout: 2500ms, interval: 17s,"
    " jitter: 0.1}\n"
    "  - {kind: ucx_throughput, operation: put, message_sizes: [1048576], duration: 1s,"
    " timeout: 6s, interval: 30s, jitter: 0.1}\n"
    "  - {kind: multirail_capacity, duration: 1s, timeout: 10s, interval: 3600s,"
    " jitter: 0.004}\n"
    "  - {kind: ucx_multirail_throughput, operation: am, duration: 1s, timeout: 10s,"
    " interval: 3600s, jitter: 0.004}\n"
    "  - {kind: ucx_rtt, duration: 500ms, timeout: 5s, interval: 10s}\n"
    "  - {kind: tcp_rtt, duration: 500ms, timeout: 5s, interval: 10s}\n")

# Metric families the lab cannot export, and why. An expression that returns nothing is excused
# only when it reads one of them, and the test checks that they are indeed absent.
VETH_STATISTICS = ("the veths' ethtool statistics are none of the allow-listed mlx5_core, "
                   "bnxt_en or ice counters")
VETH_DCB = ("veth has no DCB operations (rail_qos_dcb_info reads not_supported): no PFC, trust "
            "or DSCP map")
ABSENT_IN_LAB = {
    "rail_nic_pfc_": VETH_STATISTICS,
    "rail_nic_pause_storm_": VETH_STATISTICS,
    "rail_nic_priority_discards_": VETH_STATISTICS,
    "rail_nic_receive_discards_": VETH_STATISTICS,
    "rail_nic_ecn_marked_": VETH_STATISTICS,
    "rail_nic_link_down_events_": VETH_STATISTICS,
    "rail_nic_post_fec_": VETH_STATISTICS,
    "rail_nic_fec_corrected_": VETH_STATISTICS,
    "rail_nic_physical_receive_": VETH_STATISTICS,
    "rail_nic_global_pause_": VETH_STATISTICS,
    "rail_nic_priority_receive_discards_": VETH_STATISTICS,
    "rail_nic_queue_receive_discards_": VETH_STATISTICS,
    "rail_nic_ring_discards_": VETH_STATISTICS,
    "rail_nic_module_unplug_": VETH_STATISTICS,
    "rail_nic_crc_errors_": VETH_STATISTICS,
    "rail_nic_symbol_errors_": VETH_STATISTICS,
    "rail_nic_fec_uncorrectable_": VETH_STATISTICS,
    "rail_nic_lane_fec_": VETH_STATISTICS,
    "rail_qos_trust_info": VETH_DCB,
    "rail_qos_pfc_": VETH_DCB,
    "rail_qos_dscp_priority": VETH_DCB,
    "rail_port_": "no RDMA device: the veth rails have no InfiniBand/RoCE port "
                  "(rail_port_* comes from class/infiniband/<dev>/ports/<p>)",
    "rail_infiniband_": "no RDMA device (class/infiniband is empty in the lab)",
    "rail_gid_": "no RDMA device, so no GID table (ports/<p>/gids)",
    "rail_bond_": "the test machines' kernel has no bonding module",
    "rail_expected_rate_": "the lab's rails configure no expected_rate_gbps",
    "rail_gpu_nic_path_info": "no GPU and no RDMA device: bus/pci/devices holds no NVIDIA "
                              "display function and class/infiniband is empty",
    "rail_pcie_link_": "no GPU and no RDMA device, so no PCIe link is published",
    "rail_probe_memory_throughput_ratio": "the lab probes host memory only (lab_gpu_probe runs "
                                          "GPU-memory probes on the fake CUDA driver)",
    "rail_fleet_": "the two agents probe each other as static peers, without a fleet section: "
                   "no discovery, no plan (the 4-host fleet lab has them)",
}

# Recording rules of rail_rules.yml that cannot have data in the lab: {record: reason}. Every
# rule has a netdev branch for rails without an RDMA device (veth speed is
# class/net/<veth>/speed = 10000), and the fleet views work on static peers too (each host is
# the other's only prober). A rule listed here that returns data fails the test.
NO_LLDPD = ("no lldpd in the 2-host Prometheus lab, so no rail_link_neighbor_info; "
            "e2e_lab_lldp_prometheus checks the cabling rules with the lab's leaves")
NO_DATA_IN_LAB = {
    "fleet_rail_switch:hosts:count": NO_LLDPD,
    "fleet_switch:majority_rail_hosts:count": NO_LLDPD,
    "fleet_rail:majority_switch_hosts:count": NO_LLDPD,
}

# Recording rules whose data in the lab depends on the machine's noise: neither required nor
# refused, and reported either way. {record: reason}.
NOISY_IN_LAB = {
    "fleet_rail:sick": "a series per sick rail index only. Each host is the other's only prober, "
                       "so the fleet median of a rail is the mean of two runs: a UCX run that a "
                       "busy 2-core machine slows to under a third of the other's makes its peer "
                       "sick, and one of two hosts is over the 25% of hosts that make a rail "
                       "index sick",
}

# Dashboard expressions that cannot have data in the lab, beyond those reading ABSENT_IN_LAB
# families: {expression substring: reason}.
DASHBOARD_NO_DATA_IN_LAB = {
    "fleet_rail_switch:hosts:count": NO_LLDPD,
    "increase(rail_probe_errors_total": "no probe fails in the healthy lab before the throttle, "
                                        "so no error series exists yet",
    'check=~"pcie_link|gpu_nic_affinity|gpu_direct|gpu_memory_throughput"':
        "no GPU and no RDMA device in the lab: the GPU path checks give no verdict",
    'streams="1"}': "the lab runs tcp_throughput with 2 streams only: a 1-stream job as well "
                    "would not fit the bulk budget next to the other probes (PROBES)",
    'check="qos_config"': "no DCB on the veths: qos_config gives no verdict (doctor and "
                          "rail_qos_dcb_info say why)",
    "and on (peer, rail) (max by (peer, rail) (fleet_peer_rail:sick":
        "the fleet dashboard's table of sick hosts: no host is sick before the throttle",
    "rail_multirail_striping_efficiency{":
        "every rail driven at once from the 2-core lab is CPU-bound, so UCX's striping over one "
        "rail can beat it: the efficiency is then withheld as above range, in some runs only",
    "rail_multirail_striping_efficiency_withheld{":
        "withheld only while the lab's capacity measures below UCX's striping, in some runs only",
    "rail_probe_figures_withheld{": "no run of the healthy lab breaks a figure invariant",
    "rail_check_held_back{": "a check holds back only on a noisy run or withheld figures",
    # The one check that failed in every healthy lab run, multirail_striping on a CPU-bound
    # capacity run, now holds back instead: what fails before the throttle is noise.
    "rail_check_info{": "rail_check_info exists only while a check fails, and nothing fails in "
                        "the healthy lab but by noise: test_4 requires it while rail 1 is "
                        "throttled",
}

STARTUP_TIMEOUT = 30.0  # seconds for both targets to be up
DATA_TIMEOUT = 120.0  # seconds for every rule and panel to have data (first probes, 1m rates)
FIRE_TIMEOUT = 100.0  # seconds from throttling to firing: a TCP run (<= 18.7 s + 3.5 s), for: 40 s
RESOLVE_TIMEOUT = 75.0  # seconds from unthrottling to resolved: the next run of each kind (<= 40 s)
POLL = 1.0


def absent_families(expr):
    """The ABSENT_IN_LAB prefixes expr reads."""
    return [prefix for prefix in ABSENT_IN_LAB if re.search(r"\b" + re.escape(prefix), expr)]


def dashboard_expressions():
    """[(name, expr)] of tests/e2e/dashboards.py, or None while that module does not exist.

    dashboard_expressions() returns dashboards.Expression tuples; plain expressions,
    (name..., expr) tuples and {name: expr} are taken too.
    """
    if importlib.util.find_spec("dashboards") is None:
        return None
    exprs = importlib.import_module("dashboards").dashboard_expressions()
    items = exprs.items() if isinstance(exprs, dict) else exprs
    out = []
    for item in items:
        if hasattr(item, "expr") and hasattr(item, "dashboard"):  # dashboards.Expression
            out.append(("%s / %s / %s" % (item.dashboard, item.panel_title, item.ref_id),
                        item.expr))
        elif isinstance(item, str):
            out.append((item, item))
        else:
            item = tuple(item)
            out.append((" / ".join(str(part) for part in item[:-1]) or item[-1], item[-1]))
    return out


class PrometheusLabTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    MGMT_NET = MGMT_NET
    TMP_PREFIX = "rail-prom-lab-"
    TOOLS = ("ip",)

    @classmethod
    def setUpClass(cls):
        prometheus_server.require_prometheus()
        cls.started = time.monotonic()
        super().setUpClass()

    @classmethod
    def set_up_lab(cls):
        secret = cls.lab.secret("secret", "prometheus-lab-secret\n")
        # Each host probes the other over both rails; Prometheus scrapes the management links.
        cls.agents = cls.lab.start_probing_pair(secret, PROBES, mgmt=True)

        with open(RULES, encoding="utf-8") as handle:
            rules = yaml.safe_load(handle)
        cls.records = [rule["record"] for group in rules["groups"] for rule in group["rules"]
                       if "record" in rule]
        cls.prometheus = start_scraping(cls.lab, cls.agents, ALERT_FOR, "1s")
        print("lab set up in %.1f s" % (time.monotonic() - cls.started))

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            print("total %.1f s" % (time.monotonic() - cls.started))

    def tearDown(self):
        # Prometheus scrapes the agents, this test only reads Prometheus: one scrape of each live
        # agent after every test puts their figures through the figure invariants
        # (lab.LabAgent.scrape, figure_invariants.py) too.
        for agent in self.agents.values():
            if agent.alive():
                agent.scrape()

    # -- helpers ------------------------------------------------------------------------------

    def diagnostics(self):
        """Alert states, the probe series and the lab's qdiscs, for a failure message."""
        lines = ["RailProbeThroughputLow alerts:"]
        for alert in self.prometheus.alerts("RailProbeThroughputLow"):
            lines.append("  %s %s %s" % (alert["state"], json.dumps(alert["labels"],
                                                                    sort_keys=True),
                                         alert.get("value")))
        for expr in ("rail:probe_throughput_bytes_per_second",
                     "rail:probe_throughput:ratio_sibling_median",
                     "rail_probe_success == 0"):
            lines.append(expr + ":")
            lines.append(series_text(self.prometheus.query(expr)))
        lines.append(self.lab.status())
        for host, agent in self.agents.items():
            lines.append("agent %s (alive=%s), last log lines:" % (host, agent.alive()))
            lines.extend("  " + line for line in agent.stderr_lines()[-15:])
        return "\n".join(lines)

    def wait_for_data(self, exprs, excused, what):
        """Polls until every expression of exprs ({name: expr}) returns data, or DATA_TIMEOUT.

        excused: {name: reason} of expressions allowed to return nothing. Fails when another
        expression never returns data, or an excused one does.
        """
        deadline = self.started + DATA_TIMEOUT
        empty = dict(exprs)
        while True:
            empty = {name: expr for name, expr in empty.items()
                     if not self.prometheus.query(expr)}
            if set(empty) <= set(excused) or time.monotonic() > deadline:
                break
            time.sleep(2 * POLL)
        unexpected = {name: expr for name, expr in empty.items() if name not in excused}
        self.assertEqual(unexpected, {}, "%s without data after %.0f s:\n%s\n\n%s" % (
            what, time.monotonic() - self.started,
            "\n".join("  %s: %s" % item for item in unexpected.items()), self.diagnostics()))
        stale = sorted(set(excused) - set(empty))
        self.assertEqual(stale, [], "%s excused as impossible in the lab return data: drop them "
                                    "from the exception list" % what)
        for name in sorted(excused):
            print("%s without data in the lab, as expected: %s (%s)" % (what, name,
                                                                        excused[name]))

    def assert_absent(self, prefix):
        """The lab indeed exports no series of an ABSENT_IN_LAB family."""
        present = self.prometheus.query('count by (__name__) ({__name__=~"%s.*", job="%s"})' % (
            re.escape(prefix), JOB))
        self.assertEqual(present, [], "%s is excused as absent in the lab (%s) but exists:\n%s" %
                         (prefix, ABSENT_IN_LAB[prefix], series_text(present)))

    def assert_failing_check_panels(self, check, rail, deadline):
        """Every dashboard expression on rail_check_info shows check failing on rail by deadline."""
        exprs = [(name, expr) for name, expr in dashboard_expressions() or []
                 if "rail_check_info{" in expr]
        self.assertGreater(len(exprs), 0, "no dashboard panel reads rail_check_info")
        for name, expr in exprs:
            while True:
                shown = [s["metric"] for s in self.prometheus.query(expr)]
                if any(m.get("check") == check and m.get("rail") == rail for m in shown) or \
                        time.monotonic() > deadline:
                    break
                time.sleep(POLL)
            self.assertTrue(any(m.get("check") == check and m.get("rail") == rail
                                for m in shown),
                            "%s does not show %s failing on %s while it is throttled: %s\n%s" % (
                                name, check, rail, shown, self.diagnostics()))
        print("failing-check panels show %s on %s: %s" % (check, rail,
                                                         ", ".join(n for n, _ in exprs)))

    # -- tests --------------------------------------------------------------------------------

    def test_1_both_targets_up(self):
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            targets = self.prometheus.api("targets", state="active")["activeTargets"]
            health = {t["labels"].get("instance"): t["health"] for t in targets}
            if health == {host: "up" for host in HOSTS} or time.monotonic() > deadline:
                break
            time.sleep(POLL)
        self.assertEqual(health, {host: "up" for host in HOSTS}, json.dumps(targets, indent=2))
        self.assertEqual(sorted(s["metric"]["instance"] for s in self.prometheus.query(
            'up{job="%s"} == 1' % JOB)), sorted(HOSTS))

    def test_2_every_recording_rule_returns_data(self):
        self.assertGreater(len(self.records), 0)
        self.assertTrue(set(NO_DATA_IN_LAB) | set(NOISY_IN_LAB) <= set(self.records))
        self.wait_for_data({record: record for record in self.records
                            if record not in NOISY_IN_LAB}, NO_DATA_IN_LAB, "recording rules")
        for record, reason in sorted(NOISY_IN_LAB.items()):
            print("recording rule %s in the lab, which depends on noise: %s (%s)" % (
                "with data" if self.prometheus.query(record) else "without data", record,
                reason))
        # Both hosts, both rails, where the rule is per rail. A rate needs two scrapes of each
        # host, and one host's second scrape may come after the other's: polled to the deadline.
        expected = {(h, r) for h in HOSTS for r in ("rail0", "rail1")}
        deadline = self.started + DATA_TIMEOUT
        for record in ("rail:transmit_bytes:rate1m", "rail:line_rate_bytes_per_second",
                       "rail:probe_throughput:ratio_sibling_median"):
            while True:
                seen = {(s["metric"]["instance"], s["metric"]["rail"])
                        for s in self.prometheus.query(record)}
                if seen == expected or time.monotonic() > deadline:
                    break
                time.sleep(POLL)
            self.assertEqual(seen, expected, record)

    def test_3_every_dashboard_expression_returns_data(self):
        exprs = dashboard_expressions()
        if exprs is None:
            self.skipTest("tests/e2e/dashboards.py (dashboard_expressions()) does not exist yet")
        self.assertGreater(len(exprs), 0, "dashboard_expressions() returned nothing")
        excused = {}
        for name, expr in exprs:
            reasons = [ABSENT_IN_LAB[p] for p in absent_families(expr)]
            reasons += [reason for part, reason in DASHBOARD_NO_DATA_IN_LAB.items()
                        if part in expr]
            if reasons:
                excused[name] = "; ".join(reasons)
        for prefix in {p for _, expr in exprs for p in absent_families(expr)}:
            self.assert_absent(prefix)
        # An expression excused for reading an absent family may still have data through
        # another branch (`a or b`): those are only reported, never failed.
        by_name = dict(exprs)
        empty_excused = {name: reason for name, reason in excused.items()
                         if not self.prometheus.query(by_name[name])}
        self.wait_for_data({name: expr for name, expr in exprs if name not in excused}, {},
                           "dashboard expressions")
        for name in sorted(set(excused) - set(empty_excused)):
            print("dashboard expression with data although excused (%s): %s" % (excused[name],
                                                                               name))
        for name, reason in sorted(empty_excused.items()):
            print("dashboard expression without data in the lab, as expected: %s (%s)" % (
                name, reason))

    def firing(self):
        """{(instance, rail, kind): activeAt as seconds since the epoch} of the
        RailProbeThroughputLow alerts firing now."""
        return {(a["labels"].get("instance"), a["labels"].get("rail"), a["labels"].get("kind")):
                datetime.datetime.fromisoformat(a["activeAt"]).timestamp()
                for a in self.prometheus.alerts("RailProbeThroughputLow")
                if a["state"] == "firing"}

    def assert_never_rail0(self, firing):
        wrong = sorted(f for f in firing if f[1] != "rail1")
        self.assertEqual(wrong, [], "RailProbeThroughputLow fires for a rail other than "
                                    "rail1:\n%s" % self.diagnostics())

    def wait_for_series(self, expr, count):
        """The instant vector of expr once it has count series (bounded by DATA_TIMEOUT)."""
        deadline = self.started + DATA_TIMEOUT
        while True:
            series = self.prometheus.query(expr)
            if len(series) >= count or time.monotonic() > deadline:
                break
            time.sleep(2 * POLL)
        self.assertEqual(len(series), count, "%s:\n%s\n\n%s" % (expr, series_text(series),
                                                                 self.diagnostics()))
        return series

    def test_4_throttled_rail1_alone_fires_probe_throughput_low_and_resolves(self):
        # The multi-rail probes' one run (per host and kind) is over: none runs throttled.
        self.wait_for_series('count by (instance, kind) (rail_probe_last_run_timestamp_seconds{'
                             'kind=~"multirail_capacity|ucx_multirail_throughput"})',
                             2 * len(HOSTS))
        # Unthrottled reference: what rail 1's TCP probes measure, on both hosts.
        measured = self.wait_for_series(
            'rail:probe_throughput_bytes_per_second{kind="tcp_throughput", rail="rail1"}',
            len(HOSTS))
        slowest = min(float(s["value"][1]) for s in measured) * 8
        self.assertEqual(self.firing(), {}, "fires before any throttling:\n" +
                         self.diagnostics())
        # A twentieth of the slowest unthrottled measurement (within 100 Mbit/s..1 Gbit/s): the
        # ratio to rail 0 lands near 0.05, far below the rule's 0.5, even when the machine's
        # load halves rail 0's runs.
        rate_mbit = min(1000, max(100, int(slowest / 20 / 1e6)))
        print("rail1 tcp_throughput unthrottled: %s Gbit/s; throttling rail 1 to %d Mbit/s" % (
            ", ".join("%s %.2f" % (s["metric"]["instance"], float(s["value"][1]) * 8 / 1e9)
                      for s in measured), rate_mbit))

        throttled_at = time.time()
        self.lab.throttle(1, "%dmbit" % rate_mbit)
        try:
            throttled = time.monotonic()
            deadline = throttled + FIRE_TIMEOUT
            caused = []
            while time.monotonic() < deadline:
                firing = self.firing()
                self.assert_never_rail0(firing)
                # Only an alert that went pending after the throttle shows the throttle's effect
                # (one pending since before is the machine's load).
                caused = [key for key, active_at in firing.items() if active_at >= throttled_at]
                if caused:
                    break
                time.sleep(POLL)
            self.assertTrue(caused, "RailProbeThroughputLow did not fire for rail1 within %.0f s "
                                    "of throttling rail 1:\n%s" % (FIRE_TIMEOUT,
                                                                   self.diagnostics()))
            print("fired %.1f s after throttling: %s" % (time.monotonic() - throttled,
                                                         sorted(caused)))
            for alert in self.prometheus.alerts("RailProbeThroughputLow"):
                if alert["state"] == "firing":
                    self.assertEqual(alert["labels"]["reference"], "sibling_median", alert)
                    self.assertLess(float(alert["value"]), 0.5, alert)
            self.assert_failing_check_panels("probe_throughput", "rail1", deadline)
        finally:
            self.lab.unthrottle(1)

        unthrottled = time.monotonic()
        deadline = unthrottled + RESOLVE_TIMEOUT
        while time.monotonic() < deadline:
            firing = self.firing()
            self.assert_never_rail0(firing)
            if not firing:
                break
            time.sleep(POLL)
        self.assertEqual(firing, {}, "RailProbeThroughputLow still fires %.0f s after the "
                                     "throttle was removed:\n%s" % (RESOLVE_TIMEOUT,
                                                                    self.diagnostics()))
        print("resolved %.1f s after unthrottling" % (time.monotonic() - unthrottled))


if __name__ == "__main__":
    harness.main()
