#!/usr/bin/python3
"""deploy/grafana/provisioning/ matches the install layout and the dashboards.

* The dashboards provider's path is where `cmake --install` (the layout the package and the
  image share, cmake/install.cmake) puts the dashboards: the test installs the build into a
  scratch DESTDIR with prefix /usr and finds every dashboard of dashboards/ there, and the
  provisioning files themselves under share/rail_exporter/grafana/provisioning/.
* The data source is one the dashboards can use: the dashboards choose theirs with a variable
  of type datasource whose query is the plugin type (prometheus), starting on the default data
  source of that type, and every query refers to that variable; so the provisioned data source
  has that type and is the default, and its timeInterval is the scrape interval of the example
  Prometheus configurations.

Grafana itself is not in Debian 12, so no Grafana loads these files here: the checks read them
with python3-yaml as Grafana's provisioning would (apiVersion 1, providers/datasources).
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PROVISIONING = os.path.join(harness.REPO, "deploy", "grafana", "provisioning")
DASHBOARDS = os.path.join(harness.REPO, "dashboards")
PROMETHEUS_CONFIGS = os.path.join(harness.REPO, "deploy", "prometheus")
PREFIX = "/usr"
INSTALL_TIMEOUT = 120.0  # seconds for cmake --install


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def dashboard_files():
    return sorted(glob.glob(os.path.join(DASHBOARDS, "*.json")))


def walk(node):
    """Every dict inside a JSON value."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


class ProvisioningTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = load(os.path.join(PROVISIONING, "dashboards", "rail_exporter.yml"))
        cls.datasources = load(os.path.join(PROVISIONING, "datasources", "prometheus.yml"))

    def test_dashboard_provider_path_is_the_installed_dashboards(self):
        build_dir = harness.OPTIONS.get("build-dir")
        if not build_dir:
            self.skipTest("needs --build-dir (tests/e2e/CMakeLists.txt passes it)")
        self.assertEqual(self.provider["apiVersion"], 1)
        (provider,) = self.provider["providers"]
        self.assertEqual(provider["type"], "file")
        path = provider["options"]["path"]
        self.assertTrue(path.startswith(PREFIX + "/"), path)
        with tempfile.TemporaryDirectory() as destdir:
            result = subprocess.run(["cmake", "--install", build_dir, "--prefix", PREFIX],
                                    env=dict(os.environ, DESTDIR=destdir), capture_output=True,
                                    text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            installed = destdir + path
            self.assertEqual(sorted(os.listdir(installed)),
                             [os.path.basename(f) for f in dashboard_files()])
            provisioning = os.path.join(destdir + PREFIX, "share", "rail_exporter", "grafana",
                                        "provisioning")
            for relative in ("dashboards/rail_exporter.yml", "datasources/prometheus.yml"):
                with self.subTest(file=relative):
                    self.assertTrue(os.path.isfile(os.path.join(provisioning, relative)))

    def test_datasource_is_what_the_dashboards_query(self):
        self.assertEqual(self.datasources["apiVersion"], 1)
        (source,) = self.datasources["datasources"]
        self.assertIs(source["isDefault"], True)
        self.assertTrue(source["uid"] and source["name"])
        self.assertTrue(dashboard_files())
        for path in dashboard_files():
            with self.subTest(dashboard=os.path.basename(path)):
                with open(path, encoding="utf-8") as f:
                    dashboard = json.load(f)
                variables = [v for v in dashboard["templating"]["list"]
                             if v["type"] == "datasource"]
                self.assertEqual(len(variables), 1)
                variable = variables[0]
                self.assertEqual(variable["query"], source["type"])
                self.assertFalse(variable.get("current"),
                                 "the variable starts on the default data source")
                reference = {"type": source["type"], "uid": "${%s}" % variable["name"]}
                references = [node["datasource"] for node in walk(dashboard)
                              if isinstance(node.get("datasource"), dict)]
                self.assertTrue(references)
                for ref in references:
                    if ref.get("type") == "grafana":  # Grafana's own annotations
                        continue
                    self.assertEqual(ref, reference)

    def test_time_interval_is_the_scrape_interval(self):
        (source,) = self.datasources["datasources"]
        intervals = {load(path)["global"]["scrape_interval"]
                     for path in glob.glob(os.path.join(PROMETHEUS_CONFIGS, "*.example.yml"))}
        self.assertEqual(intervals, {source["jsonData"]["timeInterval"]})


if __name__ == "__main__":
    harness.main(path_options=["--build-dir"])
