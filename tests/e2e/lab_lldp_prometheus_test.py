#!/usr/bin/python3
"""Cabling across the fleet with a real Prometheus (issue 31, part 3).

Needs root (network namespaces, scripts/lab), lldpd (Debian's `lldpd`) and Debian's prometheus;
skips with a message otherwise.

A switched lab of three hosts with management links (`scripts/lab mgmt-up`, addresses
$RAIL_LAB_MGMT_NET.1 to .3, default 10.214.0, apart from the other labs' nets) and the lab's
leaves (`scripts/lab lldp-up`: leaf-rail0 and leaf-rail1 in the switch namespace, an lldpd in
every host). Each host runs an agent on its own lldpd's socket, listening on its management
address; Debian's prometheus in the root namespace scrapes the three every second and evaluates a
copy of deploy/prometheus/rail_rules.yml in which only the alerts' `for:` is rewritten (ALERT_FOR).

What it shows:
* fleet_rail_switch:hosts:count has 3 hosts of rail0 on leaf-rail0 and 3 of rail1 on leaf-rail1
  and nothing else, each leaf's rail (fleet_switch:majority_rail_hosts:count) is that rail, and
  the fleet dashboard's "Rails x switches" expression returns those two cells;
* RailMiscabled is silent on the correct fleet;
* after `scripts/lab recable a 1 0` (host a's rail 1 port moved to rail 0's bridge, whose leaf
  announces it), RailMiscabled fires for (a, rail1) alone, with system_name leaf-rail0, the
  chassis id host a's agent reads for it and expected_rail rail0; no other (instance, rail) is
  ever pending or firing; the description names no switch of rail1 (2 hosts left on leaf-rail1);
* after `recable a 1 1` it resolves (once leaf-rail0's announcement on that port expired: TTL 4 s).
"""

import os
import time
import unittest

import dashboards
import harness
import lab
import prometheus_server
from prometheus_server import series_text, start_scraping

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rllprom")
MGMT_NET = os.environ.get("RAIL_LAB_MGMT_NET", "10.214.0")
ALERT_FOR = "5s"  # every alert's `for:` in the test's copy of the rules (shipped: 15m)
LAB_HOSTS = ("a", "b", "c")
NEIGHBOR_WAIT = 30.0  # seconds for every host's rails to have their leaf in Prometheus
FIRE_TIMEOUT = 40.0  # seconds from the recabling to firing: scrape + rules (1 s each), for: 5 s
RESOLVE_TIMEOUT = 40.0  # seconds from putting it back to resolved: the old announcement's TTL 4 s
POLL = 0.5
PANEL = ("rail-fleet.json", "Rails x switches")


class LabLldpPrometheusTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    LAB_HOSTS = len(LAB_HOSTS)
    MGMT_NET = MGMT_NET
    TMP_PREFIX = "rail-lab-lldp-prom-"
    TOOLS = ("ip", "curl", "lldpd", "lldpcli")

    @classmethod
    def setUpClass(cls):
        if not os.access(prometheus_server.PROMETHEUS, os.X_OK):
            raise unittest.SkipTest("needs Debian's prometheus (%s)" % prometheus_server.PROMETHEUS)
        super().setUpClass()

    @classmethod
    def set_up_lab(cls):
        harness.require_executable(cls, harness.BINARY)
        cls.lab.script("lldp-up")
        cls.agents = {}
        for host in LAB_HOSTS:
            socket = cls.lab.script("lldp-socket", host).stdout.strip()
            config = cls.lab.write(host + ".yml", lab.rails_yaml(host, transport="tcp"))
            cls.agents[host] = cls.lab.start_agent(
                host, ["--config.file=" + config, "--collector.neighbor.lldpd-socket=" + socket],
                address=cls.lab.mgmt_address(host), name="rail_exporter@" + host)
        cls.prometheus = start_scraping(cls.lab, cls.agents, ALERT_FOR, "1s")
        started = time.monotonic()
        expected = cls.correct_counts()
        if not lab.wait_until(lambda: cls.counts() == expected, NEIGHBOR_WAIT, POLL):
            raise AssertionError("fleet_rail_switch:hosts:count is not %s within %.0f s:\n%s" % (
                expected, NEIGHBOR_WAIT,
                series_text(cls.prometheus.query("fleet_rail_switch:hosts:count"))))
        print("lab_lldp_prometheus: every rail on its leaf in Prometheus %.1f s after the agents "
              "started" % (time.monotonic() - started))

    @staticmethod
    def correct_counts():
        return {("rail0", "leaf-rail0"): 3.0, ("rail1", "leaf-rail1"): 3.0}

    @classmethod
    def counts(cls):
        return {(s["metric"]["rail"], s["metric"]["system_name"]): float(s["value"][1])
                for s in cls.prometheus.query("fleet_rail_switch:hosts:count")}

    def miscabled(self):
        """{(instance, rail): (state, labels)} of RailMiscabled now."""
        return {(a["labels"]["instance"], a["labels"]["rail"]): (a["state"], a["labels"])
                for a in self.prometheus.alerts("RailMiscabled")}

    def test_1_correct_fleet_counts_and_silence(self):
        self.assertEqual(self.counts(), self.correct_counts())
        majority = {(s["metric"]["system_name"], s["metric"]["rail"]): float(s["value"][1])
                    for s in self.prometheus.query("fleet_switch:majority_rail_hosts:count")}
        self.assertEqual(majority, {("leaf-rail0", "rail0"): 3.0, ("leaf-rail1", "rail1"): 3.0})
        (panel,) = [e for e in dashboards.dashboard_expressions(rate_interval="30s")
                    if (e.dashboard, e.panel_title) == PANEL]
        cells = {(s["metric"]["system_name"], s["metric"]["rail"]): float(s["value"][1])
                 for s in self.prometheus.query(panel.expr)}
        self.assertEqual(cells, {("leaf-rail0", "rail0"): 3.0, ("leaf-rail1", "rail1"): 3.0},
                         panel.expr)
        self.assertEqual(self.miscabled(), {})

    def test_2_recabled_rail_fires_alone_until_put_back(self):
        samples = self.agents["a"].samples()
        leaf0 = {labels["chassis_id"] for name, labels, _ in samples
                 if name == "rail_link_neighbor_info" and labels["system_name"] == "leaf-rail0"}
        self.assertEqual(len(leaf0), 1, leaf0)
        chassis = leaf0.pop()
        wrong = []

        def alerts():
            now = self.miscabled()
            wrong.extend(key for key in now if key != ("a", "rail1"))
            return now

        def firing():
            return alerts().get(("a", "rail1"), ("", {}))[0] == "firing"

        started = time.monotonic()
        self.lab.script("recable", "a", 1, 0)
        try:
            fired = lab.wait_until(firing, FIRE_TIMEOUT, POLL)
            to_fire = time.monotonic() - started
            print("lab_lldp_prometheus: RailMiscabled fired for (a, rail1) %.1f s after the "
                  "recabling (for: %s)" % (to_fire, ALERT_FOR))
            self.assertTrue(fired, "RailMiscabled did not fire for (a, rail1) within %.0f s: %s\n"
                            "fleet_rail_switch:hosts:count:\n%s" % (
                                FIRE_TIMEOUT, self.miscabled(), series_text(
                                    self.prometheus.query("fleet_rail_switch:hosts:count"))))
            state, labels = self.miscabled()[("a", "rail1")]
            self.assertEqual({k: v for k, v in labels.items() if k != "alertname"}, {
                "instance": "a", "job": prometheus_server.JOB, "rail": "rail1",
                "chassis_id": chassis, "system_name": "leaf-rail0", "expected_rail": "rail0",
                "severity": "warning"})
            (alert,) = self.prometheus.alerts("RailMiscabled")
            self.assertEqual(alert["annotations"]["summary"],
                             "Rail rail1 of a lands on leaf-rail0, a switch of rail0")
            # rail1 has 2 hosts on leaf-rail1 now, fewer than 3: no switch of rail1 to name.
            self.assertEqual(alert["annotations"]["description"], (
                "Rail rail1 of a lands on switch leaf-rail0 (chassis %s), where 3 hosts' rail0 "
                "lands, more than half of the switch's ports, for 15 minutes (LLDP, "
                "rail_link_neighbor_info). Its traffic goes through the spine, or to the wrong "
                "plane." % chassis))
        finally:
            back = time.monotonic()
            self.lab.script("recable", "a", 1, 1)
        resolved = lab.wait_until(lambda: not alerts(), RESOLVE_TIMEOUT, POLL)
        print("lab_lldp_prometheus: RailMiscabled resolved %.1f s after the rail was put back"
              % (time.monotonic() - back))
        self.assertTrue(resolved, "RailMiscabled still there %.0f s after recable a 1 1: %s" % (
            RESOLVE_TIMEOUT, self.miscabled()))
        self.assertEqual(sorted(set(wrong)), [], "RailMiscabled for another (instance, rail)")
        self.assertTrue(lab.wait_until(lambda: self.counts() == self.correct_counts(),
                                       RESOLVE_TIMEOUT, POLL), self.counts())


if __name__ == "__main__":
    harness.main()
