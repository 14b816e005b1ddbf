#!/usr/bin/python3
"""deploy/prometheus/scrape_*.example.yml: Prometheus accepts them, and their relabelling gives the
targets the labels the rules and dashboards expect.

* `promtool check config` (Debian's prometheus) accepts each file as shipped, and with each of
  its `# >>> optional: NAME` blocks turned on (TLS, basic auth, the pod role); the broken copies
  below must fail. Debian's Prometheus 2.42 is built without Kubernetes service discovery
  (promtool refuses `kubernetes_sd_configs`), so where it is, the Kubernetes file is checked with
  its `kubernetes_sd_configs` replaced by an empty static list and the rest as written; a
  promtool that knows Kubernetes discovery checks the file as it is.
* A real Prometheus (Debian's) runs each file's relabelling on targets given to it through
  file_sd with the labels each discovery would give (the `__meta_kubernetes_*` labels of the
  EndpointSlice and pod roles, the agents' fleet file) and its targets API shows the result:
  job rail_exporter, instance without the port, node from the pod's node, only port metrics of
  the Service rail-exporter kept. The ServiceMonitor's relabelings (deploy/kubernetes) run the
  same way after what the operator puts before them.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import prometheus_server  # noqa: E402

DEPLOY = os.path.join(harness.REPO, "deploy", "prometheus")
RULES = os.path.join(DEPLOY, "rail_rules.yml")
SERVICE_MONITOR = os.path.join(harness.REPO, "deploy", "kubernetes", "servicemonitor.yaml")
CONFIGS = ["scrape_static.example.yml", "scrape_file_sd.example.yml",
           "scrape_kubernetes.example.yml"]
JOB = prometheus_server.JOB
RUN_TIMEOUT = 60.0  # seconds for one promtool run
TARGETS_TIMEOUT = 20.0  # seconds for Prometheus to list the file_sd targets
OPTIONAL_BEGIN = re.compile(r"^\s*# >>> optional: (?P<name>[a-z-]+)\s*$")
OPTIONAL_END = re.compile(r"^\s*# <<< optional: (?P<name>[a-z-]+)\s*$")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def optional_blocks(text):
    return sorted({m.group("name") for m in map(OPTIONAL_BEGIN.match, text.splitlines()) if m})


def with_blocks(text, names):
    """text with the optional blocks `names` uncommented: one '# ' less on each of their lines."""
    out, active = [], None
    for line in text.splitlines(keepends=True):
        begin, end = OPTIONAL_BEGIN.match(line), OPTIONAL_END.match(line)
        if begin:
            active = begin.group("name")
        elif end:
            active = None
        elif active in names:
            line = re.sub(r"^(\s*)# ?", r"\1", line, count=1)
        out.append(line)
    return "".join(out)


def promtool(*args, cwd=None):
    if not os.access(harness.PROMTOOL, os.X_OK):
        raise AssertionError("%s is not installed (Debian package prometheus; "
                             "scripts/install-deps installs it)" % harness.PROMTOOL)
    result = subprocess.run([harness.PROMTOOL] + list(args), capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, cwd=cwd, stdin=subprocess.DEVNULL)
    return result.returncode, (result.stdout + result.stderr).strip()


def promtool_knows_kubernetes_sd(workdir):
    path = os.path.join(workdir, "kubernetes_sd_probe.yml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("scrape_configs:\n  - job_name: x\n    kubernetes_sd_configs:\n"
                "      - role: endpointslice\n")
    code, output = promtool("check", "config", "--syntax-only", path)
    if code != 0 and "kubernetes_sd_configs not found" not in output:
        raise AssertionError("promtool failed on a minimal Kubernetes config:\n" + output)
    return code == 0


def without_kubernetes_sd(config):
    """config with each kubernetes_sd_configs replaced by an empty static list."""
    for job in config["scrape_configs"]:
        if job.pop("kubernetes_sd_configs", None) is not None:
            job["static_configs"] = [{"targets": []}]
    return config


class PromtoolCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="rail-scrape-configs-")
        shutil.copy(RULES, cls.workdir)
        cls.kubernetes_sd = promtool_knows_kubernetes_sd(cls.workdir)
        print("promtool knows Kubernetes service discovery" if cls.kubernetes_sd else
              "promtool is built without Kubernetes service discovery (Debian): "
              "kubernetes_sd_configs are replaced by an empty static list before checking")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def checkable(self, name, text):
        """A path promtool can check for config text: in the work dir, beside rail_rules.yml."""
        if not self.kubernetes_sd and "kubernetes_sd_configs" in text:
            text = yaml.safe_dump(without_kubernetes_sd(yaml.safe_load(text)))
        path = os.path.join(self.workdir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def check(self, path, *flags):
        with tempfile.TemporaryDirectory() as elsewhere:  # rule_files: relative to the file
            return promtool("check", "config", *flags, path, cwd=elsewhere)

    def test_every_config_as_shipped(self):
        self.assertEqual(sorted(CONFIGS), sorted(f for f in os.listdir(DEPLOY)
                                                 if f.startswith("scrape_")))
        for name in CONFIGS:
            with self.subTest(config=name):
                text = read(os.path.join(DEPLOY, name))
                config = yaml.safe_load(text)
                self.assertEqual(config["rule_files"], ["rail_rules.yml"])
                self.assertEqual([job["job_name"] for job in config["scrape_configs"]], [JOB])
                code, output = self.check(self.checkable(name, text))
                print("%s: promtool exit %d\n%s" % (name, code, output))
                self.assertEqual(code, 0, output)
                self.assertIn("1 rule files found", output)

    def test_optional_blocks_turned_on(self):
        # TLS and basic auth name files of the Prometheus host: --syntax-only checks all but
        # their presence.
        for name in CONFIGS:
            text = read(os.path.join(DEPLOY, name))
            blocks = optional_blocks(text)
            self.assertTrue({"tls", "basic-auth"} <= set(blocks), (name, blocks))
            for variant in [[b] for b in blocks] + [blocks]:
                with self.subTest(config=name, blocks=variant):
                    on = with_blocks(text, variant)
                    self.assertNotEqual(on, text)
                    config = yaml.safe_load(on)
                    path = self.checkable("%s-%s.yml" % (name, "+".join(variant)), on)
                    code, output = self.check(path, "--syntax-only")
                    self.assertEqual(code, 0, output)
                    jobs = config["scrape_configs"]
                    if "tls" in variant:
                        self.assertEqual(jobs[0]["scheme"], "https")
                    if "basic-auth" in variant:
                        self.assertIn("password_file", jobs[0]["basic_auth"])

    def test_broken_configs_fail(self):
        text = read(os.path.join(DEPLOY, "scrape_static.example.yml"))
        broken = {
            "bad_regex": text.replace(r"regex: '(.+):\d+'", "regex: '(.+:\\d+'"),
            "interval_unparsable": text.replace("scrape_interval: 15s", "scrape_interval: 15"),
            "unknown_key": text.replace("metrics_path:", "metric_path:"),
            "auth_twice": with_blocks(text, ["basic-auth"]).replace(
                "    relabel_configs:",
                "    authorization: {credentials: x}\n    relabel_configs:"),
        }
        for variant, body in broken.items():
            with self.subTest(variant=variant):
                self.assertNotEqual(body, text)
                code, _ = self.check(self.checkable("broken-%s.yml" % variant, body),
                                     "--syntax-only")
                self.assertNotEqual(code, 0, "promtool accepted the broken copy")


# Every target address is on loopback: the Prometheus of RelabelTest may scrape one once (nothing
# answers there), and no test sends anything off this machine.
NODES = (("gpu-node-1", "127.0.1.11"), ("gpu-node-2", "127.0.1.12"))
STATIC_HOSTS = ("127.0.2.1", "127.0.2.2")  # in place of the shipped example's host names


# The labels Prometheus's Kubernetes discovery gives the EndpointSlice role's targets of the
# Service rail-exporter (two nodes, two ports each) and of another Service's endpoint; the pod
# role's for the pods' two container ports.
def endpointslice_targets():
    groups = []
    for node, ip in NODES:
        for port_name, port in (("metrics", 9840), ("responder", 9841)):
            groups.append({"targets": ["%s:%d" % (ip, port)], "labels": {
                "__meta_kubernetes_namespace": "rail-exporter",
                "__meta_kubernetes_service_name": "rail-exporter",
                "__meta_kubernetes_endpointslice_port_name": port_name,
                "__meta_kubernetes_endpointslice_port": str(port),
                "__meta_kubernetes_pod_name": "rail-exporter-" + node[-1],
                "__meta_kubernetes_pod_node_name": node}})
    groups.append({"targets": [NODES[0][1] + ":9100"], "labels": {
        "__meta_kubernetes_namespace": "rail-exporter",
        "__meta_kubernetes_service_name": "node-exporter",
        "__meta_kubernetes_endpointslice_port_name": "metrics",
        "__meta_kubernetes_pod_node_name": "gpu-node-1"}})
    return groups


def pod_targets():
    groups = []
    for node, ip in NODES:
        for port_name, port in (("metrics", 9840), ("responder", 9841)):
            groups.append({"targets": ["%s:%d" % (ip, port)], "labels": {
                "__meta_kubernetes_namespace": "rail-exporter",
                "__meta_kubernetes_pod_label_app_kubernetes_io_name": "rail-exporter",
                "__meta_kubernetes_pod_container_port_name": port_name,
                "__meta_kubernetes_pod_node_name": node}})
    return groups


def service_monitor_relabel_configs():
    """What the operator would generate for servicemonitor.yaml's endpoint, as far as labels go:
    its own keep on the Service and port, job from the Service's name, then the endpoint's
    relabelings as written (camelCase keys to Prometheus's)."""
    (monitor,) = [d for d in yaml.safe_load_all(read(SERVICE_MONITOR)) if d]
    (endpoint,) = monitor["spec"]["endpoints"]
    operator = [
        {"source_labels": ["__meta_kubernetes_service_name",
                           "__meta_kubernetes_endpointslice_port_name"],
         "regex": "rail-exporter;" + endpoint["port"], "action": "keep"},
        {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"},
    ]
    keys = {"sourceLabels": "source_labels", "targetLabel": "target_label"}
    return operator + [{keys.get(k, k): v for k, v in r.items()}
                       for r in endpoint["relabelings"]]


class RelabelTest(unittest.TestCase):
    """Each file's relabel_configs on a real Prometheus, its targets fed through file_sd."""

    @classmethod
    def setUpClass(cls):
        prometheus_server.require_prometheus()
        cls.workdir = tempfile.mkdtemp(prefix="rail-relabel-")
        cls.jobs = {}

        def job(name, relabel_configs, groups):
            targets = os.path.join(cls.workdir, name + ".json")
            with open(targets, "w", encoding="utf-8") as f:
                json.dump(groups, f)
            cls.jobs[name] = {"job_name": name, "scrape_interval": "1h",
                              "file_sd_configs": [{"files": [targets]}],
                              "relabel_configs": relabel_configs}

        def shipped(name, block=None):
            text = read(os.path.join(DEPLOY, name))
            if block:
                text = with_blocks(text, [block])
            return yaml.safe_load(text)["scrape_configs"]

        static = shipped("scrape_static.example.yml")[0]
        groups = static["static_configs"]
        shipped_targets = [target for group in groups for target in group["targets"]]
        assert len(shipped_targets) == len(STATIC_HOSTS), shipped_targets
        addresses = iter(STATIC_HOSTS)
        for group in groups:
            group["targets"] = [next(addresses) + target[target.rindex(":"):]
                                for target in group["targets"]]
        job("static", static["relabel_configs"], groups)
        file_sd = shipped("scrape_file_sd.example.yml")[0]
        job("file_sd", file_sd["relabel_configs"], [
            {"targets": ["127.0.1.1:9841", "[::1]:9841"], "labels": {"cluster": "c1"}}])
        kubernetes, pods = shipped("scrape_kubernetes.example.yml", "pods")
        job("endpointslice", kubernetes["relabel_configs"], endpointslice_targets())
        job("pod", pods["relabel_configs"], pod_targets())
        job("servicemonitor", service_monitor_relabel_configs(), endpointslice_targets())
        config = os.path.join(cls.workdir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            yaml.safe_dump({"scrape_configs": list(cls.jobs.values())}, f)
        cls.server = prometheus_server.Prometheus(config, os.path.join(cls.workdir, "data"))
        cls.targets = cls.wait_for_targets()

    @classmethod
    def wait_for_targets(cls):
        deadline = time.monotonic() + TARGETS_TIMEOUT
        while True:
            targets = cls.server.api("targets", state="any")
            active = {}
            for target in targets["activeTargets"]:
                active.setdefault(target["scrapePool"], []).append(target)
            if set(active) >= set(cls.jobs) or time.monotonic() > deadline:
                dropped = {}
                for target in targets["droppedTargets"]:
                    pool = target["discoveredLabels"]["job"]
                    dropped[pool] = dropped.get(pool, 0) + 1
                return active, dropped
            time.sleep(0.2)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def labels(self, job):
        active, _ = self.targets
        return sorted(((t["labels"], t["scrapeUrl"]) for t in active.get(job, [])),
                      key=lambda target: target[1])

    def assert_targets(self, job, expected, dropped=0):
        self.assertEqual(self.labels(job), sorted(expected, key=lambda target: target[1]),
                         "targets of job %s" % job)
        self.assertEqual(self.targets[1].get(job, 0), dropped)

    def test_static(self):
        self.assert_targets("static", [
            ({"instance": host, "job": "static", "cluster": "lab"},
             "http://%s:9840/metrics" % host)
            for host in STATIC_HOSTS])

    def test_file_sd_scrapes_the_web_port_of_the_fleet_file(self):
        self.assert_targets("file_sd", [
            ({"instance": "127.0.1.1", "job": "file_sd", "cluster": "c1"},
             "http://127.0.1.1:9840/metrics"),
            ({"instance": "[::1]", "job": "file_sd", "cluster": "c1"},
             "http://[::1]:9840/metrics")])

    def kubernetes_expected(self, job):
        return [({"instance": ip, "job": job, "node": node}, "http://%s:9840/metrics" % ip)
                for node, ip in NODES]

    def test_endpointslice_keeps_only_the_metrics_port_of_the_service(self):
        self.assert_targets("endpointslice", self.kubernetes_expected("endpointslice"),
                            dropped=3)

    def test_pod_role(self):
        self.assert_targets("pod", self.kubernetes_expected(JOB), dropped=2)

    def test_service_monitor_relabelings(self):
        self.assert_targets("servicemonitor", self.kubernetes_expected(JOB), dropped=3)


if __name__ == "__main__":
    harness.main()
