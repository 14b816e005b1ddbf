#!/usr/bin/python3
"""The Grafana dashboards of dashboards/ are well-formed and query what rail_exporter exports.

* dashboards/generate.py writes exactly the committed JSON files;
* every dashboard has a uid, title, the rail_exporter tag, the datasource variable and the
  instance and rail query variables; panel ids are unique, grid positions lie inside the 24
  columns and do not overlap; every panel and every query names the ${datasource} variable;
* every query uses only $instance, $rail and $__rate_interval, selects every metric with
  instance=~"$instance" (the fleet records, which aggregate across hosts and have no instance,
  with rail=~"$rail" where they have a rail), reads only metrics rail_exporter exports (seen on
  the fixture trees, or named in src/) or deploy/prometheus/rail_rules.yml records, and matches
  only on labels those metrics have (hw counter names, probe kinds and RTT stats: values that
  exist);
* every expression parses (`promtool check rules` on a rule file of all of them), and promtool
  rejects a broken one.

Needs the rail_exporter binary (--binary) and Debian's promtool; no root.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboards  # noqa: E402
import harness  # noqa: E402

GENERATOR = os.path.join(dashboards.DASHBOARD_DIR, "generate.py")
RULES = os.path.join(dashboards.REPO, "deploy", "prometheus", "rail_rules.yml")
SRC = os.path.join(dashboards.REPO, "src")
RUN_TIMEOUT = 60.0

TARGET_LABELS = {"instance", "job"}
_SERIES = {"kind", "peer", "rail", "size", "streams"}
# Families only a probing agent (src/collectors/probe.cc) or the health checks export, so the
# fixture trees cannot show their labels.
PROBE_AND_HEALTH_LABELS = {
    "rail_probe_runs_total": _SERIES,
    "rail_probe_errors_total": _SERIES | {"reason"},
    "rail_probe_last_run_timestamp_seconds": _SERIES,
    "rail_probe_success": _SERIES,
    "rail_probe_throughput_bytes_per_second": _SERIES,
    "rail_probe_rail_throughput_bytes_per_second": _SERIES,
    "rail_probe_bytes": _SERIES,
    "rail_probe_duration_seconds": _SERIES,
    "rail_probe_rtt_run_seconds": _SERIES | {"stat"},
    "rail_probe_rtt_seconds_bucket": _SERIES | {"le"},
    "rail_probe_transport_info": _SERIES | {"transport", "device"},
    "rail_probe_rail_transmit_bytes": _SERIES,
    "rail_share_ratio": _SERIES,
    "rail_probe_cpu_seconds": _SERIES | {"side"},
    "rail_probe_memory_throughput_ratio": {"kind", "peer", "rail", "size", "memory",
                                           "memory_path"},
    "rail_fallback_tcp": {"rail", "peer"},
    "rail_multirail_striping_efficiency": {"peer"},
    "rail_multirail_striping_efficiency_withheld": {"peer", "reason"},
    "rail_probe_throughput_cv": _SERIES | {"memory", "memory_path"},
    "rail_probe_figures_withheld": _SERIES | {"memory", "memory_path", "invariant"},
    "rail_check_held_back": {"check", "rail", "peer", "reason"},
    "rail_multirail_not_striping": {"peer"},
    "rail_peer_info": {"peer", "agent_version", "ucx_version"},
    "rail_peer_version_mismatch": {"peer"},
    "rail_check_ok": {"check", "rail", "peer"},
    "rail_check_info": {"check", "rail", "peer", "reason"},
}
# Families only an agent with a `fleet` section exports (docs/metrics.md, issue 13).
FLEET_LABELS = {
    "rail_fleet_discovery_targets": {"source"},
    "rail_fleet_discovery_refreshes_total": {"source"},
    "rail_fleet_discovery_errors_total": {"source"},
    "rail_fleet_discovery_last_success_timestamp_seconds": {"source"},
    "rail_fleet_peers": set(),
    "rail_fleet_self_found": set(),
    "rail_fleet_plan_epoch": set(),
    "rail_fleet_plan_peers": {"rail"},
    "rail_fleet_plan_changes_total": set(),
    "rail_fleet_probe_series": set(),
    "rail_fleet_probe_series_budget": set(),
    "rail_fleet_rail_throughput_median_bytes_per_second": {"kind", "rail", "memory"},
    "rail_fleet_rail_rtt_worst_seconds": {"kind", "rail"},
    "rail_fleet_rail_peers": {"kind", "rail", "state"},
}
# Families only an agent whose rails' drivers answer DCB netlink exports (the fixture trees are
# read by an agent that asks this host's kernel, which knows none of their netdevs; issue 23).
QOS_LABELS = {
    "rail_qos_pfc_enabled": {"rail", "netdev", "priority"},
    "rail_qos_pfc_capability": {"rail", "netdev"},
    "rail_qos_pfc_requests_total": {"rail", "netdev", "priority"},
    "rail_qos_pfc_indications_total": {"rail", "netdev", "priority"},
    "rail_qos_trust_info": {"rail", "netdev", "trust"},
    "rail_qos_dscp_priority": {"rail", "netdev", "dscp"},
    "rail_qos_roce_ecn_enabled": {"rail", "netdev", "point", "priority"},
}
# Families a driver lists only in a state no fixture tree records: mlx5's 802.3x pause time
# ({rx,tx}_global_pause_duration) exists only while 802.3x pause is on, and the fixtures' NICs run
# PFC instead (docs/metrics.md).
NIC_STATE_LABELS = {
    "rail_nic_global_pause_seconds_total": {"rail", "netdev", "direction"},
}
# Families named here until src/ exports them: the health checks' (src/health, issue 4) and the
# fleet's (src/collectors/fleet.cc, issue 13). A metric of this set that src/ names is accepted
# from src/ like every other.
PENDING_IN_SRC = {"rail_check_ok", "rail_check_info"} | set(FLEET_LABELS)
RECORDED_LABELS = {  # deploy/prometheus/rail_rules.yml: what each recording rule keeps
    "rail:": {"rail"},
    "rail:probe_": _SERIES,
    "peer:rail_probe_": {"kind", "peer", "size", "streams"},
    "instance:": set(),
    "fleet_peer_rail:": {"cluster", "kind", "peer", "rail", "size", "streams"},
    "fleet_rail:": {"cluster", "kind", "rail", "size", "streams", "problem"},
    "fleet:": {"cluster"},
    "fleet_rail_switch:": {"cluster", "rail", "chassis_id", "system_name"},
    "fleet_switch:": {"cluster", "rail", "chassis_id", "system_name"},
}
# Records that aggregate across hosts: no instance label (job and cluster kept), so a query
# selects them by rail, not by instance.
ACROSS_HOSTS = ("fleet_peer_rail:", "fleet_rail:", "fleet:", "fleet_rail_switch:",
                "fleet_switch:")
PROBE_KINDS = {"ucx_throughput", "ucx_rtt", "multirail_capacity", "ucx_multirail_throughput",
               "tcp_throughput", "tcp_rtt"}
RTT_STATS = {"min", "p50", "p90", "p99", "p99.9", "max"}
_SELECTOR = re.compile(r"(?<![\w:.\"$])((?:rail|instance|peer|fleet)[_:][A-Za-z0-9_:]*)"
                       r"\s*(\{[^}]*\}|)")
_MATCHER = re.compile(r'([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_FAMILY_LITERAL = re.compile(r'"(rail_[a-z0-9_]+)"')


def recorded_names():
    with open(RULES, encoding="utf-8") as f:
        return set(re.findall(r"^\s*-\s*record:\s*(\S+)\s*$", f.read(), re.M))


def names_in_src():
    """Every "rail_..." string literal of src/ (metric family names among them)."""
    names = set()
    for root, _, files in os.walk(SRC):
        for name in files:
            if name.endswith((".cc", ".h")):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    names.update(_FAMILY_LITERAL.findall(f.read()))
    return names


def exported_by_fixtures():
    """{metric name: label names}, {"hw_counter": names} of rail_exporter on every fixture tree."""
    labels, values = {}, {"hw_counter": set()}
    for _, tree in harness.fixture_trees():
        with harness.RailExporter(harness.agent_tree_flags(tree)) as agent:
            status, body, _ = harness.http_get(agent.base_url + "/metrics")
        if status != 200:
            raise AssertionError("GET /metrics on %s: %d" % (tree, status))
        for name, samples in harness.parse_samples(body).items():
            for sample_labels in samples:
                labels.setdefault(name, set()).update(k for k, _ in sample_labels)
                if name == "rail_port_hw_events_total":
                    values["hw_counter"].update(v for k, v in sample_labels if k == "counter")
    return labels, values


class DashboardStructureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dashboards = dashboards.load_dashboards()
        cls.expressions = dashboards.dashboard_expressions()

    def panels(self):
        for name, dashboard in self.dashboards.items():
            for panel in dashboards.iter_panels(dashboard):
                yield name, panel

    def test_generated_files_are_current(self):
        result = subprocess.run([sys.executable, GENERATOR, "--check"], capture_output=True,
                                text=True, timeout=RUN_TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_five_dashboards_with_identity(self):
        self.assertEqual(sorted(self.dashboards), ["rail-fleet.json", "rail-host-overview.json",
                                                   "rail-probes.json", "rail-tcp-bond.json",
                                                   "rail-traffic.json"])
        uids = [d["uid"] for d in self.dashboards.values()]
        titles = [d["title"] for d in self.dashboards.values()]
        self.assertEqual(len(set(uids)), 5, uids)
        self.assertEqual(len(set(titles)), 5, titles)
        for name, d in self.dashboards.items():
            with self.subTest(dashboard=name):
                self.assertRegex(d["uid"], r"^[A-Za-z0-9_-]{8,40}$")
                self.assertIn("rail_exporter", d["tags"])
                self.assertIsInstance(d["schemaVersion"], int)
                self.assertTrue(d.get("description"))

    def test_variables(self):
        for name, d in self.dashboards.items():
            with self.subTest(dashboard=name):
                variables = {v["name"]: v for v in d["templating"]["list"]}
                self.assertEqual(list(variables), ["datasource", "instance", "rail"])
                self.assertEqual(variables["datasource"]["type"], "datasource")
                self.assertEqual(variables["datasource"]["query"], "prometheus")
                # Every agent exports its build info, with rails or without.
                queries = {"instance": "label_values(rail_exporter_build_info, instance)",
                           "rail": 'label_values(rail_info{instance=~"$instance"}, rail)'}
                for var, query in queries.items():
                    v = variables[var]
                    self.assertEqual(v["type"], "query")
                    self.assertEqual(v["datasource"], dashboards.DATASOURCE_REF)
                    self.assertEqual(v["query"]["query"], query)
                    self.assertEqual(v["allValue"], ".*")
                    self.assertTrue(v["multi"] and v["includeAll"])

    def test_panel_ids_and_grid(self):
        for name, d in self.dashboards.items():
            with self.subTest(dashboard=name):
                panels = list(dashboards.iter_panels(d))
                ids = [p["id"] for p in panels]
                self.assertEqual(len(ids), len(set(ids)), ids)
                cells = {}
                for p in panels:
                    g = p["gridPos"]
                    for key in ("h", "w", "x", "y"):
                        self.assertIsInstance(g[key], int, (p["title"], key))
                    self.assertTrue(g["w"] > 0 and g["h"] > 0 and g["x"] >= 0 and g["y"] >= 0)
                    self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
                    for x in range(g["x"], g["x"] + g["w"]):
                        for y in range(g["y"], g["y"] + g["h"]):
                            other = cells.setdefault((x, y), p["title"])
                            self.assertEqual(other, p["title"], "panels overlap at %d,%d" % (x, y))

    def test_every_panel_and_target_names_the_datasource_variable(self):
        count = 0
        for name, panel in self.panels():
            if panel["type"] == "row":
                continue
            with self.subTest(dashboard=name, panel=panel["title"]):
                self.assertEqual(panel["datasource"], dashboards.DATASOURCE_REF)
                self.assertTrue(panel["targets"])
                ref_ids = [t["refId"] for t in panel["targets"]]
                self.assertEqual(len(ref_ids), len(set(ref_ids)))
                for t in panel["targets"]:
                    self.assertEqual(t["datasource"], dashboards.DATASOURCE_REF)
                    self.assertTrue(t["expr"].strip())
                    count += 1
        self.assertEqual(count, len(self.expressions))

    def test_every_query_reads_existing_metrics_and_labels(self):
        known = self.known()
        for e in self.expressions:
            with self.subTest(dashboard=e.dashboard, panel=e.panel_title, ref=e.ref_id):
                self.assertEqual(query_problems(e.template, known), [], e.template)
                self.assertNotRegex(e.expr, r"\$[A-Za-z_{]", "left unsubstituted")

    def test_the_query_check_bites(self):
        """query_problems finds each kind of mistake it is meant to find."""
        known = self.known()
        good = ('sum by (instance, rail) (rate(rail_port_hw_events_total{instance=~"$instance", '
                'counter="np_cnp_sent"}[$__rate_interval]))')
        self.assertEqual(query_problems(good, known), [])
        self.assertEqual(query_problems('fleet_rail:sick_peers:count{rail=~"$rail"}', known), [])
        broken = {
            "unknown metric": good.replace("rail_port_hw_events_total", "rail_port_hw_event"),
            "unknown label": good.replace('counter="', 'countr="'),
            "unknown hw counter": good.replace("np_cnp_sent", "np_cnp_send"),
            "no instance matcher": good.replace('instance=~"$instance", ', ""),
            "other variable": good.replace("$__rate_interval", "$__interval"),
            "unknown kind": 'rail_probe_success{instance=~"$instance", kind="ucx_thruput"}',
            "unknown stat": 'rail_probe_rtt_run_seconds{instance=~"$instance", stat="p95"}',
            "fleet record by instance": 'fleet_rail:sick_peers:count{instance=~"$instance", '
                                        'rail=~"$rail"}',
            "fleet record without rail": "fleet_rail:sick_peers:count",
            "unknown fleet record": 'fleet_rail:sick_hosts:count{rail=~"$rail"}',
        }
        for mistake, expr in broken.items():
            with self.subTest(mistake=mistake):
                self.assertNotEqual(query_problems(expr, known), [], expr)

    def test_pending_metrics_are_really_pending(self):
        """Metrics listed in PROBE_AND_HEALTH_LABELS are named in src/ unless pending."""
        missing = set(PROBE_AND_HEALTH_LABELS) | set(FLEET_LABELS)
        missing = missing - names_in_src() - PENDING_IN_SRC
        missing.discard("rail_probe_rtt_seconds_bucket")
        self.assertEqual(missing, set())
        landed = PENDING_IN_SRC & names_in_src()
        if landed:
            print("note: %s now in src/; drop them from PENDING_IN_SRC" % sorted(landed))

    def test_promtool_parses_every_expression(self):
        for rate_interval in ("1m", "30s"):
            exprs = [e.expr for e in dashboards.dashboard_expressions(rate_interval=rate_interval)]
            ok, output = promtool_check(exprs)
            self.assertTrue(ok, output)
            self.assertIn("SUCCESS: %d rules found" % len(exprs), output)

    def test_promtool_rejects_a_broken_expression(self):
        ok, output = promtool_check(["sum by (rail (rate(rail_port_transmit_bytes_total[1m]))"])
        self.assertFalse(ok, output)

    def test_expression_needs(self):
        known = {"rdma", "bond", "probe", "probe_errors", "health", "failing_check", "traffic",
                 "fleet", "sick", "lldp"}
        for e in self.expressions:
            with self.subTest(dashboard=e.dashboard, panel=e.panel_title, ref=e.ref_id):
                plain = {n for n in e.needs if not n.startswith("probe:")}
                self.assertLessEqual(plain, known)
                self.assertLessEqual({n[6:] for n in e.needs - plain}, PROBE_KINDS)
        by_ref = {(e.dashboard, e.panel_title, e.ref_id): e.needs for e in self.expressions}
        # The host table's state query works for TCP rails too: `or` needs only what all need.
        self.assertEqual(by_ref[("rail-host-overview.json", "Rails", "B")], frozenset())
        self.assertIn("bond", by_ref[("rail-tcp-bond.json", "Bonds", "A")])
        self.assertEqual(by_ref[("rail-fleet.json", "Targets per discovery source", "A")],
                         frozenset({"fleet"}))
        self.assertEqual(by_ref[("rail-fleet.json", "Rails x switches", "A")],
                         frozenset({"lldp"}))

    _known = None

    @classmethod
    def known(cls):
        """Known metrics with their labels, and hw counter names (run the agent once)."""
        if cls._known is None:
            exported, values = exported_by_fixtures()
            src = names_in_src()
            labels = dict(exported)
            pending = dict(PROBE_AND_HEALTH_LABELS, **FLEET_LABELS, **QOS_LABELS,
                           **NIC_STATE_LABELS)
            for name, names in pending.items():
                family = name[:-len("_bucket")] if name.endswith("_bucket") else name
                if family in src or name in PENDING_IN_SRC:
                    labels.setdefault(name, names)
            for name in recorded_names():
                prefix = max((p for p in RECORDED_LABELS if name.startswith(p)), key=len)
                labels[name] = RECORDED_LABELS[prefix]
            cls._known = {"labels": labels, "hw_counter": values["hw_counter"]}
        return cls._known


def query_problems(template, known):
    """What is wrong with a dashboard query: variables, metric and label names, matcher values."""
    problems = []
    used = dashboards.variables_used(template)
    if not used <= set(dashboards.QUERY_VARIABLES):
        problems.append("variables other than $instance, $rail, $__rate_interval: %s"
                        % sorted(used - set(dashboards.QUERY_VARIABLES)))
    selectors = _SELECTOR.findall(template)
    if not selectors:
        problems.append("reads no rail_exporter metric")
    for metric, braces in selectors:
        if metric not in known["labels"]:
            problems.append("%s: not exported by the agent nor recorded by the rules" % metric)
            continue
        labels = known["labels"][metric]
        if metric.startswith(ACROSS_HOSTS):
            labels = labels | {"job"}
            if "rail" in labels and 'rail=~"$rail"' not in braces:
                problems.append("%s: across hosts, not limited to rail=~\"$rail\"" % metric)
        else:
            labels = labels | TARGET_LABELS
            if 'instance=~"$instance"' not in braces:
                problems.append("%s: not limited to instance=~\"$instance\"" % metric)
        for label, op, value in _MATCHER.findall(braces):
            if label not in labels:
                problems.append("%s has no label %s" % (metric, label))
            values = set(value.split("|")) if op in ("=", "=~") else set()
            allowed = {"kind": PROBE_KINDS, "stat": RTT_STATS}.get(label)
            if label == "counter" and metric == "rail_port_hw_events_total":
                allowed = known["hw_counter"]
            if allowed is not None and not values <= allowed:
                problems.append("%s{%s}: no such value %s" % (metric, label,
                                                             sorted(values - allowed)))
    return problems


def promtool_check(exprs):
    """(ok, output) of `promtool check rules` on a file with each expression as a rule."""
    lines = ["groups:", "  - name: dashboards", "    rules:"]
    for i, expr in enumerate(exprs):
        lines += ["      - record: dashboard:expression_%d:check" % i,
                  "        expr: %s" % json.dumps(expr)]  # a JSON string is a YAML scalar
    with tempfile.NamedTemporaryFile("w", suffix=".yml", prefix="rail-dashboards-") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        result = subprocess.run([harness.PROMTOOL, "check", "rules", f.name],
                                capture_output=True, text=True, timeout=RUN_TIMEOUT)
    return result.returncode == 0, result.stdout + result.stderr


if __name__ == "__main__":
    harness.main()
