#!/usr/bin/python3
"""The landing page rendered by a real browser: Debian's Chromium, headless, loads "/" of an agent
serving the spark-dual-rail fixture and the DOM it built must hold one row per rail with the
state, speed and RoCE v2 GID, and the failing check of a configured rail whose device is missing.

Set RAIL_LANDING_SCREENSHOT=<path.png> to keep the screenshot (docs/landing_page.png is made so).
Skips with a message when /usr/bin/chromium is not installed (scripts/install-deps installs it).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CHROMIUM = os.environ.get("RAIL_CHROMIUM", "/usr/bin/chromium")
BROWSER_TIMEOUT = 90.0  # seconds for one headless Chromium run on a loaded 2-core machine
# The flags that keep Chromium off the network (closed here) and out of the user's profile.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars"]

CONFIG = """
rails:
  - {name: rail0, device: rocep1s0f0, expected_rate_gbps: 100}
  - {name: rail1, device: rocep1s0f1, expected_rate_gbps: 100}
  - {name: rail9, device: mlx5_9}
"""


class RailTable(HTMLParser):
    """The cells of every <tr class="rail"> of the page, by rail."""

    def __init__(self):
        super().__init__()
        self.rows = {}
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and attrs.get("class") == "rail":
            self._row = []
            self.rows[attrs.get("data-rail")] = self._row
        elif tag == "td" and self._row is not None:
            self._cell = []
            self._row.append(self._cell)

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None
        if tag == "td":
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def cells(self, rail):
        return ["".join(cell).strip() for cell in self.rows[rail]]


COLUMNS = ["rail", "device", "netdev", "state", "speed", "IPv4", "RoCE v2 GID",
           "probe throughput", "RTT p50", "RTT p99", "transport", "failing checks"]


class LandingPageBrowserTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        if not os.access(CHROMIUM, os.X_OK):
            self.skipTest("%s is not installed (Debian package chromium; scripts/install-deps "
                          "installs it)" % CHROMIUM)
        self.tmp = tempfile.mkdtemp(prefix="rail-landing-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        config = os.path.join(self.tmp, "rail.yml")
        with open(config, "w") as f:
            f.write(CONFIG)
        tree = os.path.join(harness.FIXTURES, "spark-dual-rail")
        self.agent = harness.RailExporter(harness.tree_flags(tree) + ["--config.file=" + config])
        self.addCleanup(self.agent.stop)

    def chromium(self, *args):
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.tmp)
        argv = [CHROMIUM] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile] + list(args)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=BROWSER_TIMEOUT)
        self.assertEqual(result.returncode, 0, "chromium failed:\n" + result.stderr[-2000:])
        return result.stdout

    def test_rail_rows_in_the_dom_chromium_built(self):
        dom = self.chromium("--dump-dom", self.agent.base_url + "/")
        self.assertIn("<title>rail_exporter</title>", dom)
        table = RailTable()
        table.feed(dom)
        self.assertEqual(sorted(table.rows), ["rail0", "rail1", "rail9"], dom)
        for rail in ("rail0", "rail1", "rail9"):
            self.assertEqual(len(table.cells(rail)), len(COLUMNS), table.cells(rail))
        rail0 = dict(zip(COLUMNS, table.cells("rail0")))
        self.assertEqual(rail0["device"], "rocep1s0f0:1")
        self.assertEqual(rail0["netdev"], "enp1s0f0np0")
        self.assertEqual(rail0["state"], "active")
        self.assertRegex(rail0["speed"], r"^\d+ Gb/sec")
        self.assertEqual(rail0["IPv4"], "192.168.100.11")
        self.assertRegex(rail0["RoCE v2 GID"], r"^\d+: 0000:.*:ffff:c0a8:640b \(RoCE v2\)$")
        rail9 = dict(zip(COLUMNS, table.cells("rail9")))
        self.assertEqual(rail9["state"], "missing")
        self.assertIn("port_active", rail9["failing checks"])
        self.assertEqual(rail0["failing checks"], "none")

        # The same rails as the metrics: the page and /metrics never disagree on what a rail is.
        metrics = self.agent.scrape()
        rails_in_metrics = sorted(set(re.findall(r'^rail_info\{[^}]*rail="([^"]+)"', metrics,
                                                 re.M)))
        self.assertEqual(rails_in_metrics, sorted(table.rows))

    def test_screenshot_renders(self):
        path = os.environ.get("RAIL_LANDING_SCREENSHOT") or os.path.join(self.tmp, "landing.png")
        self.chromium("--screenshot=" + os.path.abspath(path), "--window-size=1500,520",
                      self.agent.base_url + "/")
        with open(path, "rb") as f:
            png = f.read()
        self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"), "not a PNG")
        self.assertGreater(len(png), 10000, "a blank page compresses to almost nothing")


if __name__ == "__main__":
    harness.main()
