#!/usr/bin/python3
"""The landing page rendered by a real browser: Debian's Chromium, headless, loads "/" of an agent.

* On the spark-dual-rail fixture the DOM Chromium built must hold one row per rail with the state,
  speed and RoCE v2 GID, each fabric check's state (counters read from the tree's recorded
  `ethtool -S` dump, or not read), and the failing check of a configured rail whose device is
  missing.
* As root, in the network-namespace lab (scripts/lab), host a probes host b over both rails and
  the page must show each rail's last probe throughput, RTT p50/p99 and the transport UCX used.

Set RAIL_LANDING_SCREENSHOT=<path.png> to keep the lab page's screenshot (docs/landing_page.png is
made so). Skips with a message when /usr/bin/chromium is not installed (scripts/install-deps
installs it) and, for the lab part, when not root.
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
import lab  # noqa: E402

LAB_PREFIX = os.environ.get("RAIL_LANDING_LAB_PREFIX", "rlland")
PROBE_WAIT = 120.0  # seconds for every rail to have a successful bulk and ping-pong probe

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
           "probe throughput", "RTT p50", "RTT p99", "transport", "QoS", "switch port",
           "fabric", "failing checks"]


def chromium(test, tmp, *args, ns=None):
    """Runs headless Chromium (inside namespace `ns` if given) and returns what it printed."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    argv = [CHROMIUM] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile] + list(args)
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    result = subprocess.run(argv, capture_output=True, text=True, timeout=BROWSER_TIMEOUT,
                            stdin=subprocess.DEVNULL)
    test.assertEqual(result.returncode, 0, "chromium failed:\n" + result.stderr[-2000:])
    return result.stdout


def require_chromium(test):
    if not os.access(CHROMIUM, os.X_OK):
        test.skipTest("%s is not installed (Debian package chromium; scripts/install-deps "
                      "installs it)" % CHROMIUM)


class LandingPageBrowserTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        require_chromium(self)
        self.tmp = tempfile.mkdtemp(prefix="rail-landing-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        config = os.path.join(self.tmp, "rail.yml")
        with open(config, "w") as f:
            f.write(CONFIG)
        tree = os.path.join(harness.FIXTURES, "spark-dual-rail")
        self.agent = harness.RailExporter(harness.agent_tree_flags(tree) +
                                          ["--config.file=" + config])
        self.addCleanup(self.agent.stop)

    def chromium(self, *args):
        return chromium(self, self.tmp, *args)

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
        # DCB netlink asks this host's kernel, which has no netdev of the tree's names.
        self.assertEqual(rail0["QoS"], "no DCB (no_such_device)")
        # rail0's NIC has a recorded mlx5 dump: its fabric checks pass on flat counters or wait
        # for a second sample; rail1's has none (not read, never ok); rail9 has no NIC at all.
        self.assertRegex(rail0["fabric"], r"pause: (ok|no verdict)")
        self.assertRegex(rail0["fabric"], r"temp: ok")  # the tree's mlx5 hwmon sensor
        rail1 = dict(zip(COLUMNS, table.cells("rail1")))
        # (one word when its carrier_down_count has no verdict yet either)
        self.assertRegex(rail1["fabric"], r"^not read$|pause: not read")
        self.assertEqual(rail9["fabric"], "not read")

        # The same rails as the metrics: the page and /metrics never disagree on what a rail is.
        metrics = self.agent.scrape()
        rails_in_metrics = sorted(set(re.findall(r'^rail_info\{[^}]*rail="([^"]+)"', metrics,
                                                 re.M)))
        self.assertEqual(rails_in_metrics, sorted(table.rows))


@lab.needs_root
class LandingPageLabTest(unittest.TestCase):
    """Two agents in the lab; the page of host a after it probed host b over both rails."""

    RAILS = lab.RAILS

    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        require_chromium(self)
        self.lab = lab.Lab(LAB_PREFIX, tmp_prefix="rail-landing-lab-").up()
        self.addCleanup(self.lab.down)
        self.tmp = self.lab.tmp
        self.ns_a = self.lab.ns_a
        probes = ("  - {kind: tcp_throughput, duration: 1s, timeout: 3s, interval: 10s}\n"
                  "  - {kind: ucx_rtt, message_sizes: [8], duration: 1s, timeout: 4s,"
                  " interval: 5s}\n")
        config_b = self.lab.config("b.yml", "b", transport="tcp")
        config_a = self.lab.config("a.yml", "a", transport="tcp",
                                   peers={"b": lab.peer_address("b")}, probes=probes)
        self.lab.start_agent("b", ["--config.file=" + config_b, "--peer.insecure"])
        self.agent_a = self.lab.start_agent("a", ["--config.file=" + config_a, "--peer.insecure"])

    def wait_for_probes(self):
        wanted = {(kind, rail) for kind in ("tcp_throughput", "ucx_rtt") for rail in self.RAILS}

        def succeeded(samples):
            return {(labels.get("kind"), labels.get("rail")) for name, labels, value in samples
                    if name == "rail_probe_success" and value == 1.0}
        _, samples = self.agent_a.wait_for(lambda s: wanted <= succeeded(s), PROBE_WAIT)
        seen = succeeded(samples)
        if wanted <= seen:
            return
        self.fail("probes that never succeeded within %.0fs: %s\n%s" % (
            PROBE_WAIT, sorted(wanted - seen), self.agent_a.stderr_text()[-3000:]))

    def test_probe_figures_and_transport_per_rail(self):
        self.wait_for_probes()
        url = "http://127.0.0.1:%d/" % self.agent_a.port
        table = RailTable()
        table.feed(chromium(self, self.tmp, "--dump-dom", url, ns=self.ns_a))
        self.assertEqual(sorted(table.rows), sorted(self.RAILS))
        for rail, (netdev, _) in self.RAILS.items():
            row = dict(zip(COLUMNS, table.cells(rail)))
            self.assertEqual(row["netdev"], netdev)
            self.assertEqual(row["state"], "netdev up")
            self.assertRegex(row["probe throughput"], r"^\d+\.\d\d Gbit/s$", row)
            self.assertRegex(row["RTT p50"], r"^\d+\.\d+ (µs|ms)$", row)
            self.assertRegex(row["RTT p99"], r"^\d+\.\d+ (µs|ms)$", row)
            self.assertIn("tcp", row["transport"], row)
            self.assertEqual(row["QoS"], "no DCB (not_supported)", row)  # veth: no DCB
        path = os.environ.get("RAIL_LANDING_SCREENSHOT") or os.path.join(self.tmp, "landing.png")
        chromium(self, self.tmp, "--screenshot=" + os.path.abspath(path),
                 "--window-size=1500,460", url, ns=self.ns_a)
        with open(path, "rb") as f:
            png = f.read()
        self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"), "not a PNG")
        self.assertGreater(len(png), 10000, "a blank page compresses to almost nothing")


if __name__ == "__main__":
    harness.main()
