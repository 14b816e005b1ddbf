#!/usr/bin/python3
"""The process contract of rail_exporter: exit codes and one-line errors, --version, the landing
page, the telemetry path, collector and device flags, JSON logs, a host without RDMA devices and
robustness against garbage on the listening socket."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPARK = "spark-dual-rail"
EXIT_TIMEOUT = 8.0  # seconds for a process that must refuse to start


class CliTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        self.spark = os.path.join(harness.FIXTURES, SPARK)
        if not os.path.isdir(os.path.join(self.spark, "sys")):
            self.fail("fixture tree %s is missing" % self.spark)
        self.flags = harness.tree_flags(self.spark)
        self.tmp = tempfile.mkdtemp(prefix="rail-e2e-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def start(self, *extra):
        agent = harness.RailExporter(self.flags + list(extra))
        self.addCleanup(agent.stop)
        return agent

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_one_line_failure(self, args, *must_contain):
        """rail_exporter exits non-zero with exactly one (non-log) line on stderr."""
        try:
            result = harness.run_to_exit(self.flags + ["--web.listen-address=127.0.0.1:0"] + args,
                                         timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired as expired:
            stderr = expired.stderr or b""
            if isinstance(stderr, bytes):
                stderr = stderr.decode("utf-8", "replace")
            self.fail("%s: still running after %.0fs (it should have refused to start):\n%s" % (
                args, EXIT_TIMEOUT, stderr))
        self.assertNotEqual(result.returncode, 0, "%s: exit 0\n%s" % (args, result.stderr))
        lines = harness.non_log_lines(result.stderr)
        self.assertEqual(len(lines), 1, "%s: expected a one-line error on stderr, got:\n%s" % (
            args, result.stderr))
        for text in must_contain:
            self.assertIn(text, lines[0], "%s: error does not name %r" % (args, text))
        return lines[0]

    # --- errors that end the process -------------------------------------------------------

    def test_bad_flag(self):
        for args, names in [(["--no-such-flag"], ["--no-such-flag"]),
                            (["--collector.nonexistent"], ["--collector.nonexistent"]),
                            (["--log.level=loud"], ["--log.level"]),
                            (["--log.format=xml"], ["--log.format"]),
                            (["--web.telemetry-path=metrics"], ["metrics"]),
                            (["--collector.infiniband.device-include=("], ["device-include"]),
                            (["--collector.gid.entries=some"], ["--collector.gid.entries"])]:
            with self.subTest(args=args):
                self.assert_one_line_failure(args, *names)

    def test_config_file_unreadable(self):
        cases = [("missing", os.path.join(self.tmp, "missing.yml"))]
        directory = os.path.join(self.tmp, "a-directory.yml")
        os.mkdir(directory)
        cases.append(("directory", directory))
        if os.geteuid() != 0:  # root reads a mode-000 file anyway
            private = self.write("private.yml", "rails: []\n")
            os.chmod(private, 0)
            cases.append(("mode 000", private))
        for what, path in cases:
            with self.subTest(config=what):
                self.assert_one_line_failure(["--config.file=" + path], path)

    def test_config_file_malformed(self):
        cases = [
            ("syntax.yml", "rails: [\n  - name: a\n", []),
            ("unknown-key.yml", "rails:\n  - name: a\n    colour: blue\n", ["rails[0].colour"]),
            ("bad-port.yml", "rails:\n  - name: a\n    device: x\n    port: abc\n",
             ["rails[0].port"]),
            ("bad-bool.yml", "discover_rails: perhaps\n", ["discover_rails"]),
            ("top-key.yml", "railz: []\n", ["railz"]),
        ]
        for name, text, keys in cases:
            with self.subTest(config=name):
                path = self.write(name, text)
                self.assert_one_line_failure(["--config.file=" + path], path, *keys)

    def test_port_taken(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            result = harness.run_to_exit(self.flags + ["--web.listen-address=127.0.0.1:%d" % port])
        self.assertNotEqual(result.returncode, 0, result.stderr)
        lines = harness.non_log_lines(result.stderr)
        self.assertEqual(len(lines), 1, "expected a one-line error:\n" + result.stderr)
        self.assertIn(str(port), lines[0])

    def test_version(self):
        result = harness.run_to_exit(["--version"])
        self.assertEqual(result.returncode, 0, result.stderr)
        match = re.match(r"rail_exporter (\d+\.\d+\.\d+\S*) ", result.stdout)
        self.assertTrue(match, "unexpected --version output: %r" % result.stdout)
        self.assertEqual(len(result.stdout.strip().splitlines()), 1, result.stdout)
        samples = harness.parse_samples(self.start().scrape())
        versions = {dict(l)["version"] for l in samples["rail_exporter_build_info"]}
        self.assertEqual(versions, {match.group(1)})
        # The UCX version comes from the probe worker, which the agent asks without loading UCX.
        ucx = re.search(r"UCX (\S+)\)$", result.stdout.strip())
        self.assertTrue(ucx and ucx.group(1), result.stdout)
        ucx_versions = {dict(l)["ucx_version"] for l in samples["rail_exporter_build_info"]}
        self.assertEqual(ucx_versions, {ucx.group(1)})

    def test_agent_does_not_link_ucx(self):
        # A fatal error inside UCX must end the probe worker only (include/rail/probe/worker.h):
        # the agent's own executable depends on no UCX library, the worker beside it does.
        def needed(path):
            dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                                     check=True).stdout
            return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
        worker = os.path.join(os.path.dirname(harness.BINARY), "rail_exporter_probe_worker")
        agent_libraries = needed(harness.BINARY)
        self.assertTrue(agent_libraries)
        self.assertEqual([lib for lib in agent_libraries if re.match(r"libuc[pstm]\.", lib)], [],
                         agent_libraries)
        self.assertIn("libucp.so.0", needed(worker))

    # --- the endpoint ----------------------------------------------------------------------

    def test_landing_page(self):
        agent = self.start()
        status, body, headers = agent.get("/")
        self.assertEqual(status, 200)
        self.assertIn("text/html", headers.get("Content-Type", ""))
        self.assertRegex(body, r"(?i)<html")
        self.assertIn('href="/metrics"', body)
        rails = {dict(l)["rail"] for l in harness.parse_samples(agent.scrape())["rail_info"]}
        self.assertTrue(rails)
        rows = re.findall(r'<tr class="rail"[^>]*>(.*?)</tr>', body, re.S)
        self.assertEqual(len(rows), len(rails), body)
        for rail in rails:
            self.assertTrue(any("<td>%s</td>" % rail in row for row in rows), rail)

    def test_custom_telemetry_path(self):
        agent = self.start("--web.telemetry-path=/rail-metrics")
        body = agent.scrape("/rail-metrics")
        self.assertIn("rail_port_transmit_bytes_total", body)
        status, _, _ = agent.get("/metrics")
        self.assertEqual(status, 404)
        _, landing, _ = agent.get("/")
        self.assertIn('href="/rail-metrics"', landing)

    def test_no_collector_gid(self):
        with_gid = harness.parse_samples(self.start().scrape())
        self.assertIn("rail_gid_info", with_gid)
        without = harness.parse_samples(self.start("--no-collector.gid").scrape())
        self.assertNotIn("rail_gid_info", without)
        self.assertIn("rail_port_transmit_bytes_total", without)

    def test_gid_entries(self):
        # By default rail_gid_info holds the RoCE v2 entries with an IPv4 address (this Ethernet
        # tree's link-local and RoCE v1 entries are counted, not published); "all" adds the rest.
        default = harness.parse_samples(self.start().scrape())
        every = harness.parse_samples(self.start("--collector.gid.entries=all").scrape())
        published, complete = default["rail_gid_info"], every["rail_gid_info"]
        for labels in published:
            entry = dict(labels)
            self.assertEqual(entry["type"], "RoCE v2", entry)
            self.assertNotEqual(entry["ipv4"], "", entry)
        self.assertLess(set(published), set(complete))
        self.assertEqual({k for k in complete if dict(k)["type"] == "RoCE v2" and dict(k)["ipv4"]},
                         set(published))
        for counts in (default["rail_gid_entries"], every["rail_gid_entries"]):
            self.assertEqual(sum(counts.values()), len(complete), "every entry is counted")

    def test_disable_defaults(self):
        # As in node_exporter: every collector off, then only those named on.
        samples = harness.parse_samples(
            self.start("--collector.disable-defaults", "--collector.gid").scrape())
        self.assertIn("rail_gid_info", samples)
        for family in ("rail_port_transmit_bytes_total", "rail_info", "rail_netdev_mtu_bytes",
                       "rail_check_ok", "rail_exporter_build_info"):
            self.assertNotIn(family, samples)
        ran = {dict(labels)["collector"] for labels in
               samples.get("rail_exporter_scrape_collector_success", {})}
        self.assertEqual(ran, {"gid"})

    def test_device_exclude(self):
        excluded = "rocep1s0f1"
        plain = harness.parse_samples(self.start().scrape())
        self.assertTrue(self.series_with(plain, "device", excluded))
        samples = harness.parse_samples(
            self.start("--collector.infiniband.device-exclude=" + excluded).scrape())
        self.assertEqual(self.series_with(samples, "device", excluded), [])
        self.assertEqual(self.series_with(samples, "rail", excluded + ":1"), [])
        kept = {dict(l)["device"] for l in samples["rail_port_transmit_bytes_total"]}
        self.assertEqual(kept, {"rocep1s0f0", "roceP2p1s0f0", "roceP2p1s0f1"})

    @staticmethod
    def series_with(samples, label, value):
        return ["%s%s" % (name, dict(labels)) for name, series in samples.items()
                for labels in series if dict(labels).get(label) == value]

    def test_json_logs(self):
        agent = self.start("--log.format=json", "--log.level=debug")
        agent.scrape()
        agent.stop()
        lines = [l for l in agent.stderr_lines() if l.strip()]
        self.assertGreaterEqual(len(lines), 2, lines)
        for line in lines:
            record = json.loads(line)  # every line, not only the first
            self.assertIsInstance(record, dict)
            for key in ("ts", "level", "msg"):
                self.assertIn(key, record, line)
        self.assertTrue(any("listening on port" in json.loads(l)["msg"] for l in lines))

    def test_host_without_rdma(self):
        root = os.path.join(self.tmp, "no-rdma")
        shutil.copytree(os.path.join(self.spark, "sys", "class", "net"),
                        os.path.join(root, "sys", "class", "net"), symlinks=True)
        netdevs = sorted(n for n in os.listdir(os.path.join(root, "sys", "class", "net"))
                         if os.path.isdir(os.path.join(root, "sys", "class", "net", n))
                         and n != "lo")
        agent = harness.RailExporter(harness.tree_flags(root))
        self.addCleanup(agent.stop)
        self.assertRegex(agent.stderr_text(), r"(?i)no RDMA device")
        samples = harness.parse_samples(agent.scrape())
        for name in ("rail_netdev_up", "rail_netdev_mtu_bytes", "rail_netdev_carrier"):
            self.assertEqual(sorted(dict(l)["netdev"] for l in samples.get(name, {})), netdevs,
                             name)
        self.assertNotIn("rail_port_transmit_bytes_total", samples)
        status, landing, _ = agent.get("/")
        self.assertEqual(status, 200)
        self.assertRegex(landing, r"(?i)no RDMA device")
        self.assertTrue(agent.alive())

    def test_missing_peer_secret(self):
        """A package ships no secret: the agent starts, says how to place one, serves its
        inventory and exchanges nothing with peers."""
        secret = os.path.join(self.tmp, "secret")
        config = self.write("agent.yml", "responder:\n  listen_address: 127.0.0.1:%d\n"
                                         "  secret_file: %s\n" % (harness.free_port(), secret))
        agent = self.start("--config.file=" + config)
        log = agent.stderr_text()
        self.assertIn("responder.secret_file: secret file %s: cannot open" % secret, log)
        self.assertIn("runs without peer traffic", log)
        self.assertIn("openssl rand -hex 32", log)
        self.assertNotIn("responder listening", log)
        samples = harness.parse_samples(agent.scrape())
        self.assertEqual(samples["rail_exporter_peer_secret_loaded"], {frozenset(): 0.0})
        self.assertIn("rail_port_transmit_bytes_total", samples)
        self.assertEqual(agent.get("/-/ready")[0], 200)

        # Once placed, a restart loads it.
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("cluster-secret\n")
        agent.stop()
        agent = self.start("--config.file=" + config)
        samples = harness.parse_samples(agent.scrape())
        self.assertEqual(samples["rail_exporter_peer_secret_loaded"], {frozenset(): 1.0})
        self.assertIn("responder listening", agent.stderr_text())

    def test_health_paths(self):
        agent = self.start()
        for path in ("/-/healthy", "/-/ready"):
            status, body, _ = agent.get(path)
            self.assertEqual((status, body), (200, "OK\n"), path)

    def test_survives_garbage(self):
        agent = self.start()
        payloads = [
            b"\x00\xff\xfe garbage \x01\x02\r\n\r\n",
            b"GET /metrics HTTP/9.9\r\nHost: \x00\r\n\r\n",
            b"GET " + b"A" * 70000 + b" HTTP/1.1\r\n\r\n",
            b"POST /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),  # a TLS hello
            b"GET / HTTP/1.1\r\n",  # an unfinished request, then the client goes away
            b"",  # connect and close
        ]
        for payload in payloads:
            with socket.create_connection(("127.0.0.1", agent.port), timeout=5) as s:
                try:
                    s.sendall(payload)
                    s.shutdown(socket.SHUT_WR)
                    s.settimeout(5)
                    while s.recv(65536):
                        pass
                except OSError:
                    pass  # the server may reset the connection; it must stay up
            self.assertTrue(agent.alive(), "died after %r" % payload[:40])
        self.assertIn("rail_port_transmit_bytes_total", agent.scrape())
        self.assertEqual(agent.stop(), 0, "no clean exit on SIGTERM:\n" + agent.stderr_text())


if __name__ == "__main__":
    harness.main()
